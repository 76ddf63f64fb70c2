"""A real `serve` process on 127.0.0.1 and a free port, for tests that need real HTTP."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO

import httpx

import audiencefilter.service
from tests.servers import free_port
from tests.waiting import WaitAbandoned, wait_until

SOURCE_ROOT = Path(audiencefilter.service.__file__).resolve().parents[2]


def cli_env(**extra: str) -> dict[str, str]:
    """The environment for a child process: the package importable even without installing."""
    env = {key: value for key, value in os.environ.items() if not key.startswith("AUDIENCEFILTER_")}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(SOURCE_ROOT), env.get("PYTHONPATH")]))
    env.update(extra)
    return env


def run_cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Run `python -m audiencefilter.service ARGS` to completion."""
    return subprocess.run(
        [sys.executable, "-m", "audiencefilter.service", *args],
        env=env or cli_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )


@dataclass
class LiveServer:
    url: str
    process: subprocess.Popen[str]
    log: IO[str]

    def output(self) -> str:
        return _written(self.log)


def _written(log: IO[str]) -> str:
    """What the server wrote to its log so far, read without moving the file's offset: the
    server writes through the same open file, at that offset, so a `seek(0)` here while it
    wrote a line put the line over the log's first bytes (the demo's keys lost once in a
    whole run)."""
    descriptor = log.fileno()
    return os.pread(descriptor, os.fstat(descriptor).st_size, 0).decode("utf-8", "replace")


@contextmanager
def live_server(
    database_url: str, command: Sequence[str] = ("serve",), **settings: str
) -> Iterator[LiveServer]:
    """Start the service as a child process; stop it by PID when the block ends."""
    port = free_port()
    env = cli_env(AUDIENCEFILTER_DATABASE_URL=database_url, **settings)
    # Output goes to a file: a pipe nobody reads would fill up and stall the server.
    log = tempfile.TemporaryFile(mode="w+")
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "audiencefilter.service",
            *command,
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
        ],
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
        text=True,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_live(url, process, log)
        yield LiveServer(url, process, log)
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        log.close()


def _wait_until_live(url: str, process: subprocess.Popen[str], log: IO[str]) -> None:
    """Until the service answers, as long as its process lives (`tests/waiting.py`)."""

    def live() -> bool:
        try:
            return httpx.get(f"{url}/health/live", timeout=5).status_code == 200
        except httpx.TransportError:
            return False

    try:
        wait_until(live, f"the service on {url}", alive=lambda: process.poll() is None, pause=0.05)
    except WaitAbandoned:
        output = _written(log)
        raise RuntimeError(f"the service exited with {process.returncode}:\n{output}") from None
