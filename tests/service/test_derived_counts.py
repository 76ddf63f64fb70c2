"""Every count the service keeps of a list, recomputed from scratch after random concurrent writes.

The write path keeps derived counts up to date incrementally, each in the transaction of the
write that moves it:

- `list_sizes`: the list's number of contacts (triggers, migration 0010), which pages answer as
  their total;
- `list_points`: how many contacts hold each points value (triggers, migration 0016), and
  `list_point_bands`, the same by band of 64 values (0024), which every contact's waitlist
  position is summed from;
- `memberships`: the stored members of each audience (`domain/membership/store.py`), which the
  audiences' `subsCount` and members pages answer;
- `audience_overlaps` and the notes `overlap_noted`: the contacts each pair of audiences
  shares (`domain/membership/overlaps.py`), which `GET /v4/lists/{id}/overlap` and `POST
  /v4/audiences/compare` answer, before and after the list settles;
- `event_heads`: the position of the list's last event, which must be the largest position of
  its events, numbered 1, 2, 3, ... with no gap.

Each test drives one list of the real service (the ASGI app through `ApiClient`) from several
threads at once with a seeded mix of writes: contact PATCHes moving points, country and a custom
field, JSON imports in `create` and `upsert` mode (some without events), CSV imports, contact
creates and deletes, actions (points), smart audiences created, re-filtered and deleted, and a
manual audience's members added and removed. Then it recomputes its count from the contacts
themselves (each audience's filter, `Filter.matches`, over the stored contacts; plain counts
and a window for ranks) and compares. On PostgreSQL import turns share the list's lock
(`shared_import_turns`) and concurrent PATCHes share turns; on SQLite writers take turns.
Settling is made frequent (`overlaps.SETTLE_EVERY`) so notes and settlings interleave with the
other writes. Seeded `random.Random`, a fixed number of writes, no timing asserted.
"""

from __future__ import annotations

import json
import random
import threading
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import combinations_with_replacement
from typing import Any

import httpx
import pytest
from sqlalchemy import func, select, text

from audiencefilter.service import create_app
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import (
    BAND_SHIFT,
    Audience,
    AudienceMember,
    AudienceOverlap,
    Contact,
    Event,
    EventHead,
    ListPointBand,
    ListPoints,
    ListSize,
    Membership,
    OverlapNoted,
)
from audiencefilter.service.db.queries import contact_rows, fetch_rows
from audiencefilter.service.domain import list_lock
from audiencefilter.service.domain.audience_filters import stored_filter
from audiencefilter.service.domain.membership import overlaps, snapshot

from .conftest import ApiClient, Tenant, make_tenant, settings_on, url_settings

THREADS = 4
WRITES = 12
"""Writes each thread draws: at most 48 a test (a write with no target yet is skipped), after
a setup of a custom field, an import of 16 contacts, four smart audiences and a manual one."""
EMAILS = 24
"""The pool of emails the writes draw from: creates meet existing contacts, deletes meet gone
ones, imports create some and update others."""
SEEDS = [11, 29]
"""The writes are drawn from the seed; their interleaving is the threads'. Seed 11 found both
bugs below (a few runs in ten)."""
WAIT = 120.0
"""The longest a writer thread may take (a deadlock fails the test rather than hanging it)."""

FILTERS: list[dict[str, Any]] = [
    {"points": {"gte": 50}},
    {"country": {"in": ["FR", "DE"]}},
    {"OR": [{"points": {"lt": 10}}, {"country": "FR"}]},
    {"data": {"path": ["plan"], "equals": "pro"}},
    {"AND": [{"country": "DE"}, {"points": {"gte": 30}}]},
    {"points": {"lt": 40}},
]
COUNTRIES = ["FR", "DE", "US", None]
WRITE_KINDS = [
    "patch",
    "patch",
    "patch",
    "import_create",
    "import_upsert",
    "import_upsert",
    "import_quiet",
    "csv_upsert",
    "create",
    "delete",
    "action",
    "audience_create",
    "audience_update",
    "audience_delete",
    "member_add",
    "member_remove",
]
"""The mix each write is drawn from (a kind twice is drawn twice as often)."""


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    """One app a database for the module: every test writes to lists of its own (the seeded
    writes, once a seed, `written`)."""
    with pytest.MonkeyPatch.context() as patched:
        patched.setattr(overlaps, "SETTLE_EVERY", 3)  # settlings among the notes, often
        path = tmp_path_factory.mktemp("counts") / "counts.db"
        settings = settings_on(request, path, membership_sweep_seconds=0, shared_import_turns=True)
        client = ApiClient(create_app(settings))
        try:
            yield client
        finally:
            client.close()


