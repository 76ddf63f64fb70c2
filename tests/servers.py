"""Real throw-away database servers for the test session: PostgreSQL, MariaDB and Redis.

Each server starts lazily, the first time a test asks for it, once per session, on a free port of
127.0.0.1, with its data in a fresh temporary folder. It is stopped by PID when the session ends,
and from an `atexit` hook if the session dies first. Binaries come from the Debian packages
(`postgresql`, `mariadb-server`, `redis-server`); PostgreSQL's `initdb` and `pg_ctl` refuse to
run as root, so as root they run as `postgres` through `runuser`.

Fixtures (session scope):
- `pg_url`: a SQLAlchemy URL (`postgresql+psycopg://`) of a database created with ICU collation
  (`LOCALE_PROVIDER icu ICU_LOCALE 'und'`), whose `lower()` folds case like Python's;
- `pg_database`: a factory; each call creates another fresh such database and returns its URL;
- `pg_settings_database`: a factory of one database per setting of `PG_SETTINGS` (ICU, and the
  distribution's libc locales);
- `mysql_url`: a `mysql+pymysql://` URL of a utf8mb4 database;
- `redis_url`: a `redis://` URL.

`AUDIENCEFILTER_TEST_PG_URL`, `AUDIENCEFILTER_TEST_MYSQL_URL` and `AUDIENCEFILTER_TEST_REDIS_URL`
point the fixtures at servers that already run instead (fresh databases are created on the given
PostgreSQL and MariaDB servers, through the URL's credentials). When a server's binaries are
missing the tests that need it are skipped, unless `AUDIENCEFILTER_REQUIRE_SERVERS=1` (set by CI),
which turns the skip into a failure.
"""

from __future__ import annotations

import atexit
import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.waiting import HANG_GUARD, WaitAbandoned, wait_until

# A server is waited for until it answers, as long as its process lives (`tests/waiting.py`):
# no start-up deadline, which a loaded machine would miss. Stopping escalates to SIGKILL after
# STOP_GRACE: a step of cleaning up, never a failure.
STOP_GRACE = 15.0
ICU_DATABASE = "TEMPLATE template0 LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'"


def _locales() -> set[str]:
    """The locales the machine has (`locale -a`), spelled as `CREATE DATABASE` takes them."""
    try:
        listed = subprocess.run(["locale", "-a"], capture_output=True, text=True, check=False)
    except OSError:
        return set()
    return {name.replace(".utf8", ".UTF-8") for name in listed.stdout.split()}


PG_SETTINGS: dict[str, str] = {
    "ICU und": ICU_DATABASE,
    "libc C.UTF-8": "TEMPLATE template0 LOCALE_PROVIDER libc LOCALE 'C.UTF-8'",
    "libc en_US.UTF-8": "TEMPLATE template0 LOCALE_PROVIDER libc LOCALE 'en_US.UTF-8'",
}
"""The database settings a PostgreSQL database is created with, by name: ICU's root locale
(the default of `pg_database`), and the distribution's defaults users have (libc `C.UTF-8`,
and `en_US.UTF-8` where the machine has that locale: `pg_setting_missing`)."""


def pg_setting_missing(name: str) -> str | None:
    """Why the machine cannot create a database with the settings `name`, or None: a libc
    locale it does not have (`locale -a`; none is installed for the tests)."""
    locale = name.removeprefix("libc ")
    if locale == name or locale in _locales():
        return None
    return f"the machine has no locale {locale} (locale -a)"


class ServerMissing(Exception):
    """The binaries of a server are not installed."""


class ServerFailed(Exception):
    """A server was found but did not start; the message carries its log."""


@dataclass
class Server:
    """A running server: how to reach it, and what to clean up."""

    name: str
    url: str
    pid: int
    folder: Path | None
    kill_signal: int = signal.SIGTERM
    process: subprocess.Popen[bytes] | None = None
    stopped: bool = field(default=False)

    def signal(self) -> None:
        """Ask the server to stop (servers shut down in parallel; each takes a moment)."""
        with contextlib.suppress(ProcessLookupError):
            os.kill(self.pid, self.kill_signal)

    def stop(self) -> None:
        """Stop the server by PID, killing it if it lingers, and remove its data."""
        if self.stopped:
            return
        self.stopped = True
        _stop_pid(self.pid, self.kill_signal, self.process)
        if self.folder is not None:
            _remove_apart(self.folder)


