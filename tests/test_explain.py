"""Explanations: every node's three-valued outcome, agreeing with the compiled predicate."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given

from audiencefilter import Filter, Outcome, RecordError, parse_text
from audiencefilter.explain import _Explainer
from audiencefilter.language.visitor import missing_handlers
from audiencefilter.testing.strategies import NOW, filters, records


@given(filters(), records())
def test_explanation_agrees_with_the_compiled_predicate(
    flt: Filter, record: dict[str, Any]
) -> None:
    explanation = flt.explain(record, now=NOW)
    assert explanation.matched == flt.matches(record, now=NOW)
    assert str(explanation)  # renders for any filter and record


@given(filters(hostile=True), records(hostile=True))
def test_agreement_holds_for_hostile_strings(flt: Filter, record: dict[str, Any]) -> None:
    assert flt.explain(record, now=NOW).matched == flt.matches(record, now=NOW)


def test_render_golden() -> None:
    flt = parse_text(
        'points >= 100 and (country in ["FR", "DE"] or email ends with "@acme.com") '
        'and not (city = "Paris" or company is null) and referrals != 3'
    )
    record = {"points": 150, "country": "US", "city": "Lyon", "company": "Acme", "referrals": None}
    assert flt.explain(record).render() == (
        "? UNKNOWN  all of\n"
        "  ✓ TRUE     points >= 100                   (points = 150)\n"
        "  ? UNKNOWN  any of\n"
        '    ✗ FALSE    country in ["FR", "DE"]       (country = "US")\n'
        '    ? UNKNOWN  email ends with "@acme.com"   (email is missing)\n'
        "  ✓ TRUE     not\n"
        "    ✗ FALSE    any of\n"
        '      ✗ FALSE    city = "Paris"              (city = "Lyon")\n'
        '      ✗ FALSE    company is null             (company = "Acme")\n'
        "  ? UNKNOWN  referrals != 3                  (referrals is null)"
    )
    assert not flt.matches(record)


@pytest.mark.parametrize(
    ("text", "record", "outcome"),
    [
        ("points > 1", {"points": 2}, Outcome.TRUE),
        ("points > 1", {"points": 1}, Outcome.FALSE),
        ("points > 1", {}, Outcome.UNKNOWN),
        ("not (points > 1)", {"points": None}, Outcome.UNKNOWN),
        ("points != 1", {"points": None}, Outcome.UNKNOWN),
        ("country in []", {}, Outcome.FALSE),
        ("country not in []", {"country": None}, Outcome.TRUE),
        ("company is null", {}, Outcome.TRUE),
        ("company is null", {"company": ""}, Outcome.FALSE),
        ("company is not null", {"company": ""}, Outcome.TRUE),
        ('email contains "GMAIL"', {"email": "x@gmail.com"}, Outcome.TRUE),
        ('email = "X@Y" ignoring case', {"email": "x@y"}, Outcome.TRUE),
        ('email = "X@Y"', {"email": "x@y"}, Outcome.FALSE),
        ('country in ["fr"] ignoring case', {"country": "FR"}, Outcome.TRUE),
        ("createdAt >= 2025-01-01", {"createdAt": "2025-01-01T01:00:00+02:00"}, Outcome.FALSE),
        ("createdAt >= 2025-01-01", {"createdAt": datetime(2025, 1, 1, tzinfo=UTC)}, Outcome.TRUE),
        ("points = 9007199254740993", {"points": 9007199254740992}, Outcome.FALSE),
        ("true or points > 1", {}, Outcome.TRUE),
        ("false and points > 1", {}, Outcome.FALSE),
        ("points > 1 or points < 0", {}, Outcome.UNKNOWN),
    ],
)
def test_outcomes(text: str, record: dict[str, Any], outcome: Outcome) -> None:
    flt = parse_text(text)
    explanation = flt.explain(record)
    assert explanation.outcome is outcome
    assert explanation.matched == flt.matches(record) == (outcome is Outcome.TRUE)


def test_conditions_keep_the_value_they_saw() -> None:
    explanation = parse_text('points >= 100 and company != "x"').explain({"points": 42})
    points, company = explanation.children
    assert (points.field, points.value, points.present) == ("points", 42, True)
    assert (company.field, company.value, company.present) == ("company", None, False)
    assert points.seen == "points = 42" and company.seen == "company is missing"
    assert company.label == 'company != "x"' and explanation.label == "all of"


def test_nothing_is_short_circuited() -> None:
    explanation = parse_text('points > 1 and city = "x" and email = "y"').explain({})
    assert [c.outcome for c in explanation.children] == [Outcome.UNKNOWN] * 3


def test_outcome_negation_is_kleene() -> None:
    assert ~Outcome.TRUE is Outcome.FALSE
    assert ~Outcome.FALSE is Outcome.TRUE
    assert ~Outcome.UNKNOWN is Outcome.UNKNOWN


def test_wrongly_typed_values_raise_record_error() -> None:
    flt = parse_text("points > 1")
    with pytest.raises(RecordError, match='field "points" holds str'):
        flt.explain({"points": "many"})
    with pytest.raises(RecordError, match="createdAt"):
        parse_text("createdAt > 2025-01-01").explain({"createdAt": "soon"})
    with pytest.raises(RecordError, match="mapping"):
        flt.explain(["points", 2])  # type: ignore[arg-type]


def test_explainer_handles_every_node_kind() -> None:
    assert missing_handlers(_Explainer) == []


def test_a_list_seen_is_shown_as_filters_write_it() -> None:
    # `tags = ["beta"]`, as the text syntax writes a list, not Python's `['beta']`; a date as
    # its ISO day, not `datetime.date(...)`.
    import audiencefilter as af

    schema = af.Schema.of(tags="string[]", day="date")
    tags = parse_text('tags has "vip"', schema).explain({"tags": ["beta", 'say "hi"'], "day": None})
    assert tags.seen == 'tags = ["beta", "say \\"hi\\""]'
    from datetime import date

    day = parse_text('day = "2025-01-31"', schema).explain({"tags": [], "day": date(2025, 2, 1)})
    assert day.seen == "day = 2025-02-01"