_WRITTEN: dict[tuple[int, int], Writes] = {}


def written(api: ApiClient, seed: int) -> Writes:
    """The seed's writes on this app, run once and then recounted by each count's test: every
    test checks its count after the same run (the pair counts' test settles the notes last)."""
    key = (id(api), seed)
    if key not in _WRITTEN:
        _WRITTEN[key] = run_writes(api, seed)
    return _WRITTEN[key]


@dataclass
class Writes:
    """One list and what the writers know of it (under `lock`), to aim writes at."""

    tenant: Tenant
    list_id: str
    manual: str
    contacts: dict[str, str] = field(default_factory=dict)  # email -> id
    audiences: list[str] = field(default_factory=list)  # smart ones
    lock: threading.Lock = field(default_factory=threading.Lock)
    sent: int = 0
    succeeded: int = 0
    quiet: int = 0
    failures: list[str] = field(default_factory=list)

    def contact_body(self, rng: random.Random) -> dict[str, Any]:
        return {
            "points": rng.randrange(0, 100),
            "country": rng.choice(COUNTRIES),
            "data": {"plan": rng.choice(("pro", "free"))},
        }

    def some_contact(self, rng: random.Random) -> str | None:
        with self.lock:
            ids = sorted(self.contacts.values())
        return rng.choice(ids) if ids else None

    def some_audience(self, rng: random.Random) -> str | None:
        with self.lock:
            ids = list(self.audiences)
        return rng.choice(ids) if ids else None

    def rows(self, rng: random.Random) -> list[dict[str, Any]]:
        emails = rng.sample(range(EMAILS), rng.randrange(1, 6))
        return [{"email": _email(i), **self.contact_body(rng)} for i in emails]

    def write(self, kind: str, rng: random.Random) -> None:
        """Sends one write of `kind`, records what it made or removed."""
        rows = self.rows(rng) if kind.startswith("import") or kind == "csv_upsert" else []
        call = self._call(kind, rng, rows)
        if call is None:
            return
        response = call()
        with self.lock:
            self.sent += 1
            if response.status_code >= 500:
                self.failures.append(f"{kind}: {response.status_code} {response.text[:300]}")
                return
            if response.status_code >= 300:
                return  # 404: a concurrent write removed the target; 409: the email exists
            self.succeeded += 1
            self._record(kind, response.json()["data"], rows)

    def _call(
        self, kind: str, rng: random.Random, rows: list[dict[str, Any]]
    ) -> Callable[[], httpx.Response] | None:
        call = self.tenant.call
        if kind == "patch":
            contact = self.some_contact(rng)
            body = self.contact_body(rng)
            return (
                None
                if contact is None
                else lambda: call("PATCH", f"/v4/contacts/{contact}", json=body)
            )
        if kind.startswith("import"):
            params = {
                "listId": self.list_id,
                "mode": "create" if kind == "import_create" else "upsert",
                "events": "false" if kind == "import_quiet" else "true",
            }
            return lambda: call("POST", "/v4/contacts/import", params=params, json=rows)
        if kind == "csv_upsert":
            lines = ["email,points,country"]
            lines += [f"{r['email']},{r['points']},{r['country'] or ''}" for r in rows]
            params = {"listId": self.list_id, "mode": "upsert"}
            content = ("\n".join(lines) + "\n").encode()
            headers = {"Content-Type": "text/csv"}
            return lambda: call(
                "POST", "/v4/contacts/import", params=params, content=content, headers=headers
            )
        if kind == "create":
            body = {"email": _email(rng.randrange(EMAILS)), "listId": self.list_id}
            body.update(self.contact_body(rng))
            return lambda: call("POST", "/v4/contacts", json=body)
        if kind == "delete":
            contact = self.some_contact(rng)
            return None if contact is None else lambda: call("DELETE", f"/v4/contacts/{contact}")
        if kind == "action":
            contact = self.some_contact(rng)
            body = {"name": "a", "increase": rng.choice((-30, 15, 40)), "subId": contact}
            return None if contact is None else lambda: call("POST", "/v4/actions", json=body)
        if kind == "audience_create":
            body = {"name": f"s{rng.randrange(10**6)}", "listId": self.list_id}
            body["filters"] = rng.choice(FILTERS)
            return lambda: call("POST", "/v4/audiences", json=body)
        if kind == "audience_update":
            audience = self.some_audience(rng)
            body = {"filters": rng.choice(FILTERS)}
            path = f"/v4/audiences/{audience}"
            return None if audience is None else lambda: call("PATCH", path, json=body)
        if kind == "audience_delete":
            with self.lock:
                if len(self.audiences) <= 3:
                    return None
            audience = self.some_audience(rng)
            return None if audience is None else lambda: call("DELETE", f"/v4/audiences/{audience}")
        contact = self.some_contact(rng)
        if contact is None:
            return None
        if kind == "member_add":
            path = f"/v4/audiences/{self.manual}/members"
            return lambda: call("POST", path, json={"contactIds": [contact]})
        path = f"/v4/audiences/{self.manual}/members/{contact}"
        return lambda: call("DELETE", path)

    def _record(self, kind: str, data: dict[str, Any], rows: list[dict[str, Any]]) -> None:
        if kind.startswith("import") or kind == "csv_upsert":
            if kind == "import_quiet":
                self.quiet += 1
            for result in data["results"]:
                if result.get("status") in ("created", "updated", "unchanged") and "id" in result:
                    self.contacts[rows[result["row"] - 1]["email"]] = result["id"]
        elif kind == "create":
            contact = data["contact"]
            self.contacts[contact["email"]] = contact["id"]
        elif kind == "delete":
            self.contacts.pop(data["contact"]["email"], None)
        elif kind == "audience_create":
            self.audiences.append(data["audience"]["id"])
        elif kind == "audience_delete":
            gone = data["audience"]["id"]
            self.audiences = [a for a in self.audiences if a != gone]


