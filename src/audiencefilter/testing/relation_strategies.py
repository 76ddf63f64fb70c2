"""Hypothesis strategies for relation filters: contacts with 0..many actions, and where
clauses over them (`some`/`every`/`none`, `count`/`sum`/`min`/`max` with `where`).

The literals come from small pools that the generated rows share (names differing only in
case, increases around zero, date-times on the edges of the relative windows at `NOW`), so
conditions on related rows are often TRUE, often FALSE and sometimes UNKNOWN.

    >>> from hypothesis import given
    >>> from audiencefilter.testing.relation_strategies import contacts_with_actions
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from hypothesis import strategies as st

from .strategies import DURATIONS, NOW, _instants

NAMES = ("share", "Share", "SHARE", "login", "sh", "ß")
"""Action names: one word in three cases, a prefix of it, another word, a folding trap."""


def _increase() -> st.SearchStrategy[int | None]:
    return st.one_of(st.none(), st.integers(-3, 12), st.sampled_from((2**53 + 1, -(2**40))))


def _instant_text() -> st.SearchStrategy[str | None]:
    return st.one_of(st.none(), _instants().map(datetime.isoformat))


def action_rows() -> st.SearchStrategy[list[dict[str, Any]]]:
    """The actions of one contact, ids `a0`, `a1`, ...; any field may be null."""
    row = st.fixed_dictionaries(
        {
            "name": st.one_of(st.none(), st.sampled_from(NAMES)),
            "increase": _increase(),
            "createdAt": _instant_text(),
        }
    )
    return st.lists(row, max_size=5).map(
        lambda rows: [{"id": f"a{i}", **row} for i, row in enumerate(rows)]
    )


def contacts_with_actions(max_size: int = 6) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Contacts `r0`, `r1`, ... whose `actions` key is missing, empty or a list of rows."""
    actions = st.one_of(st.just(None), st.just([]), action_rows(), action_rows())
    contact = st.builds(
        lambda rows, points: {"points": points} | ({} if rows is None else {"actions": rows}),
        actions,
        st.one_of(st.none(), st.integers(0, 3)),
    )
    return st.lists(contact, min_size=1, max_size=max_size).map(
        lambda rows: [{"id": f"r{i}", **row} for i, row in enumerate(rows)]
    )


def _moment() -> st.SearchStrategy[Any]:
    return st.one_of(
        _instants().map(datetime.isoformat), st.sampled_from(DURATIONS).map(lambda d: {"ago": d})
    )


def action_conditions() -> st.SearchStrategy[dict[str, Any]]:
    """One condition on an action's field."""
    name = st.one_of(
        st.sampled_from(NAMES).map(lambda v: {"name": v}),
        st.none().map(lambda _: {"name": None}),
        st.builds(
            lambda op, v, mode: {"name": {op: v, "mode": mode}},
            st.sampled_from(("equals", "startsWith", "contains", "endsWith")),
            st.sampled_from(NAMES),
            st.sampled_from(("insensitive", "default")),
        ),
        st.lists(st.sampled_from(NAMES), max_size=3).map(lambda vs: {"name": {"in": vs}}),
    )
    increase = st.builds(
        lambda op, v: {"increase": {op: v}},
        st.sampled_from(("equals", "gt", "gte", "lt", "lte", "not")),
        st.integers(-2, 10),
    )
    created = st.builds(
        lambda op, v: {"createdAt": {op: v}}, st.sampled_from(("gte", "lt")), _moment()
    )
    return st.one_of(name, increase, created)


def action_wheres() -> st.SearchStrategy[dict[str, Any]]:
    """Where clauses over an action's fields: conditions, AND, OR and NOT, and `{}`."""
    leaves = st.one_of(action_conditions(), action_conditions(), st.just({}))
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.lists(children, min_size=1, max_size=3).map(lambda items: {"AND": items}),
            st.lists(children, min_size=1, max_size=3).map(lambda items: {"OR": items}),
            children.map(lambda item: {"NOT": item}),
        ),
        max_leaves=4,
    )


def _number_test() -> st.SearchStrategy[Any]:
    return st.one_of(
        st.integers(0, 4),
        st.builds(
            lambda op, v: {op: v},
            st.sampled_from(("equals", "gt", "gte", "lt", "lte", "not")),
            st.integers(-2, 15),
        ),
        st.lists(st.integers(0, 4), max_size=3).map(lambda vs: {"in": vs}),
    )


def _aggregate() -> st.SearchStrategy[dict[str, Any]]:
    count = _number_test().map(lambda test: {"count": test})
    total = _number_test().map(lambda test: {"sum": {"increase": test}})
    ranged = st.builds(
        lambda function, field, test: {function: {field: test}},
        st.sampled_from(("min", "max")),
        st.just("increase"),
        st.one_of(_number_test(), st.none()),
    )
    dated = st.builds(
        lambda function, op, moment: {function: {"createdAt": {op: moment}}},
        st.sampled_from(("min", "max")),
        st.sampled_from(("gte", "lt", "equals")),
        _moment(),
    )
    return st.one_of(count, total, ranged, dated)


