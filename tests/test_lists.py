"""List fields (`language/lists.py`): the rules in Python, the refusals of engines that cannot
answer faithfully, and a differential property against the real engines that can.

The conformance file tests/conformance/lists.json states the semantics case by case on every
back-end; here hypothesis draws lists with null items, case folding pairs and numbers of two
Python types, and every engine must give memory's answer.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.testing.strategies import (
    LIST_SCHEMA,
    array_conditions,
    array_documents,
    list_conditions,
    list_records,
)
from tests.sql_engines import Database, open_database

SCHEMA = LIST_SCHEMA.with_fields(email="string")


def _ids(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": f"r{i}", **record} for i, record in enumerate(records)]


def test_a_list_type_is_declared_with_brackets() -> None:
    schema = af.Schema.of(tags="string[]")
    assert schema["tags"].type is FieldType.STRING_LIST
    assert schema["tags"].type.element is FieldType.STRING
    with pytest.raises(ValueError, match="unknown type"):
        af.Schema.of(tags="json[]")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (None, None),  # a null list is UNKNOWN, isEmpty included
        ([], True),
        ([None], False),  # a null item takes a place
    ],
)
def test_is_empty_on_null_lists_and_null_items(value: Any, expected: bool | None) -> None:
    flt = af.parse({"tags": {"isEmpty": True}}, SCHEMA)
    outcome = flt.explain({"tags": value}).outcome.value
    assert outcome == {None: "UNKNOWN", True: "TRUE", False: "FALSE"}[expected]


def test_a_record_that_is_no_list_is_a_record_error() -> None:
    flt = af.parse({"tags": {"has": "a"}}, SCHEMA)
    with pytest.raises(af.RecordError, match="expected a list"):
        flt.matches({"tags": "abc"})
    with pytest.raises(af.RecordError, match="item"):
        flt.matches({"tags": ["a", 1]})
    with pytest.raises(af.RecordError):
        af.parse({"scores": {"has": 1}}, SCHEMA).matches({"scores": [True]})


@pytest.mark.parametrize(
    "text",
    [
        'tags has "vip"',
        'tags has some ["a", "B"] ignoring case',
        'tags has every ["a"]',
        "tags is empty",
        "tags is not empty",
        'tags = ["b", "a"]',
        "tags != []",
        "not (scores has every [1, 2.5]) or flags has true and dates has 2025-01-01T00:00:00Z",
    ],
)
def test_text_and_json_round_trip(text: str) -> None:
    flt = af.parse_text(text, SCHEMA)
    assert flt.to_text() == text
    assert af.parse(flt.to_json(), SCHEMA) == flt


@pytest.mark.parametrize(
    ("text", "column", "message", "suggestion"),
    [
        ('email has "x"', 7, '"has" applies to list fields', 'use "=", or "contains" for part'),
        ('tags contains "x"', 6, '"contains" does not apply to list field', 'use "has"'),
        ('tags has ["x"]', 10, '"has" takes one string', 'use "has some" or "has every"'),
        ("email is empty", 7, '"is empty" applies to list fields', 'test for null with "email'),
    ],
)
def test_text_errors_are_located_with_a_suggestion(
    text: str, column: int, message: str, suggestion: str
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse_text(text, SCHEMA)
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (1, column)
    assert issue.message.startswith(message)
    assert issue.suggestion is not None and issue.suggestion.startswith(suggestion)


def test_lowering_decides_empty_operands_and_duplicates_once() -> None:
    def lowered(where: dict[str, Any]) -> str:
        return af.parse(where, SCHEMA).lowered.__repr__()

    assert "IS_EMPTY" in lowered({"tags": {"equals": []}})
    assert "HAS_SOME" not in lowered({"tags": {"hasSome": []}})
    assert "HAS:" in lowered({"tags": {"hasEvery": ["a", "a"]}})
    # 1 and 1.0 are one number; true is no number (and no string list holds it).
    flt = af.parse({"scores": {"hasSome": [1, 1.0, 2]}}, SCHEMA)
    assert flt.lowered == af.parse({"scores": {"hasSome": [1, 2]}}, SCHEMA).lowered


def test_simplify_applies_the_list_rules() -> None:
    flt = af.parse({"tags": {"hasSome": ["a", "a"]}}, SCHEMA)
    assert flt.simplify() == af.parse({"tags": {"has": "a"}}, SCHEMA)


def test_spark_sql_tests_array_items_with_exists() -> None:
    flt = af.parse({"tags": {"has": "a"}}, SCHEMA)
    assert flt.to_sql("spark") == (
        "CASE WHEN `tags` IS NOT NULL THEN exists(`tags`, af_x -> COALESCE(af_x IN ('a'), "
        "FALSE)) END"
    )
    # A number no double holds is no item of an array<double>.
    assert "FALSE END" in af.parse({"scores": {"has": 2**53 + 1}}, SCHEMA).to_sql("spark")


@pytest.mark.parametrize("dialect", ["sqlite", "mysql"])
def test_json_array_engines_refuse_date_time_lists(dialect: str) -> None:
    flt = af.parse({"dates": {"has": "2025-01-01"}}, SCHEMA)
    with pytest.raises(af.FilterError, match="a JSON array holds date-times as text"):
        flt.to_sql(dialect)


def test_polars_names_a_column_that_is_no_list() -> None:
    pl = pytest.importorskip("polars")
    frame = pl.DataFrame({"tags": ["a"]})
    with pytest.raises(af.RecordError, match="expected a List column"):
        af.parse({"tags": {"has": "a"}}, SCHEMA).select_frame(frame)


def _polars_ids(flt: af.Filter, rows: list[dict[str, Any]]) -> set[str] | None:
    try:
        import polars as pl

        from audiencefilter.backends.frames.polars import frame_for
    except ImportError:  # the columnar extra is not installed
        return None
    frame = frame_for(rows, SCHEMA).with_columns(id=pl.Series([r["id"] for r in rows]))
    return set(flt.select_frame(frame)["id"].to_list())


@pytest.mark.parametrize(
    ("dialect", "where", "sql"),
    [
        (
            "postgresql",
            {"tags": {"hasSome": ["a", "b"]}},
            """CASE WHEN "tags" IS NOT NULL THEN CAST("tags" AS text[]) """
            """&& CAST(ARRAY['a', 'b'] AS text[]) END""",
        ),
        (
            "duckdb",
            {"flags": {"has": True}},
            'CASE WHEN "flags" IS NOT NULL THEN len(list_filter("flags", lambda x: x IN (TRUE))) '
            "> 0 END",
        ),
        (
            "sqlite",
            {"tags": {"isEmpty": True}},
            'CASE WHEN "tags" IS NOT NULL THEN json_array_length("tags") = 0 END',
        ),
    ],
)
def test_sql_per_dialect(dialect: str, where: dict[str, Any], sql: str) -> None:
    assert af.parse(where, SCHEMA).to_sql(dialect) == sql


# ---- differential: memory, explain and the real engines ---------------------------------------

_FAITHFUL = ("sqlite", "duckdb", "postgresql", "mysql")


@pytest.fixture(scope="module")
def databases(request: pytest.FixtureRequest) -> Iterator[dict[str, tuple[Database, Any]]]:
    found: dict[str, tuple[Database, Any]] = {}
    for name in _FAITHFUL:
        try:
            database = open_database(name, request)
        except pytest.skip.Exception:
            continue
        found[name] = (database, database.new_table("af_lists_scratch", SCHEMA))
    yield found


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(list_records(SCHEMA), max_size=6), list_conditions(SCHEMA))
def test_every_engine_gives_memorys_answer(
    databases: dict[str, tuple[Database, Any]],
    records: list[dict[str, Any]],
    where: dict[str, Any],
) -> None:
    rows = _ids(records)
    flt = af.parse(where, SCHEMA)
    expected = {r["id"] for r in rows if flt.matches(r)}
    assert {r["id"] for r in rows if flt.explain(r).matched} == expected, where
    assert _polars_ids(flt, rows) in (None, expected), where
    for name, (database, table) in databases.items():
        database.fill(table, rows, replace=True, schema=SCHEMA)
        for way in ("sqlalchemy", "sql", "params"):
            try:
                found = database.way(way)(flt, table, None)
            except af.FilterError:
                assert name in ("sqlite", "mysql") and "dates" in where, (name, where)
                continue
            assert found == expected, (name, way, where, flt.to_sql(name), rows)


# ---- differential: JSON arrays at a data path ------------------------------------------------

_ARRAY_ENGINES = ("sqlite", "postgresql", "mysql", "duckdb")


@pytest.fixture(scope="module")
def array_databases(request: pytest.FixtureRequest) -> Iterator[dict[str, tuple[Database, Any]]]:
    found: dict[str, tuple[Database, Any]] = {}
    for name in _ARRAY_ENGINES:
        try:
            database = open_database(name, request)
        except pytest.skip.Exception:
            continue
        found[name] = (database, database.scratch())
    yield found


@settings(max_examples=60, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(array_documents(), max_size=6), array_conditions())
def test_json_arrays_give_memorys_answer_everywhere(
    array_databases: dict[str, tuple[Database, Any]],
    documents: list[dict[str, Any]],
    where: dict[str, Any],
) -> None:
    rows = _ids([{"data": document} for document in documents])
    flt = af.parse(where)
    expected = {r["id"] for r in rows if flt.matches(r)}
    assert {r["id"] for r in rows if flt.explain(r).matched} == expected, where
    try:
        import polars as pl

        from audiencefilter.backends.frames.polars import frame_for
    except ImportError:  # the columnar extra is not installed
        pass
    else:
        frame = frame_for(rows, af.CONTACT).with_columns(id=pl.Series([r["id"] for r in rows]))
        assert set(flt.select_frame(frame)["id"].to_list()) == expected, where
    for name, (database, table) in array_databases.items():
        database.fill(table, rows, replace=True)
        for way in ("sqlalchemy", "sql", "params"):
            found = database.way(way)(flt, table, None)
            assert found == expected, (name, way, where, flt.to_sql(name), rows)


def test_an_engine_that_cannot_read_a_json_array_refuses() -> None:
    # DuckDB reads JSON paths as a JSON pointer when a key is empty; no array read is written
    # for those.
    flt = af.parse({"data": {"path": ["", "tags"], "array_contains": "a"}})
    with pytest.raises(af.FilterError, match="JSON array at data.*faithfully"):
        flt.to_sql("duckdb")


@pytest.mark.spark
@settings(
    max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.lists(list_records(SCHEMA), min_size=1, max_size=6), list_conditions(SCHEMA))
def test_spark_gives_memorys_answer_on_lists(
    spark: Any, records: list[dict[str, Any]], where: dict[str, Any]
) -> None:
    from pyspark.sql import functions as F

    from audiencefilter.backends.frames.spark import frame_for

    rows = _ids(records)
    flt = af.parse(where, SCHEMA)
    expected = {r["id"] for r in rows if flt.matches(r)}
    frame = frame_for(spark, rows, SCHEMA)
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    both = frame.select(
        "id",
        flt.to_pyspark(dtypes=dtypes).alias("pyspark"),
        F.expr(flt.to_sql("spark")).alias("sql"),
    ).collect()
    for way in ("pyspark", "sql"):
        assert {row["id"] for row in both if row[way] is True} == expected, (way, where, rows)


def test_a_long_text_filter_of_list_tests_is_measured_like_its_json() -> None:
    # Long text is measured as its canonical JSON (text/limits.py), which must know lists.
    text = " or ".join(['tags has "a"', "tags is not empty", 'data.tags has "a"'] * 1000)
    flt = af.parse_text(text, SCHEMA.with_fields(data="json"))
    assert af.parse(flt.to_json(), flt.schema) == flt
