"""A write judges only the audiences reading what it changed (issue 30: a list's audiences
evaluated together, with an index from fields to the audiences that read them).

The index is only sound if no audience it leaves out could change its answer: the property
below changes random columns of random records and checks every audience left out against the
library's own answer before and after, so a filter reading a column by another name (a custom
field kept in `data`) fails it.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.service.app import create_app
from audiencefilter.service.domain.audience_filters import SCHEMA, StoredAudience
from audiencefilter.service.domain.membership.plan import build
from audiencefilter.testing.strategies import records, where_clauses

from .audience_helpers import member_emails, smart
from .conftest import ApiClient, make_tenant, sqlite_settings

NOW = datetime(2026, 11, 20, 12, tzinfo=UTC)
TYPED = SCHEMA.with_fields(birthday=("date", ("data", "birthday")))
TYPED_FIELDS = '{"birthday":"date"}'  # as audiences store the declarations their filter reads
COLUMNS = [field.name for field in TYPED.fields if not field.source]


def _stored(index: int, flt: af.Filter) -> StoredAudience:
    return StoredAudience(f"aud_{index}", f"A{index}", "smart", flt)


def reading(audiences: list[StoredAudience], changed: set[str]) -> list[StoredAudience]:
    """What the list's plan judges after a write of `changed`, for these audiences."""
    rows = [(a.id, a.name, a.mode, _canonical(a), TYPED_FIELDS) for a in audiences]
    return build(rows).reading(changed)


def _canonical(audience: StoredAudience) -> str:
    assert audience.flt is not None
    return audience.flt.to_json()


@given(
    clauses=st.lists(where_clauses(TYPED, max_leaves=4), min_size=1, max_size=6),
    before=records(TYPED),
    after=records(TYPED),
    changed=st.sets(st.sampled_from(COLUMNS), max_size=3),
)
def test_an_audience_left_out_by_a_write_keeps_its_answer(
    clauses: list[dict[str, Any]],
    before: dict[str, Any],
    after: dict[str, Any],
    changed: set[str],
) -> None:
    audiences = [_stored(i, af.parse(c, TYPED)) for i, c in enumerate(clauses)]
    # The write changes exactly `changed`: every other column keeps its value.
    written = {k: v for k, v in before.items() if k not in changed}
    written.update({k: after[k] for k in changed if k in after})
    judged = {a.id for a in reading(audiences, changed)}
    for audience in audiences:
        if audience.id not in judged:
            assert audience.flt is not None
            assert audience.flt.matches(before, now=NOW) == audience.flt.matches(
                written, now=NOW
            ), (audience.flt.to_json(), changed)


def test_a_custom_field_is_read_through_its_column() -> None:
    birthday = _stored(0, af.parse({"birthday": {"equals": "1990-11-16"}}, TYPED))
    points = _stored(1, af.parse({"points": {"gt": 1}}, TYPED))
    assert [a.id for a in reading([birthday, points], {"data"})] == ["aud_0"]
    assert [a.id for a in reading([birthday, points], {"email"})] == []


def test_readers_of_audiences_follow_any_audience_judged() -> None:
    points = _stored(0, af.parse({"points": {"gt": 1}}, TYPED))
    follows = _stored(1, af.parse({"audiences": {"some": {"name": "A0"}}}, TYPED))
    assert [a.id for a in reading([points, follows], {"points"})] == ["aud_0", "aud_1"]
    assert reading([points, follows], {"email"}) == []


def test_a_write_of_a_field_no_filter_reads_changes_no_membership(tmp_path: Path) -> None:
    client = ApiClient(
        create_app(sqlite_settings(tmp_path / "index.db", membership_sweep_seconds=0))
    )
    tenant = make_tenant(client)
    lst = tenant.new_list()["id"]
    rich = smart(tenant, lst, {"points": {"gte": 10}}, name="Rich")["id"]
    named = smart(tenant, lst, {"firstName": {"startsWith": "A"}}, name="A names")["id"]
    contact = tenant.new_contact(lst, "ann@example.com", points=20, firstName="Ann")
    events_before = tenant.ok("GET", "/v4/events", params={"listId": lst})["events"]
    tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"city": "Lyon"})
    tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"firstName": "Bob"})
    events_after = tenant.ok("GET", "/v4/events", params={"listId": lst})["events"]
    kinds = [e["type"] for e in events_after[len(events_before) :]]
    assert kinds == ["contact.updated", "contact.updated", "audience.left"]
    assert member_emails(tenant, rich) == ["ann@example.com"]
    assert member_emails(tenant, named) == []
    client.close()
