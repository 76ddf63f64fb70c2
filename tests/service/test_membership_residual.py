"""Residual judgement on writes: the same memberships with it on and off.

A write judges each audience decided in SQL (one over actions) by the residual of its filter
once the written contact's own fields are substituted (`membership/residuals.py`, the setting
`membership_residual`). Two applications run the same generated writes, one with the setting
on and one off: contacts drawn by the library's record strategy, their actions by the relation
strategy, audiences whose filters join a generated contact condition and a generated relation
condition (`audiencefilter.testing`), and updates that move the contacts' own fields. After
every write, both store the same members for every audience.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import event

from audiencefilter import Filter
from audiencefilter.service.app import create_app
from audiencefilter.service.domain.audience_filters import SMART, StoredAudience, filter_of
from audiencefilter.service.domain.membership import residuals
from audiencefilter.testing.relation_strategies import action_rows, relation_wheres
from audiencefilter.testing.strategies import NOW, records, where_clauses

from .audience_helpers import members_on_each
from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

PROFILE_FIELDS = (
    "firstName",
    "lastName",
    "company",
    "country",
    "city",
    "points",
    "referrals",
    "isVerified",
    "unsubscribed",
    "createdAt",
    "data",
)


@pytest.fixture(scope="module")
def pair(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Tenant, Tenant]]:
    """Two applications at one fixed instant (`NOW` of the strategies): residuals on, off."""
    folder = tmp_path_factory.mktemp("residual")
    apps = [
        ApiClient(
            create_app(
                sqlite_settings(
                    folder / f"{name}.db", membership_sweep_seconds=0, membership_residual=on
                ),
                clock=lambda: NOW,
            )
        )
        for name, on in (("on", True), ("off", False))
    ]
    yield make_tenant(apps[0]), make_tenant(apps[1])
    for app in apps:
        app.close()


def _json(value: Any) -> Any:
    return json.loads(json.dumps(value, default=lambda v: v.isoformat()))


def _contact(record: dict[str, Any], index: int) -> dict[str, Any]:
    """A generated record as a contact body (its e-mail made unique)."""
    body = {k: v for k, v in record.items() if k in PROFILE_FIELDS and v is not None}
    return _json({**body, "email": f"c{index}@example.com"})


def _audience_filter(own: dict[str, Any], related: dict[str, Any], shape: str) -> dict[str, Any]:
    if shape == "and":
        return {"AND": [own, related]}
    if shape == "or":
        return {"OR": [own, related]}
    return {"OR": [{"NOT": own}, {"AND": [own, related]}]}


class Twins:
    """The same calls on both applications; an answer must agree in status."""

    def __init__(self, pair: tuple[Tenant, Tenant]) -> None:
        self.pair = pair
        self.lists = [t.new_list()["id"] for t in pair]

    def post(self, url: str, body: dict[str, Any], key: str) -> list[str] | None:
        """The ids created on each, or None when both refused the body."""
        answers = [
            t.call("POST", url, json={**body, **self._list(i)}) for i, t in enumerate(self.pair)
        ]
        codes = [a.status_code for a in answers]
        assert codes[0] == codes[1], [a.text for a in answers]
        if codes[0] >= 300:
            return None
        return [a.json()["data"][key]["id"] for a in answers]

    def _list(self, index: int) -> dict[str, Any]:
        return {"listId": self.lists[index]}

    def each(self, method: str, urls: list[str], body: dict[str, Any]) -> None:
        codes = [
            t.call(method, u, json=body).status_code for t, u in zip(self.pair, urls, strict=True)
        ]
        assert codes[0] == codes[1]

    def members(self, audiences: list[list[str]]) -> list[list[list[str]]]:
        """Each audience's members (e-mails, sorted) on each application."""
        return members_on_each(self.pair, audiences)


def _same_members(twins: Twins, audiences: list[list[str]], step: str) -> None:
    for on, off in twins.members(audiences):
        assert on == off, step


@settings(
    deadline=None,
    max_examples=12,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    st.lists(
        st.tuples(
            where_clauses(max_leaves=3), relation_wheres(), st.sampled_from(("and", "or", "not"))
        ),
        min_size=1,
        max_size=4,
    ),
    st.lists(st.tuples(records(), action_rows()), min_size=1, max_size=4),
    st.lists(records(), max_size=3),
)
def test_residual_judgement_stores_the_memberships_of_whole_filters(
    pair: tuple[Tenant, Tenant],
    filters: list[tuple[dict[str, Any], dict[str, Any], str]],
    contacts: list[tuple[dict[str, Any], list[dict[str, Any]]]],
    updates: list[dict[str, Any]],
) -> None:
    twins = Twins(pair)
    audiences = []
    for number, (own, related, shape) in enumerate(filters):
        body = {"name": f"A{number}", "filters": json.dumps(_audience_filter(own, related, shape))}
        created = twins.post("/v4/audiences", body, "audience")
        if created is not None:
            audiences.append(created)
    written = []
    for index, (record, actions) in enumerate(contacts):
        ids = twins.post("/v4/contacts", _contact(record, index), "contact")
        if ids is None:
            continue
        written.append(ids)
        _same_members(twins, audiences, f"contact {index} created")
        for action in actions:
            body = _json({k: v for k, v in action.items() if k != "id" and v is not None})
            answers = [
                t.call("POST", "/v4/actions", json={**body, "subId": ids[i]})
                for i, t in enumerate(pair)
            ]
            assert answers[0].status_code == answers[1].status_code
        _same_members(twins, audiences, f"contact {index}'s actions")
    for index, record in enumerate(updates):
        if not written:
            break
        ids = written[index % len(written)]
        body = {k: v for k, v in _contact(record, 0).items() if k != "email"}
        twins.each("PATCH", [f"/v4/contacts/{i}" for i in ids], body)
        _same_members(twins, audiences, f"update {index}")


