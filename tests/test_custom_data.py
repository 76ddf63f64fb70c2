"""Custom data: JSON-typed fields filtered through paths, and typed fields declared inside JSON.

The conformance file `custom_data.json` runs the rules on every engine; these tests cover what
it cannot: schemas with `source` fields, the text syntax of any key, explanations, the polars
column types, the SQL with bound keys, and the schema's own checks.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import duckdb
import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.data_paths import truth
from audiencefilter.testing.strategies import DATA_KEYS

CUSTOM = af.CONTACT.with_fields(
    plan=("string", ("data", "plan")),
    seats=("number", ("data", "limits", "seats")),
    trial=("boolean", ("data", "trial")),
)
RECORDS: list[dict[str, Any]] = [
    {"id": "r1", "data": {"plan": "pro", "limits": {"seats": 5}, "trial": False}},
    {"id": "r2", "data": {"plan": "PRO", "limits": {"seats": "5"}, "trial": True}},
    {"id": "r3", "data": {"plan": None, "limits": 3}},
    {"id": "r4"},
]
SOURCED = [
    ({"plan": "pro"}, {"r1"}),
    ({"plan": {"equals": "pro", "mode": "insensitive"}}, {"r1", "r2"}),
    ({"plan": None}, {"r3", "r4"}),
    ({"seats": {"gte": 5}}, {"r1"}),
    ({"seats": {"not": {"gte": 5}}}, {"r2"}),
    ({"trial": {"not": True}}, {"r1"}),
    ({"OR": [{"plan": "pro"}, {"data": {"path": ["limits"], "equals": 3}}]}, {"r1", "r3"}),
]


def _memory(flt: af.Filter) -> set[str]:
    return {r["id"] for r in RECORDS if flt.matches(r)}


def _sql(flt: af.Filter, dialect: str, params: bool) -> set[str]:
    connection: Any = sqlite3.connect(":memory:") if dialect == "sqlite" else duckdb.connect()
    connection.execute("CREATE TABLE t (id TEXT, data TEXT)")
    for r in RECORDS:
        data = json.dumps(r["data"]) if "data" in r else None
        connection.execute("INSERT INTO t VALUES (?, ?)", [r["id"], data])
    if params:
        sql, values = flt.to_sql_params(dialect)
        rows = connection.execute(f"SELECT id FROM t WHERE {sql}", values).fetchall()
    else:
        rows = connection.execute(f"SELECT id FROM t WHERE {flt.to_sql(dialect)}").fetchall()
    return {row[0] for row in rows}


@pytest.mark.parametrize(("where", "expected"), SOURCED)
def test_fields_declared_inside_data_work_on_every_back_end(
    where: dict[str, Any], expected: set[str]
) -> None:
    from audiencefilter.backends.frames.polars import frame_for

    flt = af.parse(where, CUSTOM)
    assert _memory(flt) == expected
    assert af.parse(flt.to_json(), CUSTOM) == flt
    assert af.parse_text(flt.to_text(), CUSTOM) == flt
    for dialect in ("sqlite", "duckdb"):
        assert _sql(flt, dialect, params=False) == expected, dialect
        assert _sql(flt, dialect, params=True) == expected, dialect
    frame = frame_for(RECORDS, CUSTOM.with_fields(id="string"))
    assert set(flt.select_frame(frame)["id"].to_list()) == expected
    explained = {r["id"] for r in RECORDS if flt.explain(r).matched}
    assert explained == expected


def test_a_declared_field_keeps_its_type_and_name() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse({"seats": {"contains": "5"}}, CUSTOM)
    assert [issue.path for issue in caught.value.errors] == ["seats.contains"]
    assert af.parse({"plan": "pro"}, CUSTOM).to_json() == '{"plan":{"equals":"pro"}}'


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (("string", ("data",)), "a column then at least one key"),
        (("datetime", ("data", "since")), "a date-time inside JSON text has no order"),
        (("json", ("data", "x")), "a list of strings, numbers or booleans"),
    ],
)
def test_a_source_is_checked(spec: Any, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        af.CONTACT.with_fields(bad=spec)


def test_sqlalchemy_binds_keys_and_values() -> None:
    from sqlalchemy import JSON, Column, MetaData, String, Table, create_engine, insert, select

    table = Table("t", MetaData(), Column("id", String, primary_key=True), Column("data", JSON))
    engine = create_engine("sqlite://")
    table.create(engine)
    hostile = {'q"\\': "x", "it's": 1, "x.y": True}
    with engine.begin() as connection:
        connection.execute(insert(table), [{"id": "a", "data": hostile}, {"id": "b", "data": {}}])
    where = {"AND": [{"data": {"path": [key], "equals": value}} for key, value in hostile.items()]}
    flt = af.parse(where)
    condition = flt.to_sqlalchemy(table)
    compiled = str(condition.compile(engine))
    assert "x.y" not in compiled and "it's" not in compiled  # every key is a parameter
    with engine.connect() as connection:
        ids = {row[0] for row in connection.execute(select(table.c.id).where(condition))}
    assert ids == {"a"}


def test_explanations_show_the_path_and_the_value_seen() -> None:
    flt = af.parse({"data": {"path": ["address", "city"], "equals": "Paris"}})
    rendered = flt.explain({"data": {"address": {"city": "Lyon"}}}).render()
    assert 'data.address.city = "Paris"' in rendered
    assert 'data.address.city = "Lyon"' in rendered
    assert "data.address.city is missing" in flt.explain({"data": {}}).render()


def test_polars_reads_json_text_or_structs_and_refuses_other_columns() -> None:
    import polars as pl

    flt = af.parse({"data": {"path": ["plan"], "equals": "pro"}})
    structs = pl.DataFrame({"id": ["a", "b"], "data": [{"plan": "pro"}, {"plan": "team"}]})
    assert flt.select_frame(structs)["id"].to_list() == ["a"]
    with pytest.raises(TypeError):
        flt.select_frame(pl.DataFrame({"data": [1, 2]}))


def test_a_json_field_is_only_compared_through_a_path() -> None:
    for text in ("data = 5", 'data is null and email = "x"'):
        with pytest.raises(af.FilterError):
            af.parse_text(text)
    with pytest.raises(af.FilterError) as caught:
        af.parse_text("email.domain = 5")
    assert "has no keys" in caught.value.errors[0].message


@given(
    st.lists(st.one_of(st.sampled_from(DATA_KEYS), st.text(max_size=5)), min_size=1, max_size=3),
    st.one_of(st.text(max_size=5), st.integers(), st.booleans()),
)
def test_any_path_round_trips_through_json_and_text(path: list[str], value: Any) -> None:
    if any("\x00" in key or not _encodable(key) for key in path) or not _encodable(value):
        return
    flt = af.parse({"data": {"path": path, "equals": value}})
    assert af.parse(flt.to_json()) == flt
    assert af.parse_text(flt.to_text()) == flt
    document: dict[str, Any] = {}
    cursor = document
    for key in path[:-1]:
        cursor = cursor.setdefault(key, {})
    cursor[path[-1]] = value
    assert flt.matches({"data": document})  # the value at its own path equals itself
    assert truth(flt.root, document, tuple(path)) is True


def _encodable(value: object) -> bool:
    try:
        str(value).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@pytest.mark.parametrize(
    "where",
    [
        {
            "AND": [
                {"data": {"path": ["a"], "equals": None}},
                {"data": {"path": ["b"], "equals": 1}},
            ]
        },
        {
            "OR": [
                {"data": {"path": ["plan"], "equals": "a"}},
                {"data": {"path": ["plan"], "equals": 5}},
            ]
        },
        {
            "OR": [
                {"data": {"path": ["plan"], "equals": "a"}},
                {"data": {"path": ["x"], "equals": "b"}},
            ]
        },
        {"data": {"path": ["plan"], "in": ["a", "a"]}},
    ],
)
def test_simplify_keeps_paths_and_types_apart(where: dict[str, Any]) -> None:
    flt = af.parse(where)
    simpler = flt.simplify()
    records = [{"data": d} for d in ({"a": None, "b": 1}, {"plan": 5}, {"plan": "a"}, {"x": "b"})]
    assert [simpler.matches(r) for r in records] == [flt.matches(r) for r in records]
    assert any(flt.matches(r) for r in records)
