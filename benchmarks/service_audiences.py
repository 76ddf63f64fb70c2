"""The reference service's audiences over a 100,000-contact list, on SQLite and on PostgreSQL.

    python -m benchmarks.service_audiences [--contacts N] [--runs N] [--no-postgres]

For each database: a fresh service database, one list of N synthetic contacts (benchmarks/data.py,
loaded with bulk inserts, then `ANALYZE`, with `VACUUM` on PostgreSQL), a smart audience that
selects about two thirds of the list, a smart audience of exactly 20,000 contacts and a manual
audience of the same 20,000. Then, through the whole HTTP application in process (routing,
authentication, SQL, rendering, orjson), the median wall-clock milliseconds of:

- `GET /audiences/{id}?limit=100`: the first page of the large smart audience, whose
  `pagination.total` is its full count;
- `GET /audiences?listId=`: every audience of the list with its member count (full counts only);
- `GET /audiences/{id}`: the full 20,000-member response, smart and manual;
- `GET /contacts?limit=100`: a page of the list, each contact with its audiences.

PostgreSQL: `AUDIENCEFILTER_BENCH_PG_URL` names a server to use (a fresh database is created on it
and dropped at the end); otherwise a throw-away server is started with the helpers of
tests/servers.py and stopped at the end. It is skipped, with the reason, when neither is possible.
This is a measurement script, not a test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import gc
import os
import signal
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

import anyio.from_thread
import httpx
from sqlalchemy import insert, select

from audiencefilter.service import Settings, create_app
from audiencefilter.service.db.models import Contact, new_id
from audiencefilter.service.domain.use_cases import keys, members
from audiencefilter.service.domain.use_cases.unit import in_transaction

from .data import generate

URL_VARIABLE = "AUDIENCEFILTER_BENCH_PG_URL"
MEMBERS = 20_000
LARGE = {"OR": [{"points": {"gte": 90}}, {"country": {"in": ["US", "FR"]}}]}
TWENTY_K = {"company": "Bench 20k"}
BATCH = 5_000


def _contacts(list_id: str, count: int) -> Iterator[dict[str, Any]]:
    """Synthetic contacts as rows of `contacts`; every fifth one is in the 20k audience (every
    one in a list under 20,000, the claims' quick size)."""
    columns = generate(count).columns
    every = max(1, count // MEMBERS)
    for index in range(count):
        email = f"c{index}.{columns['email'][index]}"
        yield {
            "id": new_id("con"),
            "listId": list_id,
            "email": email,
            "emailKey": email.lower(),
            "firstName": columns["firstName"][index],
            "lastName": columns["lastName"][index],
            "company": "Bench 20k" if index % every == 0 else columns["company"][index],
            "country": columns["country"][index],
            "city": columns["city"][index],
            "points": columns["points"][index] or 0,
            "referrals": columns["referrals"][index],
            "isVerified": bool(columns["isVerified"][index]),
            "unsubscribed": columns["unsubscribed"][index],
            "data": {"source": "bench"},
            "referralCode": f"r{index}",
            "createdAt": columns["createdAt"][index],
        }


class InProcessClient:
    """The ASGI application with its lifespan running, called through httpx on an event loop in
    a background thread, as a server would run it."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime] | None = None) -> None:
        self.app = create_app(settings, clock=clock)
        self._portal_context = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_context.__enter__()
        self._lifespan = self.app.router.lifespan_context(self.app)
        self.portal.call(self._lifespan.__aenter__)
        transport = httpx.ASGITransport(app=self.app)
        self.http = httpx.AsyncClient(transport=transport, base_url="http://bench")

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            return await self.http.request(method, url, **kwargs)

        return self.portal.call(send)

    def close(self) -> None:
        self.portal.call(self.http.aclose)
        self.portal.call(self._lifespan.__aexit__, None, None, None)
        self._portal_context.__exit__(None, None, None)


class Bench:
    """One service database with the list and audiences, and a client to measure with."""

    def __init__(self, database_url: str, contacts: int) -> None:
        settings = Settings(
            database_url=database_url,
            auto_migrate=True,
            rate_limit_free="10000000/minute",
            rate_limit_pro="10000000/minute",
        )
        self.client = InProcessClient(settings)
        self.database = self.client.app.state.db
        try:
            self.headers = {"apiKey": self._key()}
            self.list_id = self._seed(contacts)
            self.large = self._audience("large", {"filters": LARGE})
            self.smart_20k = self._audience("smart 20k", {"filters": TWENTY_K})
            self.manual_20k = self._audience("manual 20k", {"mode": "manual"})
            self._add_members(self.manual_20k, TWENTY_K)
        except BaseException:
            self.client.close()  # its event-loop thread would keep the process alive
            raise

    def _key(self) -> str:
        issued = keys.issue(self.database, new_id("bench"), "pro", "private")
        self.account_id = issued.account.id
        return issued.plaintext

    def _seed(self, count: int) -> str:
        response = self.call("POST", "/lists", json={"name": "bench"})
        assert response.status_code == 201, response.text
        list_id: str = response.json()["data"]["list"]["id"]
        rows = list(_contacts(list_id, count))
        # A transaction a batch, as the service's own imports commit their turns.
        for start in range(0, len(rows), BATCH):
            with self.database.transaction() as session:
                session.execute(insert(Contact), rows[start : start + BATCH])
        # Statistics and, on PostgreSQL, the visibility map, as autovacuum (or an operator after
        # a bulk load) would make them: without them PostgreSQL plans for a list of a dozen
        # contacts, and counts cannot read the index alone.
        engine = self.database.engine
        if engine.dialect.name == "postgresql":
            autocommit = engine.connect().execution_options(isolation_level="AUTOCOMMIT")
            with autocommit as connection:
                connection.exec_driver_sql("VACUUM ANALYZE")
        else:
            with engine.connect() as connection:
                connection.exec_driver_sql("ANALYZE")
                connection.commit()
        return list_id

    def _audience(self, name: str, body: dict[str, Any]) -> str:
        response = self.call(
            "POST",
            "/audiences?limit=1&wait=true",
            json={"name": name, "listId": self.list_id, **body},
        )
        assert response.status_code == 201, response.text
        return str(response.json()["data"]["audience"]["id"])

    def _add_members(self, audience_id: str, where: dict[str, Any]) -> None:
        """The contacts of a company, added as `POST /audiences/{id}/members` adds them, by
        its use case, a thousand (its limit per call) at a time."""
        with self.database.reading() as session:
            ids = session.scalars(
                select(Contact.id).where(
                    Contact.listId == self.list_id, Contact.company == where["company"]
                )
            ).all()
        for start in range(0, len(ids), 1000):
            chunk = ids[start : start + 1000]
            members.add(self.account_id, audience_id, chunk, in_transaction(self.database))

    def call(self, method: str, path: str, **kwargs: Any) -> Any:
        return self.client.request(method, f"/v4{path}", headers=self.headers, **kwargs)

    def close(self) -> None:
        self.client.close()


def _median_ms(call: Callable[[], Any], runs: int) -> tuple[float, Any]:
    gc.collect()  # what an earlier measurement left behind is not this one's cost
    call()  # warm-up: compiled statements, parsed filters
    times, result = [], None
    for _ in range(runs):
        start = time.perf_counter()
        result = call()
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times), result


def measure(bench: Bench, runs: int) -> list[tuple[str, float, str]]:
    """(what, median ms, what it returned) for each measured request."""

    def get(path: str) -> Callable[[], Any]:
        # Times the response as a client receives it (status and body bytes), not its decoding.
        def run() -> Any:
            response = bench.call("GET", path)
            assert response.status_code == 200, response.text
            return response

        return run

    plans = [
        (
            "first page of the large audience, limit=100",
            f"/audiences/{bench.large}?limit=100",
            runs,
        ),
        ("audience list with full counts", f"/audiences?listId={bench.list_id}", runs),
        ("smart 20,000-member full response", f"/audiences/{bench.smart_20k}", max(3, runs // 3)),
        ("manual 20,000-member full response", f"/audiences/{bench.manual_20k}", max(3, runs // 3)),
        (
            "contacts page, limit=100, with audiences",
            f"/contacts?listId={bench.list_id}&limit=100",
            runs,
        ),
    ]
    results = []
    for label, path, count in plans:
        ms, response = _median_ms(get(path), count)
        results.append((label, ms, _describe(response)))
    return results


def _describe(response: Any) -> str:
    data = response.json()["data"]
    size = f"{len(response.content) / 1e6:.1f} MB"
    if "audiences" in data:
        return "counts " + ", ".join(str(a["subsCount"]) for a in data["audiences"]) + ", " + size
    items = data["audience"]["subs"] if "audience" in data else data["contacts"]
    return f"{len(items)} contacts of {data['pagination']['total']}, {size}"


@contextmanager
def _postgres() -> Iterator[tuple[str | None, str]]:
    """A fresh ICU database on the configured server or on a throw-away one; dropped after."""
    from tests.servers import ServerFailed, ServerMissing, create_pg_database, start_postgres

    server = None
    admin = os.environ.get(URL_VARIABLE)
    if not admin:
        try:
            server = start_postgres()
        except (ServerMissing, ServerFailed) as exc:
            yield None, f"skipped: {exc}"
            return
        admin = server.url
    url = create_pg_database(admin)
    try:
        yield url, "the server at " + URL_VARIABLE if server is None else "a throw-away server"
    finally:
        _drop_database(admin, url)
        if server is not None:
            server.stop()


def _drop_database(admin: str, url: str) -> None:
    import psycopg
    from sqlalchemy.engine import make_url

    name = make_url(url).database
    conninfo = make_url(admin).set(drivername="postgresql").render_as_string(hide_password=False)
    with psycopg.connect(conninfo, autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')  # type: ignore[arg-type]


def _run(name: str, url: str, contacts: int, runs: int) -> None:
    print(f"\n{name}: loading {contacts:,} contacts...", flush=True)
    started = time.perf_counter()
    bench = Bench(url, contacts)
    print(f"  ready in {time.perf_counter() - started:.1f} s")
    try:
        for label, ms, described in measure(bench, runs):
            print(f"  {label:<44} {ms:9.1f} ms   ({described})")
    finally:
        bench.close()


def _stop_on_sigterm() -> None:
    """SIGTERM ends the run through `finally` blocks, so the throw-away server is stopped."""

    def stop(_signal: int, _frame: Any) -> None:
        raise SystemExit(128 + signal.SIGTERM)

    signal.signal(signal.SIGTERM, stop)


def main(argv: Sequence[str] | None = None) -> int:
    _stop_on_sigterm()
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--contacts", type=int, default=100_000)
    parser.add_argument("--runs", type=int, default=9, help="timed runs per request (median)")
    parser.add_argument("--no-postgres", action="store_true")
    args = parser.parse_args(argv)
    if args.contacts < MEMBERS:
        parser.error(f"--contacts must be at least {MEMBERS}")
    print(f"median wall-clock ms over {args.runs} runs (20,000-member responses: fewer)")
    on_each_database(_run, args.contacts, args.runs, postgres=not args.no_postgres)
    return 0


def on_each_database(
    run: Callable[[str, str, int, int], None], contacts: int, runs: int, *, postgres: bool
) -> None:
    """`run(title, url, contacts, runs)` on a throw-away SQLite file, then on a throw-away
    PostgreSQL when asked (its absence is printed, not an error)."""
    with tempfile.TemporaryDirectory(prefix="af-bench-") as folder:
        run("SQLite", f"sqlite:///{Path(folder) / 'bench.db'}", contacts, runs)
    if postgres:
        with _postgres() as (url, note):
            if url is None:
                print(f"\nPostgreSQL: {note}")
            else:
                run(f"PostgreSQL ({note})", url, contacts, runs)


if __name__ == "__main__":
    raise SystemExit(main())
