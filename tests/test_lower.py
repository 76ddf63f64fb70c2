"""Lowering: the decisions every back-end shares are taken once, in `rewrite/lower.py`."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import audiencefilter as af
from audiencefilter import FALSE, TRUE, Comparison, IsNull, Not, Op, Or
from audiencefilter.language.contact import CONTACT
from audiencefilter.language.nodes import walk
from audiencefilter.language.relative import Ago
from audiencefilter.language.values import unique
from audiencefilter.rewrite.lower import lower

NOW = datetime(2025, 3, 31, 12, tzinfo=UTC)
CUSTOM = CONTACT.with_fields(plan=("string", ("data", "plan")), seats=("number", ("data", "n")))


def test_empty_lists_become_constants() -> None:
    tree = af.parse_text("country in [] or not (city not in [])").root
    assert lower(tree, CONTACT) == Or((FALSE, Not(TRUE)))


def test_insensitive_literals_are_folded_then_listed_once() -> None:
    tree = af.parse({"country": {"in": ["FR", "fr", "De"], "mode": "insensitive"}}).root
    assert lower(tree, CONTACT) == Comparison("country", Op.IN, ("fr", "de"), insensitive=True)
    single = af.parse({"email": {"contains": "GMAIL"}}).root
    assert lower(single, CONTACT) == Comparison("email", Op.CONTAINS, "gmail", insensitive=True)


def test_a_case_sensitive_list_keeps_its_case_and_loses_its_repeats() -> None:
    tree = af.parse({"country": {"notIn": ["FR", "fr", "FR"]}}).root
    assert lower(tree, CONTACT) == Comparison("country", Op.NOT_IN, ("FR", "fr"))


def test_list_literals_are_unique_per_type() -> None:
    # `1` and `1.0` are one number; `true` is no number, `"1"` no number.
    assert unique((1, True, 1.0, 1, "1", True, -0.0, 0, False)) == (1, True, "1", -0.0, False)
    node = Comparison("data", Op.IN, (1, True, 1), path=("n",))
    assert lower(node, CONTACT) == Comparison("data", Op.IN, (1, True), path=("n",))


def test_a_declared_json_field_becomes_a_read_at_its_path() -> None:
    tree = af.parse({"plan": {"equals": "pro"}, "seats": None}, CUSTOM).root
    lowered = lower(tree, CUSTOM)
    assert Comparison("data", Op.EQUALS, "pro", path=("plan",)) in walk(lowered)
    assert IsNull("data", ("n",)) in walk(lowered)


def test_date_time_literals_are_utc_instants() -> None:
    paris = timezone(timedelta(hours=2))
    node = Comparison("createdAt", Op.IN, (datetime(2025, 6, 1, 2, tzinfo=paris),))
    lowered = lower(node, CONTACT)
    assert isinstance(lowered, Comparison)
    assert lowered.value == (datetime(2025, 6, 1, 0, tzinfo=UTC),)
    assert lowered.value[0].tzinfo is UTC  # type: ignore[index, union-attr]


def test_relative_date_times_are_taken_at_one_now_or_kept() -> None:
    tree = af.parse_text("createdAt >= 1 month ago and createdAt < 1 day ago").root
    at_now = lower(tree, CONTACT, NOW)
    instants = [n.value for n in walk(at_now) if isinstance(n, Comparison)]
    assert instants == [
        datetime(2025, 2, 28, 12, tzinfo=UTC),
        datetime(2025, 3, 30, 12, tzinfo=UTC),
    ]
    kept = [n.value for n in walk(lower(tree, CONTACT)) if isinstance(n, Comparison)]
    assert kept == [Ago(1, 0), Ago(0, 86_400_000_000)]


def test_the_filter_lowers_once_and_back_ends_read_the_lowered_tree() -> None:
    flt = af.parse(
        {"country": {"in": []}, "email": {"endsWith": "@ACME.COM", "mode": "insensitive"}}
    )
    assert flt.lowered is flt.lowered
    assert flt.lowered_at(NOW) is flt.lowered  # an absolute filter has one lowered tree
    sql = flt.to_sql("sqlite")
    assert sql.startswith("0 AND ") and "'@acme.com'" in sql and "ACME" not in sql
    assert not flt.matches({"country": "FR", "email": "x@acme.com"})
