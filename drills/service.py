"""The service under drill: a `serve` child process on 127.0.0.1, its keys, lists and seed data.

The child runs in a session of its own, so a drill can SIGKILL its whole process group (the
uvicorn supervisor and its workers) the way an out-of-memory killer or a power cut would, and
start it again on the same database. Its output goes to a log file that survives the restart:
drills grep it for the warnings they expect and for the exceptions behind a failure.

Command-line steps (`migrate`, `keys create`) go through the test suite's `run_cli`, with the
same clean environment as the server.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

from tests.servers import free_port
from tests.service.live import cli_env, run_cli

START_TIMEOUT = 240.0
STOP_TIMEOUT = 15.0
WORKER_STOP = 15.0
# A limit no drill reaches, for drills that are not about rate limits.
UNLIMITED = "100000000/minute"


class ServiceFailed(Exception):
    """The service did not start, or a setup call did not answer as expected."""


def service_env(database_url: str, settings: Mapping[str, str] | None = None) -> dict[str, str]:
    """The child's environment; setting names are given without the `AUDIENCEFILTER_` prefix."""
    extra = {f"AUDIENCEFILTER_{name}": value for name, value in (settings or {}).items()}
    return cli_env(AUDIENCEFILTER_DATABASE_URL=database_url, **extra)


@contextlib.contextmanager
def workers(
    database_url: str, count: int, settings: Mapping[str, str] | None = None
) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`count` `worker` processes on `database_url`, stopped with SIGTERM at the end (killed
    if one outlives `WORKER_STOP`): the one way drills and benchmarks start workers."""
    env = service_env(database_url, settings)
    command = [sys.executable, "-m", "audiencefilter.service", "worker"]
    processes = [
        subprocess.Popen(command, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        for _ in range(count)
    ]
    try:
        yield processes
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=WORKER_STOP)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


@dataclass
class Service:
    """A running `serve` process group and how to reach it."""

    url: str
    port: int
    env: dict[str, str]
    log_path: Path
    workers: int = 1
    process: subprocess.Popen[bytes] | None = field(default=None, repr=False)
    _log_offset: int = field(default=0, repr=False)

    def start(self) -> None:
        """Start the process group; with several workers, wait until every one has started."""
        self._log_offset = self.log_path.stat().st_size if self.log_path.exists() else 0
        command = [sys.executable, "-m", "audiencefilter.service", "serve"]
        command += ["--host", "127.0.0.1", "--port", str(self.port), "--no-access-log"]
        command += ["--workers", str(self.workers)]
        with self.log_path.open("ab") as log:
            self.process = subprocess.Popen(
                command,
                env=self.env,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        self._wait_until_live()

    def _wait_until_live(self) -> None:
        deadline = time.monotonic() + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process is None or self.process.poll() is not None:
                raise ServiceFailed(f"the service exited at start:\n{self.log()[-3000:]}")
            with contextlib.suppress(httpx.TransportError):
                live = httpx.get(f"{self.url}/health/live", timeout=1).status_code == 200
                output = self.log_path.read_bytes()[self._log_offset :]
                started = output.count(b"Application startup complete")
                if live and (self.workers == 1 or started >= self.workers):
                    return
            time.sleep(0.05)
        raise ServiceFailed(f"the service did not answer on {self.url}:\n{self.log()[-3000:]}")

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def kill(self) -> None:
        """SIGKILL the whole process group: no shutdown handler, no flush, no goodbye."""
        if self.process is None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, signal.SIGKILL)
        self.process.wait(timeout=STOP_TIMEOUT)
        self.process = None

    def stop(self) -> None:
        """SIGTERM the server and wait; SIGKILL its group if anything lingers."""
        if self.process is None:
            return
        process, self.process = self.process, None
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=STOP_TIMEOUT)
        except subprocess.TimeoutExpired:
            pass
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
        if process.poll() is None:
            process.wait(timeout=STOP_TIMEOUT)


@contextlib.contextmanager
def running(
    database_url: str,
    log_path: Path,
    *,
    workers: int = 1,
    settings: Mapping[str, str] | None = None,
) -> Iterator[Service]:
    """A started service, stopped when the block ends whatever happens inside it."""
    port = free_port()
    service = Service(
        url=f"http://127.0.0.1:{port}",
        port=port,
        env=service_env(database_url, settings),
        log_path=log_path,
        workers=workers,
    )
    try:
        service.start()
        yield service
    finally:
        service.stop()


def _cli(database_url: str, *args: str) -> str:
    done = run_cli(*args, env=service_env(database_url))
    if done.returncode != 0:
        raise ServiceFailed(f"`{' '.join(args)}` failed: {done.stderr.strip()[-2000:]}")
    return done.stdout


def migrate(database_url: str) -> None:
    _cli(database_url, "migrate")


def create_key(database_url: str, account: str = "drills") -> str:
    """A new private key of `account` (created when new); migrates SQLite on the way."""
    output = _cli(database_url, "keys", "create", "--type", "private", "--account", account)
    return output.strip().splitlines()[-1]


def client(service: Service, key: str, **options: Any) -> httpx.Client:
    options.setdefault("timeout", 30.0)
    return httpx.Client(base_url=service.url, headers={"apiKey": key}, **options)


def expect(response: httpx.Response, status: int) -> dict[str, Any]:
    if response.status_code != status:
        raise ServiceFailed(
            f"{response.request.method} {response.request.url.path}: expected {status}, got "
            f"{response.status_code} {response.text[:500]}"
        )
    body: dict[str, Any] = response.json()["data"]
    return body


def create_list(api: httpx.Client, name: str = "drill") -> str:
    created = expect(api.post("/v4/lists", json={"name": name}), 201)
    return str(created["list"]["id"])


COUNTRIES = ("FR", "DE", "US", "GB", "ES", "IT", "NL", "JP")


def seed_contacts(database_url: str, list_id: str, count: int, seed: int = 7) -> None:
    """Insert `count` contacts straight through the service's models: seconds, not minutes."""
    from audiencefilter.service.db.engine import Database
    from audiencefilter.service.db.models import Contact
    from audiencefilter.service.settings import Settings

    rng = random.Random(seed)
    database = Database.from_settings(Settings(database_url=database_url))
    try:
        for start in range(0, count, 2000):
            with database.transaction() as session:
                session.add_all(
                    Contact(
                        listId=list_id,
                        email=f"seed{index}@drill.example",
                        emailKey=f"seed{index}@drill.example",
                        firstName=f"Seed{index}",
                        country=rng.choice(COUNTRIES),
                        points=rng.randrange(0, 100),
                        isVerified=rng.random() < 0.5,
                    )
                    for index in range(start, min(count, start + 2000))
                )
    finally:
        database.dispose()
