"""Literals Python's `==` joins are one condition only where the language says so.

`True == 1`, `False == 0 == -0.0` and `1 == 1.0` in Python, and they hash alike. A boolean is
never a number in a filter, while numbers equal by value are one number (`values.value_key`).
Whatever shares conditions must follow the language, not Python: filter equality and hashing,
`FilterSet`'s distinct conditions, `simplify`'s duplicates. Each is compared, over records
holding every lookalike, with the filters' own answers, for each placement of the field (a
path into `data`, a field declared inside JSON, a column or list column, each also inside a
related row), each operator and each pair of lookalike literals.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter import Relation

LOOKALIKES = (True, False, 1, 0, 1.0, 0.0, -0.0)
PAIRS = ((True, 1), (False, 0), (-0.0, 0), (1, 1.0), (True, 1.0), (False, -0.0))


def _schema(name: str) -> af.Schema:
    return af.Schema.of(
        name,
        data="json",
        isVerified="boolean",
        points="number",
        tagsB="boolean[]",
        tagsN="number[]",
    ).with_fields(
        optinB=("boolean", ("data", "optin")),
        optinN=("number", ("data", "optin")),
        flagsB=("boolean[]", ("data", "flags")),
        flagsN=("number[]", ("data", "flags")),
    )


SCHEMA = _schema("contact").with_relations(Relation("events", _schema("event")))


def _is_bool(value: object) -> bool:
    return isinstance(value, bool)


def _row(value: Any) -> dict[str, Any]:
    """One record holding `value` at every place a condition reads (where its type fits)."""
    boolean = value is None or _is_bool(value)
    number = value is None or not _is_bool(value)
    return {
        "data": {"optin": value, "flags": [value]},
        "isVerified": value if boolean else None,
        "points": value if number else None,
        "tagsB": [value] if boolean else [],
        "tagsN": [value] if number else [],
    }


ROWS = [_row(value) for value in (*LOOKALIKES, None)]
ROWS.append({"data": {"optin": "1", "flags": [True, 0]}, "tagsB": [True], "tagsN": [0]})

# An operator's body for one literal: booleans take `equals`/`not` where numbers take a list.
Body = Callable[[Any], dict[str, Any]]
SCALAR_OPS: dict[str, Body] = {
    "equals": lambda v: {"equals": v},
    "not": lambda v: {"not": v},
    "in": lambda v: {"equals": v} if _is_bool(v) else {"in": [v, 5]},
    "notIn": lambda v: {"not": v} if _is_bool(v) else {"notIn": [v, 5]},
}
LIST_OPS: dict[str, tuple[Body, Body]] = {  # (at a JSON path, on a list field)
    "array_contains/has": (lambda v: {"array_contains": v}, lambda v: {"has": v}),
    "array_ends_with/hasSome": (
        lambda v: {"array_ends_with": v},
        lambda v: {"hasSome": [v] if _is_bool(v) else [v, 5]},
    ),
}


def _where(placement: str, op: str, value: Any) -> dict[str, Any]:
    """The condition `op value` at `placement` (`related-...`: inside an `events` row)."""
    if placement.startswith("related-"):
        return {"events": {"some": _where(placement.removeprefix("related-"), op, value)}}
    suffix = "B" if _is_bool(value) else "N"
    if op in SCALAR_OPS:
        body = SCALAR_OPS[op](value)
        if placement == "path":
            return {"data": {"path": ["optin"], **body}}
        field = f"optin{suffix}" if placement == "declared" else None
        return {field or ("isVerified" if _is_bool(value) else "points"): body}
    at_path, on_list = LIST_OPS[op]
    if placement == "path":
        return {"data": {"path": ["flags"], **at_path(value)}}
    field = f"flags{suffix}" if placement == "declared" else f"tags{suffix}"
    return {field: on_list(value)}


def _record(placement: str, row: dict[str, Any]) -> dict[str, Any]:
    return {"events": [row]} if placement.startswith("related-") else row


PLACEMENTS = ("path", "declared", "column")
PLACEMENTS = (*PLACEMENTS, *(f"related-{p}" for p in PLACEMENTS))
CASES = [
    pytest.param(placement, op, a, b, id=f"{placement}-{op}-{a!r}-{b!r}")
    for placement in PLACEMENTS
    for op in (*SCALAR_OPS, *LIST_OPS)
    for a, b in PAIRS
]


def _answers(flt: af.Filter, placement: str) -> list[bool]:
    return [flt.matches(_record(placement, row)) for row in ROWS]


@pytest.mark.parametrize(("placement", "op", "a", "b"), CASES)
def test_lookalikes_are_shared_only_when_one_literal(
    placement: str, op: str, a: Any, b: Any
) -> None:
    first, second = (af.parse(_where(placement, op, v), SCHEMA) for v in (a, b))
    alone = list(zip(_answers(first, placement), _answers(second, placement), strict=True))
    same = all(x == y for x, y in alone)

    # Equality and hashing: equal filters are those that answer alike (the rows tell apart
    # every pair of literals that are not one), and so are their lowered trees.
    assert (first == second) is same
    assert (first.lowered == second.lowered) is same
    assert len({first, second}) == (1 if same else 2)

    # A set of both answers as each alone, in either order.
    for pair in ((first, second), (second, first)):
        together = af.FilterSet(pair)
        for row in ROWS:
            record = _record(placement, row)
            expected = [k for k, flt in enumerate(pair) if flt.matches(record)]
            assert together.matching(record) == expected

    # Both in one filter: its answers are those of its parts, and simplify keeps them.
    for group in ("OR", "AND", "NOT"):
        both = af.parse({group: [_where(placement, op, a), _where(placement, op, b)]}, SCHEMA)
        answers = _answers(both, placement)
        assert _answers(both.simplify(), placement) == answers
        if group == "OR":
            assert answers == [x or y for x, y in alone]
        elif group == "AND":
            assert answers == [x and y for x, y in alone]


@pytest.mark.parametrize(("a", "b"), [pair for pair in PAIRS if _is_bool(pair[0])])
@pytest.mark.parametrize("order", ["boolean first", "number first"])
def test_a_number_in_a_boolean_list_is_refused_whatever_stands_beside_it(
    a: Any, b: Any, order: str
) -> None:
    """MongoDB's `$in` on a boolean field is one equality per value: a number among them is
    refused, even beside the boolean Python finds equal to it."""
    values = [a, b] if order == "boolean first" else [b, a]
    with pytest.raises(af.FilterError, match="expected true or false"):
        af.from_format({"isVerified": {"$in": values}}, "mongodb")
