"""Shared (Redis) rate limits: exact across worker processes, and survivable when Redis is down.

The outage tests run their own throw-away `redis-server` in the foreground on a free port of
127.0.0.1, so it can be stopped (by PID) and started again on the same port; an unreachable port
and a socket that accepts but never answers stand for the other ways a storage disappears.
"""

from __future__ import annotations

import logging
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import httpx
import pytest
import redis

from audiencefilter.service.http.ratelimit import RateLimiter
from tests.servers import free_port
from tests.waiting import wait_until

from .conftest import ApiClient, make_tenant
from .live import LiveServer, cli_env, live_server, run_cli

LOGGER = "audiencefilter.service.ratelimit"
WENT_DOWN = "rate-limit storage unreachable, counting per process"
CAME_BACK = "rate-limit storage reachable again"


class RedisProcess:
    """A `redis-server` child on a fixed port, started and stopped on demand."""

    def __init__(self, binary: str, folder: Path) -> None:
        self.binary, self.folder = binary, folder
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        self.process = subprocess.Popen(
            [self.binary, "--bind", "127.0.0.1", "--port", str(self.port), "--save", "",
             "--appendonly", "no", "--dir", str(self.folder)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )  # fmt: skip
        client = redis.Redis(port=self.port, socket_connect_timeout=0.2)
        process = self.process

        def answers() -> bool:
            try:
                return bool(client.ping())
            except redis.ConnectionError:
                return False

        wait_until(answers, "redis-server", alive=lambda: process.poll() is None)
        client.close()

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def keys(self) -> int:
        client = redis.Redis(port=self.port)
        try:
            return len(client.keys("LIMITS*"))
        finally:
            client.close()


@pytest.fixture
def own_redis(redis_url: str) -> Iterator[RedisProcess]:
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.skip("redis-server is not installed here")
    with tempfile.TemporaryDirectory(prefix="audiencefilter-redis-") as folder:
        server = RedisProcess(binary, Path(folder))
        server.start()
        try:
            yield server
        finally:
            server.stop()


def _records(caplog: pytest.LogCaptureFixture, text: str) -> list[logging.LogRecord]:
    return [record for record in caplog.records if text in record.getMessage()]


def test_an_unreachable_storage_counts_per_process_and_warns_once(
    app_factory: Callable[..., ApiClient], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=LOGGER)
    api = app_factory(
        rate_limit_storage=f"redis://127.0.0.1:{free_port()}/0",
        rate_limit_free="3/minute",
        rate_limit_retry_seconds=60,
    )
    tenant = make_tenant(api)
    statuses = [tenant.call("GET", "/v4/lists").status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    (warning,) = _records(caplog, WENT_DOWN)
    assert warning.levelno == logging.WARNING
    assert "next try in 60 s" in warning.getMessage()
    limiter: RateLimiter = api.app.state.limiter
    assert limiter.counting_locally


class SilentStorage:
    """Accepts connections on 127.0.0.1, counts them, and never answers a byte."""

    def __init__(self) -> None:
        self.server = socket.create_server(("127.0.0.1", 0))
        self.port = self.server.getsockname()[1]
        self.held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    def _accept(self) -> None:
        while True:
            try:
                connection, _ = self.server.accept()
            except OSError:
                return  # closed
            self.held.append(connection)

    def connections(self) -> int:
        return len(self.held)

    def close(self) -> None:
        self.server.close()
        for connection in self.held:
            connection.close()


class Hands:
    """A monotonic clock the test moves."""

    def __init__(self) -> None:
        self.at = 1000.0

    def __call__(self) -> float:
        return self.at


def test_a_silent_storage_stalls_one_request_only(
    app_factory: Callable[..., ApiClient], caplog: pytest.LogCaptureFixture
) -> None:
    """The first request meets the silent storage (one read timeout, retried once) and
    declares it down; the next 20, before the retry interval passed, never try it again:
    no new connection reaches it, and all are answered, counted by the process."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    silent = SilentStorage()
    try:
        api = app_factory(
            rate_limit_storage=f"redis://127.0.0.1:{silent.port}/0",
            rate_limit_retry_seconds=60,
        )
        limiter: RateLimiter = api.app.state.limiter
        limiter.monotonic = Hands()
        tenant = make_tenant(api)
        assert tenant.call("GET", "/v4/lists").status_code == 200
        tried = silent.connections()
        assert 1 <= tried <= 2  # one connection, and one more for the retry
        assert [tenant.call("GET", "/v4/lists").status_code for _ in range(20)] == [200] * 20
        assert silent.connections() == tried
        assert limiter.counting_locally
    finally:
        silent.close()
    assert len(_records(caplog, WENT_DOWN)) == 1


@pytest.mark.redis
def test_redis_down_then_back(
    own_redis: RedisProcess,
    app_factory: Callable[..., ApiClient],
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Down: counted by the process, one warning, whatever the number of requests. Back: found
    again only by the first request after the retry interval, on a clock the test moves."""
    caplog.set_level(logging.INFO, logger=LOGGER)
    api = app_factory(rate_limit_storage=own_redis.url, rate_limit_retry_seconds=60)
    limiter: RateLimiter = api.app.state.limiter
    hands = Hands()
    limiter.monotonic = hands
    tenant = make_tenant(api)
    assert tenant.call("GET", "/v4/lists").status_code == 200
    assert own_redis.keys() == 1 and not limiter.counting_locally

    own_redis.stop()
    statuses = []
    for interval in range(3):  # three retry intervals, every try failing
        hands.at += 61 if interval else 0
        statuses += [tenant.call("GET", "/v4/lists").status_code for _ in range(8)]
    assert statuses == [200] * 24
    assert limiter.counting_locally
    assert len(_records(caplog, WENT_DOWN)) == 1 and not _records(caplog, CAME_BACK)

    own_redis.start()  # empty, on the same port
    hands.at += 30  # the last failed try was 30 s ago: not yet tried again
    assert tenant.call("GET", "/v4/lists").status_code == 200
    assert limiter.counting_locally and own_redis.keys() == 0
    hands.at += 31
    assert tenant.call("GET", "/v4/lists").status_code == 200
    assert not limiter.counting_locally
    assert own_redis.keys() == 1
    (back,) = _records(caplog, CAME_BACK)
    assert back.levelno == logging.INFO
    assert len(_records(caplog, WENT_DOWN)) == 1


def _wait_for_workers(server: LiveServer, count: int) -> None:
    """Until `count` worker processes have started (the first answers health probes sooner)."""
    started = lambda: server.output().count("Application startup complete") >= count  # noqa: E731
    wait_until(started, f"{count} workers to start", pause=0.1)


@pytest.mark.redis
@pytest.mark.slow
def test_two_workers_on_redis_let_exactly_the_limit_through(tmp_path: Path, redis_url: str) -> None:
    database = f"sqlite:///{tmp_path / 'workers.db'}"
    created = run_cli(
        "keys", "create", "--type", "private", "--account", f"workers-{time.time_ns()}",
        env=cli_env(AUDIENCEFILTER_DATABASE_URL=database),
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    settings = {
        "AUDIENCEFILTER_RATE_LIMIT_STORAGE": redis_url,
        "AUDIENCEFILTER_RATE_LIMIT_FREE": "100/minute",
    }
    statuses: list[int] = []
    lock = threading.Lock()

    def client(server_url: str) -> None:
        # a fresh connection per request, so the kernel hands them to both workers
        for _ in range(10):
            response = httpx.get(f"{server_url}/v4/lists", headers={"apiKey": key}, timeout=30)
            with lock:
                statuses.append(response.status_code)

    with live_server(database, ("serve", "--workers", "2"), **settings) as server:
        _wait_for_workers(server, 2)
        threads = [threading.Thread(target=client, args=(server.url,)) for _ in range(15)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert len(statuses) == 150
    assert statuses.count(200) == 100 and statuses.count(429) == 50
