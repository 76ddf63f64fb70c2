"""The hot route's hand-off to worker threads (`ground/thread_hop.py`) keeps what AnyIO's keeps:
the result, the exception itself, the caller's context, a bound on calls at once, a cancelled
awaiter waiting for its call, and no call lost while idle workers come and go. Waits poll a
condition (bounded far above need), never a timing."""

from __future__ import annotations

import asyncio
import contextvars
import queue
import random
import threading
import time
from collections.abc import Callable, Coroutine
from pathlib import Path
from typing import Any, TypeVar, cast

import anyio
import pytest

from audiencefilter.service import create_app
from audiencefilter.service.api import hot_routes
from audiencefilter.service.ground.thread_hop import ThreadHop

from .conftest import ApiClient, make_tenant, sqlite_settings

REQUEST = contextvars.ContextVar("REQUEST", default="none")
T = TypeVar("T")


def _bounded(main: Callable[[], Coroutine[Any, Any, T]], seconds: float = 120) -> T:
    """`asyncio.run(main())` on a thread of its own, failing (not hanging) if it has not
    ended within `seconds`: a lost call would leave its awaiter waiting for good, and a
    cancelled awaiter waits for its call, so a timeout inside the loop could not end it."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append((True, asyncio.run(main())))
        except BaseException as error:
            outcome.append((False, error))

    runner = threading.Thread(target=run, daemon=True)
    runner.start()
    runner.join(seconds)
    assert outcome, f"still waiting after {seconds} s: a call was lost"
    ended, value = outcome[0]
    if not ended:
        raise value
    return cast(T, value)


async def _until(condition: Callable[[], bool]) -> None:
    for _ in range(20_000):
        if condition():
            return
        await asyncio.sleep(0.001)
    raise AssertionError("the condition never held")


def test_the_result_the_error_and_the_callers_context() -> None:
    hop = ThreadHop(4, name="test-hop")
    error = KeyError("kept")

    def seen(suffix: str) -> str:
        REQUEST.set("changed by the call")
        return f"{REQUEST.get()} {threading.current_thread().name} {suffix}"

    def failing() -> None:
        raise error

    async def main() -> None:
        REQUEST.set("request 7")
        answer = await hop.run(lambda: f"{REQUEST.get()} {threading.current_thread().name}")
        assert answer == "request 7 test-hop"
        assert await hop.run(seen, "x") == "changed by the call test-hop x"
        assert REQUEST.get() == "request 7"  # the call ran in a copy of the context
        with pytest.raises(KeyError) as raised:
            await hop.run(failing)
        assert raised.value is error
        with pytest.raises(RuntimeError, match="StopIteration") as stopped:
            await hop.run(next, iter(()))  # a future takes no StopIteration: it is wrapped
        assert isinstance(stopped.value.__cause__, StopIteration)

    _bounded(main)
    hop.close()


def test_off_asyncio_the_call_runs_on_anyios_threads() -> None:
    """An application run by AnyIO on trio has no asyncio loop to hand the outcome to."""
    hop = ThreadHop(2, name="test-hop-trio")

    async def main() -> str:
        REQUEST.set("on trio")
        return await hop.run(lambda: f"{REQUEST.get()} {threading.current_thread().name}")

    answer = anyio.run(main, backend="trio")
    assert answer.startswith("on trio ") and "test-hop-trio" not in answer
    assert hop.threads == 0


def test_at_most_its_bound_of_calls_run_at_once_and_the_rest_wait_in_order() -> None:
    hop = ThreadHop(2, linger=60)
    release = threading.Event()
    guard = threading.Lock()
    running, most, started = [0], [0], []

    def call(index: int) -> int:
        with guard:
            running[0] += 1
            most[0] = max(most[0], running[0])
            started.append(index)
        release.wait(30)
        with guard:
            running[0] -= 1
        return index * 10

    async def main() -> list[int]:
        tasks = [asyncio.create_task(hop.run(call, index)) for index in range(6)]
        await _until(lambda: len(started) == 2)
        for _ in range(50):  # the loop runs on; no third call starts while two hold
            await asyncio.sleep(0)
        assert len(started) == 2 and hop.threads == 2
        release.set()
        return list(await asyncio.gather(*tasks))

    assert _bounded(main) == [0, 10, 20, 30, 40, 50]
    assert most[0] == 2 and hop.threads == 2
    assert sorted(started[2:]) == started[2:]  # the waiting calls ran first come, first served
    hop.close()


def test_a_cancelled_awaiter_waits_for_its_call_to_end() -> None:
    hop = ThreadHop(1)
    started, release, ended = threading.Event(), threading.Event(), threading.Event()

    def write() -> str:
        started.set()
        release.wait(30)
        ended.set()
        return "written"

    async def main() -> None:
        task = asyncio.create_task(hop.run(write))
        await _until(started.is_set)
        task.cancel()
        for _ in range(50):
            await asyncio.sleep(0)
        assert not task.done()  # still waiting for the write, though cancelled
        task.cancel()  # cancelled again meanwhile: still waiting
        for _ in range(50):
            await asyncio.sleep(0)
        assert not task.done()
        release.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert ended.is_set()

    _bounded(main)
    hop.close()


def test_idle_workers_end_after_lingering_and_at_close() -> None:
    lingering = ThreadHop(3, linger=0.01, name="test-hop-lingering")
    closing = ThreadHop(3, linger=600, name="test-hop-closing")

    def named(name: str) -> int:
        return sum(1 for thread in threading.enumerate() if thread.name == name)

    async def main() -> None:
        for hop in (lingering, closing):
            gate = threading.Barrier(3)  # three calls at once: three workers
            await asyncio.gather(*(hop.run(gate.wait, 30) for _ in range(3)))
            assert hop.threads == 3
        await _until(lambda: lingering.threads == 0 and not named("test-hop-lingering"))
        assert closing.threads == 3
        closing.close()
        await _until(lambda: not named("test-hop-closing"))
        assert closing.threads == 0
        assert await closing.run(lambda: 5) == 5  # a closed hop starts workers again

    _bounded(main)
    closing.close()


class _TimingOutAsCalled:
    """The hop's queue, whose second wait times out just after a call was put for the waiting
    worker: the race of a worker's linger ending as a call is promised to it, made certain."""

    def __init__(self, hop: ThreadHop) -> None:
        self.calls = hop._calls
        self.waits = 0
        self.waiting, self.put_meanwhile = threading.Event(), threading.Event()

    def put(self, call: Any) -> None:
        self.calls.put(call)

    def get(self, timeout: float | None = None) -> Any:
        self.waits += 1
        if self.waits == 2:
            self.waiting.set()
            self.put_meanwhile.wait(30)
            raise queue.Empty
        return self.calls.get(timeout=timeout)


