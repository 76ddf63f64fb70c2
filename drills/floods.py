"""The floods drill: another account's writes and deliveries while one account floods.

Issue 36 named four floods after which another account's single write waited seconds, on the
database's one write lock (SQLite) or behind one account's long transactions. This drill runs
them against a live service, on SQLite and on PostgreSQL, while account B creates contacts one
after another with a webhook whose receiver answers at once, and prints B's p50, p99 and max
write latency, and the same of the time from each write's answer to its delivery, alone and
during each flood:

- `windows`: contacts with a history of actions whose one-hour windows close one every 100 ms,
  read by three `count(actions where createdAt >= 1 hour ago)` audiences; the service's own
  scheduler moves them;
- `imports`: upsert imports of 1,000 rows with 15 actions each, 3 at a time;
- `chain`: a PATCH of the root of a chain of audiences that read one another, every contact
  moving;
- `webhooks`: 40 pending deliveries to a receiver that never answers and 40 to one that drips
  its answer a byte at a time (`flood_webhooks.py`).

Every drill judges correctness: every write of A and B answered as documented (no 5xx, no
refusal), every delivery of B arrived, the chain's membership exact (every audience of it holds
every contact before the PATCH and none after), and every dripping answer cut at the attempt's
deadline. The latency figures are printed in every mode; the bounds
(docs/service-internals-writes.md, "No account holds another's writes", and
docs/service-webhooks.md, "The worker"), B's slowest write during each flood at most
`MAX_WRITE_SECONDS` and its slowest delivery during the webhooks at most
`MAX_DELIVERY_SECONDS`, are a verdict in the full drill only: `--fast` runs in CI, on machines
whose load no drill controls, where a timing could fail because of the machine, not the code.
Each flood's figures begin with its own duration: the chain's is the time its PATCH took in
turns.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from contextlib import AbstractContextManager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx

from . import backends, flood_webhooks
from .common import Context, Row, row
from .isolation import MAX_DELIVERY_SECONDS, Writer, _deliveries, _percentiles
from .receiver import Receiver
from .service import (
    ServiceFailed,
    client,
    create_key,
    create_list,
    expect,
    migrate,
    running,
    seed_contacts,
)
from .webhooks import _settings, new_webhook

MAX_WRITE_SECONDS = 1.0
BASELINE_SECONDS = 2.0
BOUNDED = ("windows", "imports", "chain", "webhooks")
DELIVERIES_BOUNDED = ("webhooks",)
DELIVERED_WITHIN = 60.0
"""Seconds the drill waits, after the last flood, for every delivery of B."""


@dataclass(frozen=True)
class Sizes:
    window_contacts: int
    window_actions: int
    window_seconds: float
    imports: int
    import_rows: int
    chain: int
    chain_contacts: int
    webhook_deliveries: int
    webhook_seconds: float


FAST = Sizes(100, 50, 5.0, 3, 300, 20, 500, 40, 12.0)
FULL = Sizes(400, 250, 20.0, 12, 1000, 100, 2000, 40, 30.0)


def _seed_windows(database_url: str, list_id: str, contacts: int, actions: int) -> None:
    """Contacts whose actions leave their one-hour window one every 100 ms, from 3 s on."""
    from audiencefilter.service.db.engine import Database
    from audiencefilter.service.db.models import Action, Contact
    from audiencefilter.service.settings import Settings

    seed_contacts(database_url, list_id, contacts, seed=36)
    database = Database.from_settings(Settings(database_url=database_url))
    start = datetime.now(UTC) - timedelta(hours=1) + timedelta(seconds=3)
    try:
        with database.reading() as session:
            ids = [c.id for c in session.query(Contact).filter(Contact.listId == list_id)]
        step = 0
        for contact_id in ids:
            with database.transaction() as session:
                rows = []
                for _ in range(actions):
                    at = start + timedelta(milliseconds=100 * step)
                    rows.append(Action(name="visit", increase=1, subId=contact_id, createdAt=at))
                    step += 1
                session.add_all(rows)
    finally:
        database.dispose()


def _windows(api: httpx.Client, database_url: str, sizes: Sizes) -> Callable[[], None]:
    list_id = create_list(api, "windows")
    _seed_windows(database_url, list_id, sizes.window_contacts, sizes.window_actions)
    for least in (1, sizes.window_actions // 2, sizes.window_actions):
        where = {"actions": {"where": {"createdAt": {"gte": {"ago": "PT1H"}}},
                             "count": {"gte": least}}}  # fmt: skip
        body = {"name": f"at least {least}", "listId": list_id, "filters": where}
        expect(api.post("/v4/audiences?limit=1", json=body), 201)
    return lambda: time.sleep(sizes.window_seconds)  # the scheduler works meanwhile


def _imports(api: httpx.Client, _url: str, sizes: Sizes) -> Callable[[], None]:
    list_id = create_list(api, "imports")
    now = datetime.now(UTC)

    def body(batch: int) -> list[dict[str, Any]]:
        return [
            {
                "email": f"i{batch % 4}.{n}@imports.example",
                "firstName": f"B{batch}",
                "actions": [
                    {
                        "name": "visit",
                        "increase": 1,
                        "createdAt": (now - timedelta(minutes=n + 60 * k + batch)).isoformat(),
                    }
                    for k in range(15)
                ],
            }  # fmt: skip
            for n in range(sizes.import_rows)
        ]

    def one(batch: int) -> None:
        url = f"/v4/contacts/import?listId={list_id}&mode=upsert"
        expect(api.post(url, json=body(batch)), 200)

    def flood() -> None:
        for first in range(0, sizes.imports, 3):
            threads = [
                threading.Thread(target=one, args=(batch,))
                for batch in range(first, min(sizes.imports, first + 3))
            ]
            for thread in threads:
                thread.start()
            for thread in threads:
                thread.join()

    return flood


def _chain(api: httpx.Client, database_url: str, sizes: Sizes) -> Callable[[], None]:
    list_id = create_list(api, "chain")
    seed_contacts(database_url, list_id, sizes.chain_contacts, seed=37)  # points 0 to 99
    root = {"name": "root", "listId": list_id, "filtersText": "points >= 0"}
    chain = [expect(api.post("/v4/audiences?limit=1", json=root), 201)["audience"]["id"]]
    for index in range(sizes.chain - 1):
        where = {"audiences": {"some": {"id": chain[-1]}}}
        link = {"name": f"link {index}", "listId": list_id, "filters": where}
        chain.append(expect(api.post("/v4/audiences?limit=1", json=link), 201)["audience"]["id"])
    _expect_members(api, list_id, sizes.chain, sizes.chain_contacts, "before the PATCH")

    def flood() -> None:
        patch = {"filtersText": "points < 0"}  # every contact leaves every audience
        expect(api.patch(f"/v4/audiences/{chain[0]}?limit=1", json=patch), 200)
        # The PATCH answers once its members are stored (in turns): none is left to move.
        _expect_members(api, list_id, sizes.chain, 0, "after the PATCH")

    return flood


def _expect_members(api: httpx.Client, list_id: str, audiences: int, count: int, when: str) -> None:
    """The list's `audiences` audiences are built and hold `count` members each, or the drill
    fails with the first that does not."""
    url = f"/v4/audiences?listId={list_id}&limit={max(audiences, 1)}"
    listed = expect(api.get(url), 200)["audiences"]
    if len(listed) != audiences:
        raise ServiceFailed(f"{len(listed)} audiences {when}, not {audiences}")
    for audience in listed:
        if (audience["status"], audience["subsCount"]) != ("built", count):
            raise ServiceFailed(
                f"audience {audience['name']} {when}: {audience['status']}, "
                f"{audience['subsCount']} members, not {count}"
            )


FLOODS: dict[str, Callable[[httpx.Client, str, Sizes], Callable[[], None]]] = {
    "windows": _windows,
    "imports": _imports,
    "chain": _chain,
    "webhooks": flood_webhooks.webhooks,
}


@dataclass
class Measured:
    """B's writes during one flood (or alone), and what failed."""

    name: str
    written: list[str]
    seconds: float = 0.0
    failures: tuple[str, ...] = ()