def _remove_apart(folder: Path) -> None:
    """Remove a stopped server's data folder in a process of its own, which the session does not
    wait for. A PostgreSQL cluster holds every database the session made (hundreds in the
    service's tests, a few megabytes each), and its removal was the last thing a worker waited
    for: 2.8 of the 4.4 s of stopping the servers after twenty databases, 23 and 47 s of the last
    teardowns of `tests/service` on two workers. The shell starts `rm` in the background and ends
    at once, so no child is left unwaited; without `rm` the folder is removed here."""
    rm = shutil.which("rm")
    if rm is None:
        shutil.rmtree(folder, ignore_errors=True)
        return
    subprocess.run(
        ["sh", "-c", '"$0" -rf -- "$1" >/dev/null 2>&1 &', rm, str(folder)],
        stdin=subprocess.DEVNULL,
        check=False,
        start_new_session=True,
    )


_servers: dict[str, Server] = {}
_failures: dict[str, str] = {}


def stop_all() -> None:
    running = [server for server in _servers.values() if not server.stopped]
    for server in running:
        server.signal()
    for server in running:
        server.stop()
    _servers.clear()


atexit.register(stop_all)


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def listening(port: int) -> bool:
    """Whether something accepts connections on 127.0.0.1:`port` now."""
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
        return True
    return False


def wait_for_port(port: int, alive: Callable[[], bool]) -> bool:
    """Wait until `port` listens (True), or the server's process ends first (False)."""
    try:
        return wait_until(lambda: listening(port), f"a server on port {port}", alive=alive)
    except WaitAbandoned:
        return listening(port)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_pid(pid: int, sig: int, process: subprocess.Popen[bytes] | None) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, sig)
    deadline = time.monotonic() + STOP_GRACE
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            return
        if process is None and not _alive(pid):
            return
        time.sleep(0.02)
    with contextlib.suppress(ProcessLookupError):
        os.kill(pid, signal.SIGKILL)
    if process is not None:
        process.wait(timeout=HANG_GUARD)


def _read_pid(path: Path) -> int:
    """The pid a server wrote once it started (it is written by a process already running)."""

    def pid() -> int | None:
        with contextlib.suppress(OSError, ValueError, IndexError):
            return int(path.read_text().split()[0])
        return None

    try:
        return wait_until(pid, f"the pid file {path}")
    except WaitAbandoned as exc:
        raise ServerFailed(str(exc)) from None


def _tail(path: Path, lines: int = 30) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return "(no log)"


def _run(command: list[str], cwd: Path) -> None:
    done = subprocess.run(command, cwd=cwd, capture_output=True, text=True, timeout=HANG_GUARD)
    if done.returncode != 0:
        raise ServerFailed(f"{' '.join(command)} failed:\n{done.stdout}\n{done.stderr}")


# ---- PostgreSQL ------------------------------------------------------------------------------


def _postgres_bin() -> Path:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"),
        key=lambda path: int(Path(path).parts[-3]) if Path(path).parts[-3].isdigit() else 0,
    )
    if not found:
        raise ServerMissing("PostgreSQL is not installed (no /usr/lib/postgresql/*/bin/initdb)")
    return Path(found[-1]).parent


def _as_postgres(command: list[str]) -> list[str]:
    if os.geteuid() != 0:
        return command
    if shutil.which("runuser") is None:
        raise ServerMissing("running as root needs `runuser` to start PostgreSQL as postgres")
    return ["runuser", "-u", "postgres", "--", *command]


def start_postgres(*, jit: bool = True, settings: Mapping[str, str] | None = None) -> Server:
    """Start a throw-away PostgreSQL cluster; its URL names the `postgres` database. `jit`:
    whether it compiles costly queries, as a default server does where it has its provider
    (the benchmarks and drills keep that; the tests' cluster runs without,
    `start_postgres_for_tests`). `settings`: more server settings, by name (a benchmark's
    `shared_preload_libraries`, say)."""
    bindir = _postgres_bin()
    folder = Path(tempfile.mkdtemp(prefix="audiencefilter-pg-"))
    data, sockets, log = folder / "data", folder / "sockets", folder / "server.log"
    sockets.mkdir()
    if os.geteuid() == 0:
        shutil.chown(folder, "postgres", "postgres")
        shutil.chown(sockets, "postgres", "postgres")
    port = free_port()
    try:
        _run(
            _as_postgres(
                [
                    str(bindir / "initdb"),
                    "-D",
                    str(data),
                    "-U",
                    "postgres",
                    "--auth=trust",
                    "--encoding=UTF8",
                    "--locale=C.UTF-8",
                    "--no-sync",
                    "--no-instructions",
                ]
            ),
            folder,
        )
        # Durability is off: nothing here outlives the run.
        options = (
            f"-c listen_addresses=127.0.0.1 -p {port} -k {sockets} -c fsync=off "
            "-c synchronous_commit=off -c full_page_writes=off -c max_connections=200"
        )
        if not jit:
            options += " -c jit=off"
        for name, value in (settings or {}).items():
            options += f" -c {name}={value}"
        _run(
            _as_postgres(
                [str(bindir / "pg_ctl"), "-D", str(data), "-l", str(log), "-o", options, "-w"]
                + ["-t", str(int(HANG_GUARD)), "start"]
            ),
            folder,
        )
        pid = _read_pid(data / "postmaster.pid")
    except ServerFailed as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ServerFailed(f"{exc}\n{_tail(log)}") from None
    url = f"postgresql+psycopg://postgres@127.0.0.1:{port}/postgres"
    # SIGQUIT is PostgreSQL's immediate shutdown: no checkpoint, fine for a throw-away cluster
    # (SIGTERM would even wait for every client to leave).
    return Server("postgres", url, pid, folder, kill_signal=signal.SIGQUIT)


