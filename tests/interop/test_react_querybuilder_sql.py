"""Our reading of a react-querybuilder query means what react-querybuilder's own SQL export of
it means: generated rule groups go through `formatQuery(query, "sql")` in Node and run on
SQLite over generated contacts, and our reading of the same query runs in memory; the answers
are equal (docs/interop.md)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import react_querybuilder as rqb
from tests.interop.contacts_db import (
    BOOLEAN_FIELDS,
    NUMBER_FIELDS,
    TEXT_FIELDS,
    contacts,
    selected,
    sqlite_with,
)
from tests.interop.node_runner import FormatSql

PLAIN = ("", "a", "A", "ab", "B", "ba", "abc", "a b", "o'k")
"""Values a rule compares with (no % or _, which the reader refuses)."""
ORDER = ("=", "!=", "<", ">", "<=", ">=")
PATTERNS = (
    "contains",
    "beginsWith",
    "endsWith",
    "doesNotContain",
    "doesNotBeginWith",
    "doesNotEndWith",
)


def _numeral() -> st.SearchStrategy[Any]:
    return st.integers(-3, 3) | st.integers(-3, 3).map(str)


@st.composite
def rules(draw: st.DrawFn) -> dict[str, Any]:
    """One rule of react-querybuilder's default operators over a contact field."""
    kind = draw(st.sampled_from(("text", "number", "boolean")))
    if kind == "boolean":
        return _boolean_rule(draw)
    fields = TEXT_FIELDS if kind == "text" else NUMBER_FIELDS
    field = draw(st.sampled_from(fields))
    value = st.sampled_from(PLAIN) if kind == "text" else _numeral()
    operators = ORDER + ("null", "notNull", "in", "notIn", "between", "notBetween")
    operator = draw(st.sampled_from(operators + (PATTERNS if kind == "text" else ())))
    rule: dict[str, Any] = {"field": field, "operator": operator}
    if operator in ORDER and draw(st.integers(0, 4)) == 0:
        rule.update(
            value=draw(st.sampled_from([f for f in fields if f != field])), valueSource="field"
        )
    else:
        rule["value"] = _value(draw, operator, value)
    _extras(draw, rule)
    return rule


def _value(draw: st.DrawFn, operator: str, value: st.SearchStrategy[Any]) -> Any:
    if operator in ("null", "notNull"):
        return draw(st.none() | value)  # ignored by the export
    if operator in ("in", "notIn"):
        items = draw(st.lists(value, min_size=1, max_size=3))
        joined = ",".join(str(v) for v in items)
        usable = all(str(v).strip() and "," not in str(v) for v in items)
        return joined if usable and draw(st.booleans()) else items
    if operator in ("between", "notBetween"):
        return draw(st.lists(value.filter(lambda v: str(v).strip() != ""), min_size=2, max_size=2))
    return draw(value)


def _boolean_rule(draw: st.DrawFn) -> dict[str, Any]:
    operator = draw(st.sampled_from(("=", "!=", "null", "notNull")))
    return {"field": BOOLEAN_FIELDS[0], "operator": operator, "value": draw(st.booleans())}


def _extras(draw: st.DrawFn, rule: dict[str, Any]) -> None:
    """What the component adds or the user sets: ids, `disabled` (still exported) and
    `muted` (left out)."""
    if draw(st.integers(0, 5)) == 0:
        rule["muted"] = True
    if draw(st.integers(0, 5)) == 0:
        rule["disabled"] = True
    rule["id"] = draw(st.sampled_from(("r-1", "r-2")))


def groups(children: st.SearchStrategy[Any]) -> st.SearchStrategy[dict[str, Any]]:
    """Rule groups with one combinator, or with independent combinators."""
    members = st.lists(children, max_size=4)
    plain = st.builds(
        lambda combinator, negated, rules, muted: {
            "combinator": combinator,
            "not": negated,
            "rules": rules,
            **({"muted": True} if muted else {}),
        },
        st.sampled_from(("and", "or", "AND")),
        st.booleans(),
        members,
        st.integers(0, 7).map(lambda n: n == 0),
    )
    independent = st.builds(
        _independent,
        members,
        st.lists(st.sampled_from(("and", "or")), min_size=4, max_size=4),
        st.booleans(),
    )
    return plain | independent


