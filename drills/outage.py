"""Database outage: PostgreSQL stopped in `immediate` mode under load, then started again.

Clients keep reading and writing while the database is gone. The promise is that the service
answers throughout: 503 in the error shape (with `Retry-After`) while the database is away, never
500 and never a dropped connection; `/health/ready` says 503 during the outage and 200 after; and
the service finds the database again by itself (the pool's check of each connection it lends
replaces dead ones), without a restart. The row gives the statuses seen, and how long after
PostgreSQL accepted connections again the first request succeeded.
"""

from __future__ import annotations

import threading
import time
from collections import Counter
from dataclasses import dataclass

import httpx

from . import backends
from .common import Context, Row, exception_names, row
from .service import UNLIMITED, Service, client, create_key, create_list, expect, migrate, running

RECOVERY_TIMEOUT = 30.0
WARM_UP = 2.0
SETTLE = 3.0


@dataclass(frozen=True)
class Answer:
    at: float
    status: int  # 0: no HTTP answer at all
    shaped: bool  # an error body of the documented shape (always true for 2xx)
    retry_after: bool


class Traffic:
    """Clients alternating a page read and a contact creation, every answer kept with its time."""

    def __init__(self, service: Service, key: str, list_id: str, clients: int) -> None:
        self.service, self.key, self.list_id = service, key, list_id
        self.answers: list[Answer] = []
        self.lock = threading.Lock()
        self.done = threading.Event()
        self.threads = [
            threading.Thread(target=self._client, args=(number,), daemon=True)
            for number in range(clients)
        ]

    def _client(self, number: int) -> None:
        sent = 0
        with client(self.service, self.key) as api:
            while not self.done.is_set():
                sent += 1
                try:
                    if sent % 2:
                        response = api.get(
                            "/v4/contacts", params={"listId": self.list_id, "limit": 20}
                        )
                    else:
                        email = f"outage{number}-{sent}@drill.example"
                        response = api.post(
                            "/v4/contacts", json={"email": email, "listId": self.list_id}
                        )
                except httpx.TransportError:
                    self._keep(Answer(time.monotonic(), 0, False, False))
                    time.sleep(0.05)
                    continue
                self._keep(_answer(response))
                if response.status_code >= 500:
                    time.sleep(0.02)  # a client backing off a little, as Retry-After asks

    def _keep(self, answer: Answer) -> None:
        with self.lock:
            self.answers.append(answer)

    def start(self) -> None:
        for thread in self.threads:
            thread.start()

    def stop(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=60)

    def first_success_after(self, moment: float) -> float | None:
        with self.lock:
            times = [a.at for a in self.answers if a.at >= moment and 200 <= a.status < 300]
        return min(times) if times else None


def _answer(response: httpx.Response) -> Answer:
    shaped = True
    if response.status_code >= 400:
        try:
            body = response.json()
        except ValueError:
            body = None
        shaped = (
            isinstance(body, dict)
            and body.get("error") == response.status_code
            and isinstance(body.get("message"), str)
        )
    return Answer(time.monotonic(), response.status_code, shaped, "retry-after" in response.headers)


class ReadyProbe:
    """`/health/ready` every 100 ms, as a load balancer would ask it."""

    def __init__(self, service: Service) -> None:
        self.url = f"{service.url}/health/ready"
        self.seen: list[tuple[float, int]] = []
        self.done = threading.Event()
        self.thread = threading.Thread(target=self._probe, daemon=True)

    def _probe(self) -> None:
        with httpx.Client(timeout=10) as probe:
            while not self.done.wait(0.1):
                try:
                    status = probe.get(self.url).status_code
                except httpx.TransportError:
                    status = 0
                self.seen.append((time.monotonic(), status))

    def statuses(self, start: float, end: float) -> Counter[int]:
        return Counter(status for at, status in self.seen if start <= at <= end)


def pg_outage(ctx: Context) -> Row:
    name = "pg-outage"
    with backends.postgres() as cluster:
        url = cluster.database_url
        migrate(url)
        key = create_key(url)
        settings = {"RATE_LIMIT_FREE": UNLIMITED}
        with running(url, ctx.workdir / f"{name}.log", settings=settings) as service:
            with client(service, key) as api:
                list_id = create_list(api)
                for index in range(20):
                    body = {"email": f"seed{index}@drill.example", "listId": list_id}
                    expect(api.post("/v4/contacts", json=body), 201)
            traffic = Traffic(service, key, list_id, ctx.sizes.outage_clients)
            probe = ReadyProbe(service)
            traffic.start()
            probe.thread.start()
            try:
                time.sleep(WARM_UP)
                down = time.monotonic()
                cluster.stop_immediately()
                time.sleep(ctx.sizes.outage_down_seconds)
                restarting = time.monotonic()
                cluster.start_again()
                up = time.monotonic()
                deadline = up + RECOVERY_TIMEOUT
                while traffic.first_success_after(up) is None and time.monotonic() < deadline:
                    time.sleep(0.05)
                recovered = traffic.first_success_after(up)
                time.sleep(SETTLE)
            finally:
                traffic.stop()
                probe.done.set()
                probe.thread.join(timeout=30)
            ready_after = httpx.get(f"{service.url}/health/ready", timeout=10).status_code
            log = service.log()
    answers = traffic.answers
    statuses = Counter(answer.status for answer in answers)
    unavailable = [answer for answer in answers if answer.status == 503]
    misshaped = sum(not answer.shaped for answer in answers if answer.status >= 400)
    without_retry = sum(not answer.retry_after for answer in unavailable)
    ready_down = probe.statuses(down + 0.2, restarting)
    settled = recovered + 1.0 if recovered is not None else float("inf")
    late_failures = sum(
        not 200 <= answer.status < 300 for answer in answers if answer.at >= settled
    )
    passed = (
        statuses[500] == 0
        and statuses[0] == 0
        and len(unavailable) > 0
        and misshaped == 0
        and without_retry == 0
        and ready_down[503] > 0
        and ready_down[200] == 0
        and ready_after == 200
        and recovered is not None
        and late_failures == 0
    )
    counts = ", ".join(
        f"{'no answer' if status == 0 else status} x{count:,}"
        for status, count in sorted(statuses.items())
    )
    recovery = f"{recovered - up:.2f} s" if recovered is not None else "never"
    figures = (
        f"{len(answers):,} requests: {counts}; 503 shaped {len(unavailable) - misshaped}"
        f"/{len(unavailable)}, with Retry-After {len(unavailable) - without_retry}; "
        f"/health/ready during outage {dict(ready_down)}, after {ready_after}; "
        f"database down {restarting - down:.1f} s + restart {up - restarting:.1f} s, "
        f"first success {recovery} after; failures after recovery {late_failures}"
    )
    if statuses[500] or statuses[0]:
        figures += f"; server exceptions: {exception_names(log)}"
    return row(name, passed, figures)
