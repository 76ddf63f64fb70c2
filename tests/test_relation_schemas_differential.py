"""Random relation schemas with list and JSON fields, on every engine.

A related row with its own `tags: string[]` and `data: json` beside a contact that has fields of
the same names: every engine must read the related row's. This is the sweep that found polars
failing (`ComputeError`) and PySpark reading the contact's column; both are fixed through the
shared relation rules, and these properties keep them so.
"""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af

from .engines import Engine, engine_params, selector

ORDERS = af.Relation("orders", af.Schema.of(total="number", tags="string[]", data="json"))
SCHEMA = af.Schema.of(tags="string[]", data="json").with_relations(ORDERS)
WORDS = ("x", "y", "z")

_data = st.one_of(
    st.none(),
    st.fixed_dictionaries(
        {},
        optional={
            "k": st.one_of(st.integers(0, 2), st.sampled_from(WORDS), st.none()),
            "a": st.lists(st.sampled_from(WORDS), max_size=3),
        },
    ),
)
_tags = st.one_of(st.none(), st.lists(st.one_of(st.sampled_from(WORDS), st.none()), max_size=3))
_row = st.fixed_dictionaries(
    {"total": st.one_of(st.none(), st.integers(-2, 5)), "tags": _tags, "data": _data}
)


@st.composite
def contacts(draw: st.DrawFn) -> list[dict[str, Any]]:
    count = draw(st.integers(1, 5))
    return [
        {
            "id": f"c{index}",
            "tags": draw(_tags),
            "data": draw(_data),
            "orders": draw(st.one_of(st.none(), st.lists(_row, max_size=3))),
        }
        for index in range(count)
    ]


_condition = st.one_of(
    st.sampled_from(WORDS).map(lambda w: {"tags": {"has": w}}),
    st.lists(st.sampled_from(WORDS), max_size=2).map(lambda ws: {"tags": {"hasSome": ws}}),
    st.booleans().map(lambda b: {"tags": {"isEmpty": b}}),
    st.one_of(st.integers(0, 2), st.sampled_from(WORDS)).map(
        lambda v: {"data": {"path": ["k"], "equals": v}}
    ),
    st.sampled_from(WORDS).map(lambda w: {"data": {"path": ["a"], "array_contains": w}}),
    st.integers(-1, 4).map(lambda n: {"total": {"gt": n}}),
)
_where = st.one_of(
    _condition,
    st.lists(_condition, min_size=2, max_size=3).map(lambda cs: {"OR": cs}),
    _condition.map(lambda c: {"NOT": c}),
)
relation_filters = st.one_of(
    st.builds(lambda q, w: {"orders": {q: w}}, st.sampled_from(("some", "every", "none")), _where),
    st.builds(
        lambda w, n: {"orders": {"where": w, "count": {"gte": n}}}, _where, st.integers(0, 2)
    ),
    st.builds(lambda w: {"orders": {"where": w, "sum": {"total": {"gt": 1}}}}, _where),
)
# The suite's SQL engines build only the contact table; SQL over related tables holding lists
# and JSON is held to the same rules by `tests/test_sql_relations.py` on every SQL engine.
FAST = (
    "explain",
    "polars",
    "polars-untyped",
    "polars-streaming",
    "pandas-numpy",
    "pandas-pyarrow",
    "django-sqlite",
    "django-postgresql",
)


@pytest.mark.parametrize(
    "engine",
    [p for p in engine_params() if p.values[0].name in FAST],  # type: ignore[union-attr]
)
def test_relation_schemas_with_lists_and_json_agree(
    engine: Engine, request: pytest.FixtureRequest
) -> None:
    select = selector(engine, request)

    @settings(max_examples=60)
    @given(contacts(), relation_filters)
    def agrees(records: list[dict[str, Any]], where: dict[str, Any]) -> None:
        flt = af.parse(where, SCHEMA)
        expected = {r["id"] for r in flt.select(records)}
        assert set(select(flt, records, None)) == expected

    agrees()


@pytest.mark.spark
def test_relation_schemas_with_lists_and_json_agree_on_pyspark(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    @settings(max_examples=15)
    @given(contacts(), relation_filters)
    def agrees(records: list[dict[str, Any]], where: dict[str, Any]) -> None:
        flt = af.parse(where, SCHEMA)
        expected = {r["id"] for r in flt.select(records)}
        frame = frame_for(spark, records, SCHEMA)
        assert {row["id"] for row in flt.select_frame(frame).collect()} == expected

    agrees()