def create_pg_database(admin_url: str, settings: str = ICU_DATABASE) -> str:
    """Create a fresh database (ICU by default, else `settings`, one of `PG_SETTINGS`) on the
    server of `admin_url`; return its URL."""
    import psycopg
    from sqlalchemy.engine import make_url

    url = make_url(admin_url).set(drivername="postgresql+psycopg")
    name = f"af_{uuid.uuid4().hex[:16]}"
    conninfo = url.set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'CREATE DATABASE "{name}" {settings}')  # type: ignore[arg-type]
    return url.set(database=name).render_as_string(hide_password=False)


def start_postgres_for_tests() -> Server:
    """The tests' PostgreSQL cluster: without JIT compilation. The suite's statements (many
    filters to a query over a few rows) are costed high enough to be compiled, and compiling
    was most of their time; it never changes an answer (tests/test_postgres_jit.py asks the
    conformance data with JIT forced on)."""
    return start_postgres(jit=False)


def pg_ctl(server: Server, *args: str) -> None:
    """Run `pg_ctl ARGS` on a cluster from `start_postgres`, keeping `server.pid` current.

    The drills stop and restart the cluster under load. `pg_ctl restart` reuses the options the
    cluster was started with (from `postmaster.opts`), even when the server is already down.
    """
    if server.folder is None:
        raise ServerFailed("pg_ctl needs a cluster started by start_postgres")
    data, log = server.folder / "data", server.folder / "server.log"
    command = [str(_postgres_bin() / "pg_ctl"), "-D", str(data), "-l", str(log), *args]
    _run(_as_postgres(command), server.folder)
    if (data / "postmaster.pid").exists():
        server.pid = _read_pid(data / "postmaster.pid")


# ---- MariaDB ---------------------------------------------------------------------------------


def start_mariadb() -> Server:
    """Start a throw-away MariaDB server; its URL names no database."""
    install, daemon = shutil.which("mariadb-install-db"), shutil.which("mariadbd")
    daemon = daemon or ("/usr/sbin/mariadbd" if Path("/usr/sbin/mariadbd").exists() else None)
    if install is None or daemon is None:
        raise ServerMissing("MariaDB is not installed (mariadb-install-db / mariadbd not found)")
    folder = Path(tempfile.mkdtemp(prefix="audiencefilter-mariadb-"))
    data, log = folder / "data", folder / "server.log"
    user = "root" if os.geteuid() == 0 else os.environ.get("USER", "nobody")
    port = free_port()
    try:
        _run(
            [
                install,
                "--no-defaults",
                f"--user={user}",
                f"--datadir={data}",
                "--auth-root-authentication-method=normal",
                "--skip-test-db",
            ],
            folder,
        )
        with log.open("wb") as sink:
            process = subprocess.Popen(
                [
                    daemon,
                    "--no-defaults",
                    f"--user={user}",
                    f"--datadir={data}",
                    "--bind-address=127.0.0.1",
                    f"--port={port}",
                    f"--socket={folder / 'mysqld.sock'}",
                    f"--pid-file={folder / 'mysqld.pid'}",
                    "--skip-name-resolve",
                    "--skip-log-bin",
                    "--innodb-flush-log-at-trx-commit=0",
                    "--character-set-server=utf8mb4",
                    "--collation-server=utf8mb4_unicode_ci",
                ],
                stdout=sink,
                stderr=subprocess.STDOUT,
                cwd=folder,
                start_new_session=True,
            )
        if not wait_for_port(port, alive=lambda: process.poll() is None):
            process.kill()
            process.wait()
            raise ServerFailed(f"mariadbd did not listen on {port}")
    except ServerFailed as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ServerFailed(f"{exc}\n{_tail(log)}") from None
    url = f"mysql+pymysql://root@127.0.0.1:{port}/"
    return Server("mariadb", url, process.pid, folder, process=process)