def test_the_known_fields_decide_some_audiences_and_leave_others_to_sql(
    pair: tuple[Tenant, Tenant],
) -> None:
    """Both ways are taken: an audience whose contact part is FALSE for the contact needs no
    query, one whose contact part holds leaves its actions part to SQL; the members agree."""
    twins = Twins(pair)
    wheres = [
        {"country": "FR", "actions": {"some": {"name": "share"}}},
        {"OR": [{"points": {"gte": 100}}, {"actions": {"count": {"gte": 2}}}]},
    ]
    audiences = [
        twins.post("/v4/audiences", {"name": f"B{n}", "filters": json.dumps(w)}, "audience")
        for n, w in enumerate(wheres)
    ]
    assert None not in audiences
    before = residuals.TALLY.copy()
    fr = twins.post(
        "/v4/contacts", {"email": "fr@example.com", "country": "FR", "points": 5}, "contact"
    )
    de = twins.post(
        "/v4/contacts", {"email": "de@example.com", "country": "DE", "points": 150}, "contact"
    )
    assert fr is not None and de is not None
    for ids in (fr, de):
        for _ in range(2):
            for i, t in enumerate(pair):
                t.ok(
                    "POST",
                    "/v4/actions",
                    201,
                    json={"name": "share", "increase": 1, "subId": ids[i]},
                )
    tally = residuals.TALLY - before
    assert tally["decided"] > 0 and tally["queried"] > 0, tally
    members = twins.members([a for a in audiences if a is not None])
    assert members == [[["fr@example.com"]] * 2, [["de@example.com", "fr@example.com"]] * 2]


def test_a_filter_over_actions_alone_is_its_own_residual_without_a_walk_per_write(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A filter reading no field of the contact is its residual on every contact: after the
    first write none is worked out or hashed again (a hash walks the whole tree; a write of
    40 such audiences paid 40 walks); equal filters of two audiences still share one residual
    (one column of the judging statement)."""
    wheres = [
        {"actions": {"some": {"name": "share"}}},
        {"actions": {"some": {"name": "share"}}},
        {"actions": {"count": {"gte": 2}}},
    ]
    audiences = [
        StoredAudience(f"a{n}", f"A{n}", SMART, filter_of(SMART, json.dumps(w), None))
        for n, w in enumerate(wheres)
    ]
    contacts = [{"id": "c1", "country": "FR"}, {"id": "c2", "country": "DE"}]
    residuals.split(audiences, contacts, NOW)
    hashed: list[Filter] = []

    def counted(flt: Filter) -> int:
        hashed.append(flt)
        return id(flt)

    monkeypatch.setattr(Filter, "__hash__", counted)
    found = residuals.split(audiences, contacts, NOW)
    assert hashed == []
    first, second = found.residuals()
    assert first == audiences[0].flt and second == audiences[2].flt
    found.answer([{"c1"}, {"c2"}])
    assert found.selected == {"a0": {"c1"}, "a1": {"c1"}, "a2": {"c2"}}


def test_a_write_of_one_contact_reads_it_by_its_id_not_an_expanding_list(
    pair: tuple[Tenant, Tenant],
) -> None:
    """An expanding `IN` is rendered into its statement's text on every execution, and the
    statement deciding a contact's audiences over actions holds every audience's subqueries:
    a write of one contact reads it (its row, its memberships, its recent actions, its
    audiences over actions) by `= ?`, and the answer is the same. The deciding statement's
    1 and 0 are written into it, not bound: two parameters fewer per audience each time."""
    twins = Twins(pair)
    wheres = [
        {"actions": {"count": {"gte": 1}, "where": {"name": "visit"}}},
        {"actions": {"some": {"name": "visit", "createdAt": {"gte": {"ago": "P30D"}}}}},
    ]
    audiences = [
        twins.post("/v4/audiences", {"name": f"V{n}", "filters": json.dumps(w)}, "audience")
        for n, w in enumerate(wheres)
    ]
    ids = twins.post("/v4/contacts", {"email": "visit@example.com"}, "contact")
    assert None not in audiences and ids is not None
    selects: list[str] = []

    def seen(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        if statement.startswith("SELECT"):
            selects.append(" ".join(statement.split()))

    engine = pair[0].client.app.state.db.engine
    event.listen(engine, "before_cursor_execute", seen)
    try:
        for i, t in enumerate(pair):
            body = {"name": "visit", "increase": 1, "subId": ids[i]}
            t.ok("POST", "/v4/actions", 201, json=body)
    finally:
        event.remove(engine, "before_cursor_execute", seen)
    judged = [s for s in selects if "CASE WHEN" in s]
    assert judged and all("WHERE contacts.id = ?" in s for s in judged), judged
    assert all("THEN 1 ELSE 0 END" in s and "THEN ?" not in s for s in judged), judged
    recent = [s for s in selects if s.startswith("SELECT actions.sub_id, actions.created_at")]
    assert recent and all("actions.sub_id = ?" in s for s in recent), recent
    assert not [s for s in selects if "IN (?)" in s]
    members = twins.members([a for a in audiences if a is not None])
    assert members == [[["visit@example.com"]] * 2] * 2
