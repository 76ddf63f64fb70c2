"""The filters both algebra suites draw: one grammar of conditions over the same small fields.

`tests/test_algebra.py` checks proofs and witnesses with `matches` over an enumerated domain;
`tests/test_algebra_engines.py` checks them again on every engine. Both draw their filters from
here, so a condition added to the algebra's fragment reaches both suites at once; each adds only
the date and time conditions its own domain and clock give meaning to.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from hypothesis import strategies as st

Where = dict[str, Any]


def scalar_conditions(
    nullable: Iterable[str], *, empty_lists: bool
) -> list[st.SearchStrategy[Where]]:
    """Conditions on `n` (number), `s` (string), `b` (boolean) and `tags` (string list), and
    the null tests of the `nullable` fields. `empty_lists` allows `in: []`, which some surfaces
    refuse rather than answer (the engines' suite draws non-empty lists)."""
    smallest = 0 if empty_lists else 1
    number = st.sampled_from([1, 2, 3])
    text = st.sampled_from(["a", "A", "b", "ab"])
    fields = st.sampled_from(list(nullable))
    return [
        st.builds(
            lambda op, v: {"n": {op: v}},
            st.sampled_from(["equals", "gt", "gte", "lt", "lte"]),
            number,
        ),
        st.builds(
            lambda op, v: {"n": {op: v}},
            st.sampled_from(["in", "notIn"]),
            st.lists(number, min_size=smallest, max_size=2),
        ),
        st.builds(lambda op, v: {"n": {"not": {op: v}}}, st.sampled_from(["equals", "gt"]), number),
        st.builds(
            lambda op, v, i: {"s": {op: v, **({"mode": "insensitive"} if i else {})}},
            st.sampled_from(["equals", "gt", "lt", "startsWith", "contains", "endsWith"]),
            text,
            st.booleans(),
        ),
        st.builds(lambda v: {"s": {"in": v}}, st.lists(text, min_size=smallest, max_size=2)),
        st.builds(lambda v: {"b": v}, st.sampled_from([True, False])),
        st.builds(lambda f: {f: None}, fields),
        st.builds(lambda f: {f: {"not": None}}, fields),
        st.builds(lambda v: {"tags": {"has": v}}, st.sampled_from(["a", "b"])),
        st.builds(
            lambda v: {"tags": {"hasSome": v}},
            st.lists(st.sampled_from(["a", "b"]), min_size=smallest, max_size=2),
        ),
        st.builds(lambda v: {"tags": {"isEmpty": v}}, st.booleans()),
    ]


def wheres(conditions: st.SearchStrategy[Where], *, max_leaves: int) -> st.SearchStrategy[Where]:
    """Conditions joined by AND, OR and NOT, at most `max_leaves` of them."""
    return st.recursive(
        conditions,
        lambda inner: st.one_of(
            st.builds(lambda xs: {"AND": xs}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda xs: {"OR": xs}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda x: {"NOT": x}, inner),
        ),
        max_leaves=max_leaves,
    )