def relation_wheres() -> st.SearchStrategy[dict[str, Any]]:
    """Where clauses on contacts with relation conditions on `actions`, now and then with a
    contact field beside them or negated."""
    quantified = st.builds(
        lambda q, w: {"actions": {q: w}},
        st.sampled_from(("some", "every", "none")),
        action_wheres(),
    )
    aggregated = st.builds(
        lambda aggregate, narrow, where: {
            "actions": ({"where": where} if narrow else {}) | aggregate
        },
        _aggregate(),
        st.booleans(),
        action_wheres(),
    )
    condition = st.one_of(quantified, aggregated)
    return st.one_of(
        condition,
        condition.map(lambda c: {"NOT": c}),
        st.lists(condition, min_size=2, max_size=3).map(lambda cs: {"OR": cs}),
        condition.map(lambda c: {**c, "points": {"gte": 1}}),
    )


def _calendar_value() -> st.SearchStrategy[dict[str, Any]]:
    zone = st.sampled_from((None, "Europe/Paris", "Asia/Tokyo"))
    unit = st.sampled_from(("day", "week", "month", "year"))

    def zoned(value: dict[str, Any], time_zone: str | None) -> dict[str, Any]:
        return value if time_zone is None else {**value, "timeZone": time_zone}

    start = st.builds(
        lambda u, offset, z: zoned({"startOf": u, "offset": offset}, z),
        unit,
        st.integers(-3, 3),
        zone,
    )
    return start


def _period() -> st.SearchStrategy[dict[str, Any]]:
    unit = st.sampled_from(("day", "week", "month", "year"))
    this = unit.map(lambda u: {"this": u})
    last = st.builds(lambda n, u: {"last": n, "unit": u}, st.integers(1, 30), unit)
    upcoming = st.builds(lambda n, u: {"next": n, "unit": u}, st.integers(1, 30), unit)
    return st.one_of(this, last, upcoming)


def _dated_test() -> st.SearchStrategy[Any]:
    """A test on a date-time value: an instant, the start of a unit, a period, an anniversary,
    any of them negated."""
    plain = st.one_of(
        st.builds(lambda op, v: {op: v}, st.sampled_from(("gte", "lt", "equals")), _moment()),
        st.builds(lambda op, v: {op: v}, st.sampled_from(("gte", "lt")), _calendar_value()),
        _period().map(lambda p: {"within": p}),
        _period().map(lambda p: {"anniversary": p}),
        st.just(None),
    )
    return st.one_of(plain, plain.map(lambda t: {"not": t}))


def negated_tests(test: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Tests of one value with `not`s nested in them, now and then beside another operator
    (`{"not": {"not": 5}}`, `{"not": {"gt": 1, "not": {"in": [2]}}}`): on an aggregate they
    read as groups of aggregates, which every writer must spell so that they read back."""

    def beside(pair: tuple[Any, Any]) -> dict[str, Any]:
        negated, other = pair
        kept = other if type(other) is dict and "not" not in other else {}
        return {**kept, "not": negated}

    return st.recursive(
        test,
        lambda inner: st.one_of(
            inner.map(lambda t: {"not": t}), st.tuples(inner, inner).map(beside)
        ),
        max_leaves=4,
    )


def every_kind_wheres() -> st.SearchStrategy[dict[str, Any]]:
    """Relation filters over every kind of test an aggregate or a related row can hold:
    negated tests, calendar starts, periods, anniversaries and references between two fields
    of the related row, besides `relation_wheres`. For round trips of the text syntax."""
    dated = st.builds(
        lambda function, narrow, where, test: {
            "actions": ({"where": where} if narrow else {}) | {function: {"createdAt": test}}
        },
        st.sampled_from(("min", "max")),
        st.booleans(),
        action_wheres(),
        negated_tests(_dated_test()),
    )
    number = negated_tests(_number_test())
    negated_number = st.one_of(
        number.map(lambda t: {"count": t}),
        number.map(lambda t: {"sum": {"increase": t}}),
        st.builds(
            lambda function, t: {function: {"increase": t}},
            st.sampled_from(("min", "max")),
            negated_tests(st.one_of(_number_test(), st.none())),
        ),
    )
    reference = st.builds(
        lambda q, op: {"actions": {q: {"name": {op: {"_ref": "id"}}}}},
        st.sampled_from(("some", "every", "none")),
        st.sampled_from(("equals", "gt", "lte", "not")),
    )
    within_row = st.builds(
        lambda q, test: {"actions": {q: {"createdAt": test}}},
        st.sampled_from(("some", "every", "none")),
        _dated_test().filter(lambda t: t is not None),
    )
    narrowed = st.builds(
        lambda aggregate, narrow, where: {
            "actions": ({"where": where} if narrow else {}) | aggregate
        },
        negated_number,
        st.booleans(),
        action_wheres(),
    )
    extra = st.one_of(dated, narrowed, reference, within_row)
    return st.one_of(
        relation_wheres(),
        extra,
        extra.map(lambda c: {"NOT": c}),
        st.lists(extra, min_size=2, max_size=3).map(lambda cs: {"AND": cs}),
        st.lists(extra, min_size=2, max_size=3).map(lambda cs: {"OR": cs}),
    )


__all__ = [
    "every_kind_wheres",
    "negated_tests",
    "NAMES",
    "NOW",
    "action_conditions",
    "action_rows",
    "action_wheres",
    "contacts_with_actions",
    "relation_wheres",
]