def create_mysql_database(admin_url: str) -> str:
    """Create a fresh utf8mb4 database on the server of `admin_url`; return its URL."""
    import pymysql
    from sqlalchemy.engine import make_url

    url = make_url(admin_url)
    name = f"af_{uuid.uuid4().hex[:16]}"

    def connected() -> Any:
        try:
            return pymysql.connect(
                host=url.host or "127.0.0.1",
                port=url.port or 3306,
                user=url.username or "root",
                password=url.password or "",
            )
        except pymysql.err.OperationalError:
            return None

    connection = wait_until(connected, f"MariaDB to take connections at {url.host}:{url.port}")
    with connection, connection.cursor() as cursor:
        cursor.execute(f"CREATE DATABASE `{name}` CHARACTER SET utf8mb4 COLLATE utf8mb4_unicode_ci")
    return url.set(
        drivername="mysql+pymysql", database=name, query={"charset": "utf8mb4"}
    ).render_as_string(hide_password=False)


# ---- Redis -----------------------------------------------------------------------------------


def _redis_ping(port: int) -> bool:
    with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5) as s:
        s.sendall(b"PING\r\n")
        return s.recv(64).startswith(b"+PONG")
    return False


def start_redis() -> Server:
    binary = shutil.which("redis-server") or (
        "/usr/bin/redis-server" if Path("/usr/bin/redis-server").exists() else None
    )
    if binary is None:
        raise ServerMissing("Redis is not installed (redis-server not found)")
    folder = Path(tempfile.mkdtemp(prefix="audiencefilter-redis-"))
    port, pidfile, log = free_port(), folder / "redis.pid", folder / "redis.log"
    try:
        _run(
            [
                binary,
                "--bind",
                "127.0.0.1",
                "--port",
                str(port),
                "--protected-mode",
                "yes",
                "--daemonize",
                "yes",
                "--pidfile",
                str(pidfile),
                "--logfile",
                str(log),
                "--dir",
                str(folder),
                "--save",
                "",
                "--appendonly",
                "no",
            ],
            folder,
        )
        pid = _read_pid(pidfile)
        try:
            wait_until(
                lambda: _redis_ping(port), f"redis-server on {port}", alive=lambda: _alive(pid)
            )
        except WaitAbandoned as exc:
            _stop_pid(pid, signal.SIGTERM, None)
            raise ServerFailed(str(exc)) from None
    except ServerFailed as exc:
        shutil.rmtree(folder, ignore_errors=True)
        raise ServerFailed(f"{exc}\n{_tail(log)}") from None
    return Server("redis", f"redis://127.0.0.1:{port}/0", pid, folder)


# ---- fixtures --------------------------------------------------------------------------------


def _unavailable(reason: str) -> None:
    if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason} (AUDIENCEFILTER_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason)


def server_url(name: str, env: str, start: Callable[[], Server]) -> str:
    """The URL of server `name`: from `env`, or from a server started now (once per session)."""
    if os.environ.get(env):
        return os.environ[env]
    if name in _failures:
        _unavailable(_failures[name])
    if name not in _servers:
        try:
            _servers[name] = start()
        except ServerMissing as exc:
            _failures[name] = str(exc)
            _unavailable(str(exc))
        except ServerFailed as exc:
            _failures[name] = f"{name} did not start: {exc}"
            pytest.fail(_failures[name], pytrace=False)
    return _servers[name].url


@pytest.fixture(scope="session")
def _servers_stopped() -> Iterator[None]:
    yield
    stop_all()


@pytest.fixture(scope="session")
def pg_database(_servers_stopped: None) -> Callable[[], str]:
    """A factory: each call creates a fresh ICU PostgreSQL database and returns its URL."""
    admin = server_url("postgres", "AUDIENCEFILTER_TEST_PG_URL", start_postgres_for_tests)
    return lambda: create_pg_database(admin)


@pytest.fixture(scope="session")
def pg_settings_database(_servers_stopped: None) -> Callable[[str], str]:
    """A factory: the URL of a database created with the settings named (`PG_SETTINGS`),
    one per name for the session."""
    admin = server_url("postgres", "AUDIENCEFILTER_TEST_PG_URL", start_postgres_for_tests)
    made: dict[str, str] = {}

    def database(name: str) -> str:
        if name not in made:
            made[name] = create_pg_database(admin, PG_SETTINGS[name])
        return made[name]

    return database


@pytest.fixture(scope="session")
def pg_url(pg_database: Callable[[], str]) -> str:
    """The URL of one ICU PostgreSQL database shared by the session."""
    return pg_database()


@pytest.fixture(scope="session")
def mysql_url(_servers_stopped: None) -> str:
    """The URL of a utf8mb4 MariaDB/MySQL database shared by the session."""
    admin = server_url("mariadb", "AUDIENCEFILTER_TEST_MYSQL_URL", start_mariadb)
    return create_mysql_database(admin)


@pytest.fixture(scope="session")
def redis_url(_servers_stopped: None) -> str:
    """The URL of a Redis server for the session."""
    return server_url("redis", "AUDIENCEFILTER_TEST_REDIS_URL", start_redis)