def _independent(items: list[Any], words: list[str], negated: bool) -> dict[str, Any]:
    rules: list[Any] = []
    for index, item in enumerate(items):
        if index:
            rules.append(words[index - 1])
        rules.append(item)
    return {"rules": rules, "not": negated}


QUERIES = st.recursive(rules(), groups, max_leaves=8).map(
    lambda q: q if "rules" in q else {"combinator": "and", "rules": [q]}
)


def _ours(query: dict[str, Any], rows: list[dict[str, Any]]) -> set[int]:
    flt = Filter(rqb.read(query, af.CONTACT))
    return {row["id"] for row in rows if flt.matches(row)}


@pytest.mark.slow
@settings(max_examples=60)
@given(query=QUERIES, rows=contacts())
@example(  # a != excludes the null row, in SQL and in ours
    query={"combinator": "and", "rules": [{"field": "country", "operator": "!=", "value": "a"}]},
    rows=[
        {
            "id": 1,
            "country": None,
            "email": None,
            "city": None,
            "points": None,
            "referrals": None,
            "isVerified": None,
            "actions": [],
        }
    ],
)
@example(  # NOT of a group holding only an empty group is NOT (1 = 1)
    query={"combinator": "and", "not": True, "rules": [{"combinator": "or", "rules": []}]},
    rows=[
        {
            "id": 1,
            "country": "a",
            "email": None,
            "city": None,
            "points": 1,
            "referrals": None,
            "isVerified": True,
            "actions": [],
        }
    ],
)
@example(  # "and" binds tighter than "or" between independent combinators
    query={
        "rules": [
            {"field": "points", "operator": "=", "value": "1"},
            "or",
            {"field": "points", "operator": "=", "value": "2"},
            "and",
            {"field": "country", "operator": "=", "value": "a"},
        ]
    },
    rows=[
        {
            "id": 1,
            "country": "b",
            "email": None,
            "city": None,
            "points": 1,
            "referrals": None,
            "isVerified": None,
            "actions": [],
        }
    ],
)
def test_reading_means_what_the_sql_export_means(
    format_sql: FormatSql, query: dict[str, Any], rows: list[dict[str, Any]]
) -> None:
    sql = format_sql(query)
    db = sqlite_with(rows, case_sensitive_like=False)  # LIKE as SQLite ships it
    try:
        assert _ours(query, rows) == selected(db, sql), sql
    finally:
        db.close()


def test_the_export_skips_muted_rules_and_keeps_disabled_ones(format_sql: FormatSql) -> None:
    query = {
        "combinator": "and",
        "rules": [
            {"field": "points", "operator": ">", "value": "1", "muted": True},
            {"field": "country", "operator": "=", "value": "FR", "disabled": True},
        ],
    }
    assert format_sql(query) == "(country = 'FR')"
    assert Filter(rqb.read(query, af.CONTACT)).to_json() == '{"country":{"equals":"FR"}}'


def test_the_export_passes_wildcards_to_like(format_sql: FormatSql) -> None:
    """Why a `%` or `_` in a pattern's value is refused: the export does not escape it."""
    query = {
        "combinator": "and",
        "rules": [{"field": "email", "operator": "contains", "value": "x_y"}],
    }
    assert format_sql(query) == "(email like '%x_y%')"
    with pytest.raises(af.FilterError, match="wildcards"):
        rqb.read(query, af.CONTACT)


@settings(max_examples=80)
@given(query=QUERIES)
def test_react_querybuilder_to_ours_and_back_reads_the_same(query: dict[str, Any]) -> None:
    """A query we read, written back, reads to the same filter (the writer's query may be
    spelt otherwise: numerals as numbers, `!=` for a negated group of one `=`)."""
    first = rqb.read(query, af.CONTACT)
    again = rqb.read(rqb.write(first, af.CONTACT), af.CONTACT)
    assert Filter(again).to_json() == Filter(first).to_json()