def _email(index: int) -> str:
    return f"d{index}@counts.test"


def run_writes(api: ApiClient, seed: int) -> Writes:
    """A list of 16 contacts, four smart audiences and a manual one, then `THREADS` threads
    each sending `WRITES` seeded writes at once."""
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json={"key": "plan", "type": "string"})
    manual = tenant.ok(
        "POST", "/v4/audiences", 201, json={"name": "m", "listId": list_id, "mode": "manual"}
    )["audience"]["id"]
    writes = Writes(tenant, list_id, manual)
    setup = random.Random(seed)
    rows = [{"email": _email(i), **writes.contact_body(setup)} for i in range(16)]
    answer = tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=rows)
    for result in answer["results"]:
        writes.contacts[_email(result["row"] - 1)] = result["id"]
    for index in range(4):
        body = {"name": f"start{index}", "listId": list_id, "filters": FILTERS[index]}
        writes.audiences.append(
            tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
        )

    def writer(number: int) -> None:
        rng = random.Random(seed * 1000 + number)
        for _ in range(WRITES):
            writes.write(rng.choice(WRITE_KINDS), rng)

    threads = [threading.Thread(target=writer, args=(n,), daemon=True) for n in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(WAIT)
        assert not thread.is_alive(), "a writer never finished"
    assert writes.failures == []
    assert writes.succeeded >= writes.sent // 2, "most writes should land"
    return writes


# ---- the recomputations ------------------------------------------------------------------


def _database(writes: Writes) -> Database:
    return writes.tenant.client.app.state.db  # type: ignore[no-any-return]


def _records(database: Database, list_id: str) -> list[dict[str, Any]]:
    with database.reading() as session:
        records = fetch_rows(session, contact_rows([Contact.listId == list_id]))
    for record in records:
        if isinstance(record["data"], str):
            record["data"] = json.loads(record["data"])
    return records


def recomputed_members(database: Database, list_id: str) -> dict[str, set[str]]:
    """Each audience's members from scratch: a smart audience's filter over the stored
    contacts (`Filter.matches`), a manual audience's members table."""
    records = _records(database, list_id)
    with database.reading() as session:
        audiences = list(session.scalars(select(Audience).where(Audience.listId == list_id)))
        members: dict[str, set[str]] = {}
        for audience in audiences:
            if audience.mode == "manual":
                chosen = select(AudienceMember.contactId).where(
                    AudienceMember.audienceId == audience.id
                )
                members[audience.id] = set(session.scalars(chosen))
                continue
            assert audience.filters is not None
            flt = stored_filter(audience.filters, audience.fields)
            assert flt is not None
            members[audience.id] = {r["id"] for r in records if flt.matches(r)}
    return members


def stored_members(database: Database, list_id: str) -> dict[str, set[str]]:
    with database.reading() as session:
        ids = list(session.scalars(select(Audience.id).where(Audience.listId == list_id)))
        rows = session.execute(
            select(Membership.audienceId, Membership.contactId).where(
                Membership.audienceId.in_(ids)
            )
        )
        stored: dict[str, set[str]] = {audience_id: set() for audience_id in ids}
        for audience_id, contact_id in rows:
            stored[audience_id].add(contact_id)
    return stored


def recomputed_pairs(members: dict[str, set[str]]) -> dict[tuple[str, str], int]:
    return {
        (a, b): len(members[a] & members[b])
        for a, b in combinations_with_replacement(sorted(members), 2)
    }


# ---- the tests: one a count ----------------------------------------------------------------


@pytest.mark.parametrize("seed", SEEDS)
def test_the_kept_list_size_equals_a_count_of_its_contacts(api: ApiClient, seed: int) -> None:
    writes = written(api, seed)
    database = _database(writes)
    with database.reading() as session:
        kept = session.scalar(select(ListSize.contacts).where(ListSize.listId == writes.list_id))
        counted = session.scalar(
            select(func.count()).select_from(Contact).where(Contact.listId == writes.list_id)
        )
    page = writes.tenant.ok("GET", "/v4/contacts", params={"listId": writes.list_id, "limit": 1})
    assert kept == counted == page["pagination"]["total"]
    assert counted == len(_records(database, writes.list_id))


def _kept_by_key(database: Database, table: Any, key: Any, list_id: str) -> dict[int, int]:
    """A kept count of the list (the histogram, its bands), its rows' contacts by key."""
    with database.reading() as session:
        rows = session.execute(select(key, table.contacts).where(table.listId == list_id))
        return {int(value): int(count) for value, count in rows}


@pytest.mark.parametrize("seed", SEEDS)
def test_the_kept_points_histogram_and_positions_equal_a_recount(api: ApiClient, seed: int) -> None:
    writes = written(api, seed)
    database = _database(writes)
    records = _records(database, writes.list_id)
    histogram = Counter(record["points"] for record in records)
    kept = _kept_by_key(database, ListPoints, ListPoints.points, writes.list_id)
    assert kept == histogram  # no row of 0 contacts left either
    bands: Counter[int] = Counter()  # and by band of 64 values (migration 0024)
    for points, count in histogram.items():
        bands[points >> BAND_SHIFT] += count
    assert _kept_by_key(database, ListPointBand, ListPointBand.band, writes.list_id) == bands
    # Each contact's position as the API answers it, against the rank by definition.
    ranked = sorted(records, key=lambda r: (-r["points"], r["createdAt"], r["id"]))
    expected = {record["id"]: rank for rank, record in enumerate(ranked, start=1)}
    params = {"listId": writes.list_id, "limit": 1000}
    contacts = writes.tenant.ok("GET", "/v4/contacts", params=params)["contacts"]
    assert {c["id"]: c["position"] for c in contacts} == expected
    # Pages of 7 from either end: each page's top and bottom lie anywhere in their ties on
    # points, whose count is read from the nearer end of the tie (`db/queries.ranked_beyond`).
    for order in ("asc", "desc"):
        for page in range(1, len(records) // 7 + 2):
            paged = {**params, "limit": 7, "page": page, "sort": "position", "order": order}
            contacts = writes.tenant.ok("GET", "/v4/contacts", params=paged)["contacts"]
            assert {c["id"]: c["position"] for c in contacts} == {
                c["id"]: expected[c["id"]] for c in contacts
            }, (order, page)


@pytest.mark.parametrize("seed", SEEDS)
def test_stored_memberships_equal_the_filters_over_the_contacts(api: ApiClient, seed: int) -> None:
    writes = written(api, seed)
    database = _database(writes)
    assert stored_members(database, writes.list_id) == recomputed_members(database, writes.list_id)
    with database.reading() as session:  # no row for a contact or an audience gone
        orphans = session.execute(
            text(
                "SELECT count(*) FROM memberships m WHERE NOT EXISTS "
                "(SELECT 1 FROM contacts c WHERE c.id = m.contact_id) OR NOT EXISTS "
                "(SELECT 1 FROM audiences a WHERE a.id = m.audience_id)"
            )
        ).scalar_one()
    assert orphans == 0


@pytest.mark.parametrize("seed", SEEDS)
def test_audience_sizes_answered_equal_the_filters_over_the_contacts(
    api: ApiClient, seed: int
) -> None:
    writes = written(api, seed)
    expected = {a: len(m) for a, m in recomputed_members(_database(writes), writes.list_id).items()}
    params = {"listId": writes.list_id, "limit": 100}
    listed = writes.tenant.ok("GET", "/v4/audiences", params=params)["audiences"]
    assert {a["id"]: a["subsCount"] for a in listed} == expected
    for audience_id, size in expected.items():
        found = writes.tenant.ok("GET", f"/v4/audiences/{audience_id}")
        assert len(found["audience"]["subs"]) == found["pagination"]["total"] == size
        # A page shorter than the audience counts it (on its memberships, for a stored one).
        first = writes.tenant.ok("GET", f"/v4/audiences/{audience_id}", params={"limit": 1})
        assert first["pagination"]["total"] == size


@pytest.mark.parametrize("seed", SEEDS)
def test_pair_counts_answered_equal_the_filters_over_the_contacts(
    api: ApiClient, seed: int
) -> None:
    writes = written(api, seed)
    database = _database(writes)
    expected = recomputed_pairs(recomputed_members(database, writes.list_id))
    ids = sorted({a for a, _ in expected})

    def answered() -> dict[tuple[str, str], int]:
        path = f"/v4/lists/{writes.list_id}/overlap"
        found = writes.tenant.ok("GET", path, params={"audiences": ",".join(ids)})
        assert found["audiences"] == ids
        matrix = found["matrix"]
        return {(a, b): matrix[ids.index(a)][ids.index(b)] for a, b in expected}

    assert answered() == expected  # the kept rows and the notes not yet settled
    a, b = ids[0], ids[-1]
    body = {"a": {"audienceId": a}, "b": {"audienceId": b}}
    counts = writes.tenant.ok("POST", "/v4/audiences/compare", json=body)["counts"]
    both = expected[(a, b)]
    assert counts == {
        "both": both,
        "aOnly": expected[(a, a)] - both,
        "bOnly": expected[(b, b)] - both,
    }
    with database.transaction() as session:
        overlaps.settle(session, writes.list_id)
    with database.reading() as session:
        noted = select(OverlapNoted).where(OverlapNoted.listId == writes.list_id)
        assert session.scalars(noted).first() is None
        kept = {
            (x, y): n
            for x, y, n in session.execute(
                select(
                    AudienceOverlap.audienceA, AudienceOverlap.audienceB, AudienceOverlap.contacts
                ).where(AudienceOverlap.listId == writes.list_id)
            )
        }
    assert set(kept) <= set(expected), "rows kept for audiences gone"
    assert {pair: kept.get(pair, 0) for pair in expected} == expected
    assert answered() == expected  # after settling: the kept rows alone


@pytest.mark.parametrize("seed", SEEDS)
def test_the_event_head_is_the_last_position_with_no_gap(api: ApiClient, seed: int) -> None:
    writes = written(api, seed)
    database = _database(writes)
    with database.reading() as session:
        head = session.scalar(select(EventHead.position).where(EventHead.listId == writes.list_id))
        positions = sorted(
            session.scalars(select(Event.position).where(Event.listId == writes.list_id))
        )
    assert positions == list(range(1, len(positions) + 1))
    assert head == len(positions)
    # The feed, replayed, rebuilds the stored members when every write appended its events.
    if writes.quiet == 0:
        state: set[tuple[str, str]] = set()
        for event in _feed(writes.tenant, writes.list_id):
            pair = (event["audienceId"], event["contactId"])
            if event["type"] == "audience.entered":
                assert pair not in state
                state.add(pair)
            elif event["type"] == "audience.left":
                assert pair in state
                state.remove(pair)
        stored = stored_members(database, writes.list_id)
        assert state == {(a, c) for a, members in stored.items() for c in members}


def _feed(tenant: Tenant, list_id: str) -> Iterator[dict[str, Any]]:
    cursor = None
    while True:
        params: dict[str, Any] = {"listId": list_id, "limit": 1000}
        if cursor is not None:
            params["after"] = cursor
        page = tenant.ok("GET", "/v4/events", params=params)
        yield from page["events"]
        cursor = page["next"]
        if not page["hasMore"]:
            return


# ---- regressions -----------------------------------------------------------------------------

QUIET_SEED = 11
"""The seed whose writes first disagreed (SQLite, a few runs in ten): an audience created from
its snapshot while an import without events (`events=false`) changed contacts it judges."""


@pytest.mark.parametrize("seed", [QUIET_SEED], ids=["quiet-import-seed"])
def test_memberships_after_the_seed_that_lost_a_quiet_import(api: ApiClient, seed: int) -> None:
    """The writes of the seed that lost a quiet import's moves: three runs, each exact."""
    for _ in range(3):
        writes = run_writes(api, seed)
        database = _database(writes)
        members = recomputed_members(database, writes.list_id)
        assert stored_members(database, writes.list_id) == members
        expected = recomputed_pairs(members)
        ids = sorted(members)
        with database.reading() as session:
            read = overlaps.kept_counts(session, writes.list_id, ids)
        assert {(a, b): read[ids.index(a)][ids.index(b)] for a, b in expected} == expected


@pytest.mark.parametrize("kind", ["update", "create"])
def test_a_quiet_import_between_an_audiences_snapshot_and_its_store_is_judged(
    api: ApiClient, monkeypatch: pytest.MonkeyPatch, kind: str
) -> None:
    """An import without events committed after a new audience's snapshot (`snapshot.evaluate`,
        no lock) and before its store: no event tells the store its contacts changed (and the filter
    reads no points, which the store compares itself), yet the
        audience must hold them as they are now. It held them as the snapshot saw them: contacts
        moved into the filter missing, those moved out still members, and a contact the import
        created missing."""
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    rows = [{"email": _email(i), "country": "DE"} for i in range(4)]
    tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=rows)
    real = snapshot.evaluate

    def evaluate(*args: Any, **kwargs: Any) -> Any:
        taken = real(*args, **kwargs)
        monkeypatch.setattr(snapshot, "evaluate", real)  # once
        if kind == "update":  # two contacts move in, none out
            quiet = [{"email": _email(i), "country": "FR"} for i in range(2)]
        else:  # a new contact in the filter
            quiet = [{"email": _email(9), "country": "FR"}]
        params = {"listId": list_id, "mode": "upsert", "events": "false"}
        done: list[httpx.Response] = []
        thread = threading.Thread(
            target=lambda: done.append(
                tenant.call("POST", "/v4/contacts/import", params=params, json=quiet)
            )
        )
        thread.start()
        thread.join(WAIT)
        assert done and done[0].status_code == 200, done
        return taken

    monkeypatch.setattr(snapshot, "evaluate", evaluate)
    body = {"name": "french", "listId": list_id, "filters": {"country": "FR"}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    database: Database = api.app.state.db
    members = recomputed_members(database, list_id)
    assert len(members[audience]) == (2 if kind == "update" else 1)
    assert stored_members(database, list_id) == members


@pytest.mark.postgres
def test_an_import_turn_that_stops_sharing_judges_by_the_filters_committed_meanwhile(
    pg_migrated_database: Callable[[], str],
    app_factory: Callable[..., ApiClient],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """An import turn that tried to share the list's lock, found a contact to create, undid the
    try (`list_lock.unshare`: the savepoint released the shared lock) and took the lock alone:
    an audience's filter changed between the two judged its rows by the filter as the try read
    it. The try had kept the list's audiences stamp (`plan._stamp`, read under the lock), and
    the turn kept it past the release: the seeds' runs on PostgreSQL found a contact in an
    audience whose new filter it failed, after an import that created one contact."""
    api = app_factory(
        url_settings(
            pg_migrated_database(),
            auto_migrate=True,
            membership_sweep_seconds=0,
            shared_import_turns=True,
        )
    )
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    rows = [{"email": _email(i), "points": 10, "country": "DE"} for i in range(3)]
    tenant.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=rows)
    body = {"name": "rich", "listId": list_id, "filters": {"points": {"gte": 50}}}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    real = list_lock.unshare
    changed: list[httpx.Response] = []

    def unshare(session: Any, list_id_: str) -> None:
        real(session, list_id_)
        if changed:
            return
        french = {"filters": {"country": "FR"}}
        thread = threading.Thread(
            target=lambda: changed.append(
                tenant.call("PATCH", f"/v4/audiences/{audience}", json=french)
            )
        )
        thread.start()
        thread.join(WAIT)

    monkeypatch.setattr(list_lock, "unshare", unshare)
    moved = [
        {"email": _email(0), "points": 60},  # updated: into the old filter, not the new
        {"email": _email(9), "points": 70, "country": "DE"},  # created: the try is undone
    ]
    params = {"listId": list_id, "mode": "upsert"}
    answer = tenant.ok("POST", "/v4/contacts/import", params=params, json=moved)
    assert (answer["created"], answer["updated"]) == (1, 1)
    assert changed and changed[0].status_code == 200, changed
    database: Database = api.app.state.db
    members = recomputed_members(database, list_id)
    assert members[audience] == set()
    assert stored_members(database, list_id) == members
