"""A hundred receivers that drip their answers hold nothing of the service past their attempts.

Each receiver (an asyncio server on 127.0.0.1, all on one loop in a thread of the test) reads
the request and then answers one byte every tenth of a second for as long as the connection stays
open: from the status line, the headers or the body on, kept alive, `connection: close` or
HTTP/1.0. With a two-second time limit per attempt, every attempt is given up at its deadline;
what this test checks is what is left afterwards, counted rather than timed: the process's
sockets connected to a receiver (its file descriptors matched with the kernel's TCP table),
the connections each receiver still sees open, and the process's threads. A receiver never
stops dripping by itself, so anything not closed at the deadline stays open until the test ends
it, and the bounded waits below fail instead of passing late.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sqlalchemy import func, select

from audiencefilter.service import create_app
from audiencefilter.service.db.models import WebhookAttempt

from .conftest import ApiClient, make_tenant, settings_on
from .test_webhooks import LOCAL, new_hook, worker_of
from .webhook_receivers import DRIP_ENDINGS, DRIP_PHASES, drip_answer

RECEIVERS = 100
PER_LIST = 10  # webhook_max_per_list's default
DEADLINE = 2  # seconds: the attempt's time limit, and each read's
EVERY = 0.1  # seconds between two bytes, far within each read's limit: only the deadline cuts
CEILING = 120.0  # seconds; only reached when something stays open for good


class DrippingReceivers:
    """`count` receivers on one event loop in a thread. Each answers every request a byte at a
    time, endlessly (a body announced far longer than it will ever send), and counts the
    connections it has open."""

    def __init__(self, count: int) -> None:
        self.loop = asyncio.new_event_loop()
        self.open = 0
        self.accepted = 0
        self._lock = threading.Lock()
        self._servers: list[asyncio.base_events.Server] = []
        self._tasks: set[asyncio.Task[None]] = set()
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()
        kinds = itertools.cycle(itertools.product(DRIP_PHASES, DRIP_ENDINGS))
        self.ports = [self._call(self._serve(*next(kinds))) for _ in range(count)]

    def _call(self, coroutine: object) -> int:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result()  # type: ignore[arg-type]

    async def _serve(self, phase: str, ending: str) -> int:
        answer, start = drip_answer(phase, ending)
        if phase != "chunked body":  # announce a body it never finishes
            answer = answer.replace(b"content-length: 300", b"content-length: 999999999")

        async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            task = asyncio.current_task()
            assert task is not None
            self._tasks.add(task)
            with self._lock:
                self.open += 1
                self.accepted += 1
            try:
                await _drip(reader, writer, answer, start)
            finally:
                writer.close()
                with self._lock:
                    self.open -= 1
                self._tasks.discard(task)

        server = await asyncio.start_server(handle, "127.0.0.1", 0)
        self._servers.append(server)
        return int(server.sockets[0].getsockname()[1])

    def counts(self) -> tuple[int, int]:
        """Connections accepted so far, and those still open."""
        with self._lock:
            return self.accepted, self.open

    def close(self) -> None:
        async def stop() -> None:
            for server in self._servers:
                server.close()
            for task in list(self._tasks):
                task.cancel()
            await asyncio.gather(*self._tasks, return_exceptions=True)

        asyncio.run_coroutine_threadsafe(stop(), self.loop).result()
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join()
        self.loop.close()


async def _drip(
    reader: asyncio.StreamReader, writer: asyncio.StreamWriter, answer: bytes, start: int
) -> None:
    """Reads the request, then sends `answer` from `start` a byte every `EVERY` seconds, then
    padding for ever; ends when the other side closes (end of stream or a failed write)."""
    head = await reader.readuntil(b"\r\n\r\n")
    length = next(
        (int(line.split(b":")[1]) for line in head.lower().split(b"\r\n")
         if line.startswith(b"content-length:")),
        0,
    )  # fmt: skip
    await reader.readexactly(length)
    writer.write(answer[:start])
    rest = itertools.chain(answer[start:], itertools.repeat(ord("x")))
    for byte in rest:
        try:
            await asyncio.wait_for(reader.read(1), EVERY)
            return  # the sender closed or shut the connection down
        except TimeoutError:
            pass
        try:
            writer.write(bytes([byte]))
            await writer.drain()
        except OSError:
            return


def sockets_to(ports: set[int]) -> int:
    """This process's open TCP sockets whose far end is one of `ports` on 127.0.0.1."""
    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            link = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue  # closed meanwhile
        if link.startswith("socket:["):
            inodes.add(link[len("socket:[") : -1])
    count = 0
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        with open(table) as lines:
            next(lines)
            for line in lines:
                fields = line.split()
                remote_port = int(fields[2].rsplit(":", 1)[1], 16)
                if fields[9] in inodes and remote_port in ports:
                    count += 1
    return count


def thread_idents() -> set[int]:
    return {thread.ident for thread in threading.enumerate() if thread.ident is not None}


def settled(condition: Callable[[], bool], what: str) -> None:
    """Waits for `condition`, failing after `CEILING`: the receivers never stop on their own,
    so what is still open then would stay open for good."""
    ends = time.monotonic() + CEILING
    while not condition():
        assert time.monotonic() < ends, f"{what}: still not so after {CEILING:g} s"
        time.sleep(0.05)


@pytest.fixture
def receivers() -> Iterator[DrippingReceivers]:
    made = DrippingReceivers(RECEIVERS)
    yield made
    made.close()


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiClient]:
    settings = settings_on(
        request,
        tmp_path / "drip.db",
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        webhook_timeout_seconds=DEADLINE,
        webhook_concurrency=50,
        webhook_max_attempts=1,
        webhook_poll_seconds=0.05,
        membership_sweep_seconds=0,
    )
    client = ApiClient(create_app(settings))
    yield client
    client.close()


def _attempts(api: ApiClient) -> int:
    with api.app.state.db.reading() as session:
        return int(session.scalar(select(func.count()).select_from(WebhookAttempt)) or 0)


def test_dripping_receivers_hold_no_socket_or_thread_past_their_attempts(
    api: ApiClient, receivers: DrippingReceivers
) -> None:
    tenant = make_tenant(api)  # ten lists of ten endpoints: a contact per list, 100 deliveries
    for first in range(0, RECEIVERS, PER_LIST):
        list_id = tenant.new_list()["id"]
        for port in receivers.ports[first : first + PER_LIST]:
            url = f"http://127.0.0.1:{port}/hooks"
            new_hook(tenant, list_id, url, eventTypes=["contact.created"])
        tenant.new_contact(list_id, f"drip{first}@example.com")
    ports = set(receivers.ports)
    before = thread_idents()
    worker = worker_of(api)
    worker.start()
    try:
        settled(lambda: _attempts(api) == RECEIVERS, "an attempt to every receiver recorded")
        assert receivers.counts()[0] == RECEIVERS
        settled(lambda: sockets_to(ports) == 0, "the sender's sockets to the receivers closed")
        settled(lambda: receivers.counts()[1] == 0, "the receivers' connections ended")
        # Still running, the worker holds its loop and its pool's threads, nothing per attempt.
        extra = [t for t in threading.enumerate() if t.ident not in before]
        assert all(t.name.startswith(("webhook-send", "webhook-worker")) for t in extra), extra
        assert len(extra) <= 1 + api.app.state.settings.webhook_concurrency
    finally:
        worker.stop()
    settled(lambda: thread_idents() <= before, "the worker's threads ended")
    assert sockets_to(ports) == 0 and receivers.counts() == (RECEIVERS, 0)