def _run(name: str, ctx: Context, database_url: str) -> Row:
    sizes = FAST if ctx.fast else FULL
    migrate(database_url)
    key_a, key_b = create_key(database_url, "flood"), create_key(database_url, "writer")
    settings = _settings(MEMBERSHIP_SWEEP_SECONDS="1", MAX_BODY_BYTES=str(4 << 20))
    receiver = Receiver()
    try:
        with running(database_url, ctx.workdir / f"{name}.log", settings=settings) as service:
            with client(service, key_a, timeout=600) as api_a, client(service, key_b) as api_b:
                list_b = create_list(api_b, "writer")
                new_webhook(api_b, list_b, receiver.url, ("contact.created",))
                writer = Writer(api_b, list_b)
                measured = [Measured("B alone", writer.write_until(BASELINE_SECONDS))]
                for flood_name, prepare in FLOODS.items():
                    measured.append(_flood(flood_name, prepare(api_a, database_url, sizes), writer))
                every = {i for m in measured for i in m.written}
                receiver.wait_for(lambda got: every <= _delivered(got), DELIVERED_WITHIN)
    finally:
        receiver.close()
    rows = [_judged(m, ctx.fast, writer, receiver) for m in measured]
    bounds = (
        f"bounds {MAX_WRITE_SECONDS} s on B's writes during {', '.join(BOUNDED)} and "
        f"{MAX_DELIVERY_SECONDS} s on its deliveries during {', '.join(DELIVERIES_BOUNDED)}"
    )
    figures = [figure for _, figure in rows] + [
        bounds + (", printed, not judged" if ctx.fast else "")
    ]
    return row(name, all(passed for passed, _ in rows), "; ".join(figures))


