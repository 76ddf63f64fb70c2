"""Rate limits shared through Redis by two worker processes, and what happens when Redis dies.

`shared-limits`: `serve --workers 2` counts in one Redis, so an account allowed 100 requests a
minute gets exactly 100 through out of 150, whichever worker each connection lands on (every
request opens a new connection, so the kernel spreads them over both workers).

`redis-down`: Redis is SIGKILLed under load. The service must keep answering (2xx or 429, never
500 or a dropped connection), counting per process until Redis is back, and say so in its log
("rate-limit storage unreachable").
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections import Counter

import httpx
import redis as redis_client

from . import backends
from .common import Context, Row, exception_names, row
from .service import UNLIMITED, Service, create_key, running

SHARED_LIMIT = 100
SHARED_REQUESTS = 150
SHARED_CLIENTS = 10
FALLBACK_WARNING = "rate-limit storage unreachable"


def _fresh_connection_requests(service: Service, key: str, count: int) -> Counter[int]:
    """`count` GETs from several threads, each on a new connection."""
    statuses: Counter[int] = Counter()
    lock = threading.Lock()
    remaining = [count]

    def send() -> None:
        while True:
            with lock:
                if remaining[0] == 0:
                    return
                remaining[0] -= 1
            try:
                response = httpx.get(
                    f"{service.url}/v4/lists",
                    headers={"apiKey": key, "Connection": "close"},
                    timeout=30,
                )
                status = response.status_code
            except httpx.TransportError:
                status = 0
            with lock:
                statuses[status] += 1

    threads = [threading.Thread(target=send, daemon=True) for _ in range(SHARED_CLIENTS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    return statuses


def shared_limits(ctx: Context) -> Row:
    name = "shared-limits"
    with backends.redis() as server:
        url = f"sqlite:///{ctx.workdir / 'limits.db'}"
        key = create_key(url)
        settings = {"RATE_LIMIT_STORAGE": server.url, "RATE_LIMIT_FREE": f"{SHARED_LIMIT}/minute"}
        with running(url, ctx.workdir / f"{name}.log", workers=2, settings=settings) as service:
            statuses = _fresh_connection_requests(service, key, SHARED_REQUESTS)
            with redis_client.Redis.from_url(server.url) as store:
                shared_keys = int(store.dbsize())
    passed = (
        statuses[200] == SHARED_LIMIT
        and statuses[429] == SHARED_REQUESTS - SHARED_LIMIT
        and shared_keys > 0
    )
    counts = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
    figures = (
        f"2 workers, {SHARED_LIMIT}/minute, {SHARED_REQUESTS} requests on fresh connections: "
        f"{counts}; {shared_keys} counter key(s) in Redis"
    )
    return row(name, passed, figures)


def redis_down(ctx: Context) -> Row:
    name = "redis-down"
    before, after = (1.5, 4.0) if ctx.fast else (3.0, 8.0)
    with backends.redis() as server:
        url = f"sqlite:///{ctx.workdir / 'limits.db'}"
        key = create_key(url)
        settings = {
            "RATE_LIMIT_STORAGE": server.url,
            "RATE_LIMIT_FREE": UNLIMITED,
            "RATE_LIMIT_RETRY_SECONDS": "1",
        }
        with running(url, ctx.workdir / f"{name}.log", workers=2, settings=settings) as service:
            answers: list[tuple[float, int]] = []
            done = threading.Event()

            def load() -> None:
                with httpx.Client(base_url=service.url, headers={"apiKey": key}) as api:
                    while not done.is_set():
                        try:
                            status = api.get("/v4/lists", timeout=30).status_code
                        except httpx.TransportError:
                            status = 0
                        answers.append((time.monotonic(), status))

            threads = [threading.Thread(target=load, daemon=True) for _ in range(4)]
            for thread in threads:
                thread.start()
            time.sleep(before)
            killed = time.monotonic()
            os.kill(server.pid, signal.SIGKILL)
            time.sleep(after)
            done.set()
            for thread in threads:
                thread.join(timeout=60)
            log = service.log()
    statuses = Counter(status for _, status in answers)
    after_kill = Counter(status for at, status in answers if at > killed)
    warned = FALLBACK_WARNING in log.lower()
    bad = sum(count for status, count in statuses.items() if status not in (200, 429))
    passed = bad == 0 and after_kill[200] > 0 and warned
    counts = ", ".join(
        f"{'no answer' if status == 0 else status} x{count:,}"
        for status, count in sorted(statuses.items())
    )
    figures = (
        f"{len(answers):,} requests ({counts}); after the kill: 2xx x{after_kill[200]:,}; "
        f"fallback warning logged: {'yes' if warned else 'no'}"
    )
    if bad:
        figures += f"; server exceptions: {exception_names(log)}"
    return row(name, passed, figures)
