"""A throw-away PostgreSQL server for one benchmark run, or the one named by an env variable.

`AUDIENCEFILTER_BENCH_PG_URL` wins when set. Otherwise, when the Debian server binaries are
installed, a cluster is made in a temporary folder owned by `postgres` (`initdb` and `pg_ctl`
refuse to run as root), started on a free port bound to 127.0.0.1 with its socket in that
folder, and stopped by its PID at the end. The database uses the ICU `und` locale so that
`lower()` folds like Python's `str.lower()`. Durability settings are off: the data is thrown
away, and loading a million rows should not wait on fsync; query execution is as configured
by default.
"""

from __future__ import annotations

import contextlib
import glob
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

URL_VARIABLE = "AUDIENCEFILTER_BENCH_PG_URL"


@contextlib.contextmanager
def postgres() -> Iterator[tuple[str | None, str]]:
    """Yields `(url, note)`: a URL to use, or None and the reason there is none."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield url, f"the server at {URL_VARIABLE}"
        return
    binaries = sorted(glob.glob("/usr/lib/postgresql/*/bin/pg_ctl"))
    if not binaries:
        yield None, f"no PostgreSQL binaries found and {URL_VARIABLE} is not set"
        return
    if os.geteuid() != 0 and not _is_postgres_user():
        yield None, "starting a throw-away server needs root (runuser -u postgres)"
        return
    server = _Server(Path(binaries[-1]).parent)
    try:
        server.start()
    except (OSError, subprocess.SubprocessError) as exc:
        server.stop()
        yield None, f"the throw-away server did not start: {exc}"
        return
    try:
        yield server.url, f"a throw-away server (PID {server.pid})"
    finally:
        server.stop()


def _is_postgres_user() -> bool:
    import pwd

    return pwd.getpwuid(os.geteuid()).pw_name == "postgres"


class _Server:
    def __init__(self, bin_dir: Path) -> None:
        self.bin = bin_dir
        self.root = Path(tempfile.mkdtemp(prefix="af-bench-pg-"))
        self.port = _free_port()
        self.pid: int | None = None
        self.url = f"postgresql://postgres@127.0.0.1:{self.port}/bench"

    def _as_postgres(self, *command: str) -> None:
        prefix = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        subprocess.run([*prefix, *command], check=True, capture_output=True, timeout=120)

    def start(self) -> None:
        shutil.chown(self.root, "postgres", "postgres")
        data = self.root / "data"
        self._as_postgres(
            str(self.bin / "initdb"), "-D", str(data), "-U", "postgres", "--auth=trust",
            "--encoding=UTF8", "--locale=C.UTF-8",
        )  # fmt: skip
        options = (
            f"-c listen_addresses=127.0.0.1 -p {self.port} -k {self.root} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off "
            "-c shared_buffers=256MB"
        )
        self._as_postgres(
            str(self.bin / "pg_ctl"), "-D", str(data), "-o", options,
            "-l", str(self.root / "log"), "-w", "-t", "60", "start",
        )  # fmt: skip
        self.pid = int((data / "postmaster.pid").read_text().split()[0])
        import psycopg

        admin = f"postgresql://postgres@127.0.0.1:{self.port}/postgres"
        with psycopg.connect(admin, autocommit=True) as connection:
            connection.execute(
                "CREATE DATABASE bench TEMPLATE template0 ENCODING 'UTF8' "
                "LOCALE_PROVIDER icu ICU_LOCALE 'und' LOCALE 'C.UTF-8'"
            )

    def stop(self) -> None:
        if self.pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGINT)  # "fast" shutdown
            deadline = time.monotonic() + 30
            while time.monotonic() < deadline and _alive(self.pid):
                time.sleep(0.1)
            self.pid = None
        shutil.rmtree(self.root, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