def test_a_worker_whose_linger_ends_as_a_call_is_promised_to_it_takes_the_call() -> None:
    hop = ThreadHop(1, linger=600)
    racing = _TimingOutAsCalled(hop)
    hop._calls = racing  # type: ignore[assignment]

    async def main() -> list[int]:
        first = await hop.run(lambda: 1)  # starts the worker, which then waits again
        await _until(racing.waiting.is_set)
        second = asyncio.create_task(hop.run(lambda: 2))  # promised to the waiting worker
        await _until(lambda: hop._idle == 0)
        racing.put_meanwhile.set()  # its wait times out now, with the call queued
        return [first, await second]

    assert _bounded(main, 60) == [1, 2]
    assert hop.threads == 1
    hop.close()


@pytest.mark.parametrize("seed", range(3))
def test_no_call_is_lost_while_idle_workers_come_and_go(seed: int) -> None:
    """Workers that linger a fraction of a millisecond leave and start all the time, between
    bursts of calls of random length: every call must be answered, by a worker that stayed
    or one started for it (a call promised to a worker that left would wait forever; the
    run is bounded to fail instead)."""
    rng = random.Random(seed)
    hop = ThreadHop(4, linger=0.0005)
    lengths = [[rng.choice((0, 0, 0.0002, 0.001)) for _ in range(rng.randrange(1, 9))]
               for _ in range(150)]  # fmt: skip

    def call(index: int, length: float) -> int:
        if length:
            time.sleep(length)
        return index

    async def main() -> None:
        for burst in lengths:
            answers = await asyncio.gather(*(hop.run(call, i, n) for i, n in enumerate(burst)))
            assert answers == list(range(len(burst)))
            assert 1 <= hop.threads <= 4 or hop.threads == 0
            if rng.random() < 0.3:
                await asyncio.sleep(rng.choice((0, 0.001)))

    _bounded(main)
    hop.close()


def test_the_hot_route_answers_alike_on_either_threads(tmp_path: Path) -> None:
    """`AUDIENCEFILTER_LEAN_THREAD_HOP`: the hot route's work on its own threads (the default)
    or on AnyIO's; the same PATCHes answer the same (tests/service/test_hot_routes.py compares
    the hot route with FastAPI's route behind it)."""
    answers = []
    for lean in (True, False):
        settings = sqlite_settings(tmp_path / f"lean-{lean}.db", lean_thread_hop=lean)
        api = ApiClient(create_app(settings))
        try:
            (hot,) = [r for r in api.app.router.routes if isinstance(r, hot_routes.HotRoute)]
            assert (hot.app.hop is not None) is lean  # type: ignore[attr-defined]
            tenant = make_tenant(api, plan="pro")
            lst = tenant.new_list()
            contact = tenant.new_contact(lst["id"], "ann@example.com", points=3)
            headers = {"apiKey": tenant.private_key}
            sent = [{"points": 50}, {"country": "FR", "isVerified": True}, {"points": "x"}]
            paths = [contact["id"]] * 3 + ["ctc_not_there"]  # the last fails on the thread
            for path, body in zip(paths, [*sent, {"points": 1}], strict=True):
                response = api.patch(f"/v4/contacts/{path}", json=body, headers=headers)
                found = response.json()
                if response.status_code == 200:
                    found = {k: found["data"]["contact"][k] for k in ("points", "country")}
                answers.append((lean, response.status_code, found))
        finally:
            api.close()
    on = [answer[1:] for answer in answers if answer[0]]
    off = [answer[1:] for answer in answers if not answer[0]]
    assert on == off
    assert [status for status, _ in on] == [200, 200, 400, 404]