def _flood(name: str, flood: Callable[[], None], writer: Writer) -> Measured:
    """Runs `flood` in a thread while B writes; B's writes and what failed."""
    finished = threading.Event()
    failures: list[str] = []

    def work() -> None:
        try:
            flood()
        except Exception as exc:  # reported in the row, not lost in a thread
            failures.append(f"A failed: {type(exc).__name__}: {str(exc)[:300]}")
        finally:
            finished.set()

    thread = threading.Thread(target=work)
    started = time.monotonic()
    thread.start()
    during, refused = _write_during(writer, finished)
    seconds = time.monotonic() - started
    thread.join()
    if refused is not None:
        failures.append(f"B failed: {refused}")
    return Measured(name, during, seconds, tuple(failures))


def _delivered(got: list[Any]) -> set[str]:
    return {item.payload()["data"]["contactId"] for item in got if item.status < 300}


def _judged(measured: Measured, fast: bool, writer: Writer, receiver: Receiver) -> tuple[bool, str]:
    """A flood's verdict (`judged`) and its figures."""
    latencies = [writer.done[i][0] for i in measured.written]
    delivered = _deliveries(receiver, writer, measured.written)
    lost = len(measured.written) - len(delivered)
    figure = (
        f"{measured.name}"
        + (f" ({measured.seconds:.1f} s)" if measured.seconds else "")
        + f": {len(measured.written)} writes of B, {_percentiles(latencies)}; its deliveries "
        + f"{_percentiles(delivered)}, undelivered {lost}"
        + "".join(f", {failure}" for failure in measured.failures)
    )
    passed = judged(
        measured.name,
        fast,
        failed=bool(measured.failures),
        writes=len(latencies),
        worst=max(latencies, default=0.0),
        lost=lost,
        worst_delivery=max(delivered, default=0.0),
    )
    return passed, figure


def judged(
    flood: str,
    fast: bool,
    *,
    failed: bool,
    writes: int,
    worst: float,
    lost: int = 0,
    worst_delivery: float = 0.0,
) -> bool:
    """A flood's verdict: no write of A or B failed and every delivery of B arrived; in the
    full drill only, B wrote during a bounded flood and its slowest write and delivery kept
    their bounds (timings: `--fast` prints them)."""
    if failed or lost:
        return False
    if fast:
        return True
    if flood in BOUNDED and not (writes > 0 and worst <= MAX_WRITE_SECONDS):
        return False
    return flood not in DELIVERIES_BOUNDED or worst_delivery <= MAX_DELIVERY_SECONDS


def _write_during(writer: Writer, finished: threading.Event) -> tuple[list[str], str | None]:
    """B's writes until the flood finished, and the first not answered as documented (None when
    all were): after it, B waits for the flood's end, so the row reports both."""
    written: list[str] = []
    while not finished.is_set():
        try:
            written.append(writer.one())
        except (ServiceFailed, httpx.HTTPError) as exc:
            finished.wait()
            return written, f"{type(exc).__name__}: {str(exc)[:200]}"
    return written, None


def floods_sqlite(ctx: Context) -> Row:
    return _run("floods-sqlite", ctx, f"sqlite:///{ctx.workdir / 'floods.db'}")


def floods_postgres(ctx: Context) -> Row:
    cluster: AbstractContextManager[Any] = backends.postgres()
    with cluster as postgres:
        return _run("floods-postgres", ctx, postgres.database_url)
