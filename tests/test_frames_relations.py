"""Relations over frames read the RELATED row: list fields, data paths, JSON arrays and
JSON-declared fields inside `some`/`every`/`none`/aggregates, on polars and PySpark, as in
memory. Before the fix PySpark read the contact's column of the same name and polars stopped
with `ComputeError`; a `data` STRUCT column on Spark surfaced a raw `AnalysisException`; and
`to_pyspark()` refused any thread but the session's.
"""

from __future__ import annotations

import json
import threading
from datetime import UTC, datetime
from typing import Any

import pytest

import audiencefilter as af

ORDERS = af.Relation(
    "orders",
    af.Schema.of(total="number", tags="string[]", data="json"),
    many=True,
)
SCHEMA = af.Schema.of(email="string", tags="string[]", data="json").with_relations(ORDERS)
RECORDS: list[dict[str, Any]] = [
    # The contact's own tags and data hold what its orders' do not, and the other way round.
    {
        "email": "own",
        "tags": ["x"],
        "data": {"k": 1},
        "orders": [{"total": 1, "tags": ["y"], "data": {"k": 2}}],
    },
    {
        "email": "related",
        "tags": [],
        "data": None,
        "orders": [{"total": 2, "tags": ["x"], "data": {"k": 1, "a": ["v"]}}],
    },
    {"email": "none", "tags": ["x"], "data": {"k": 1}},
    {"email": "empty", "tags": None, "orders": []},
]
WHERES = [
    {"orders": {"some": {"tags": {"has": "x"}}}},
    {"orders": {"none": {"tags": {"has": "x"}}}},
    {"orders": {"every": {"tags": {"hasSome": ["x", "z"]}}}},
    {"orders": {"some": {"data": {"path": ["k"], "equals": 1}}}},
    {"orders": {"some": {"data": {"path": ["a"], "array_contains": "v"}}}},
    {"orders": {"some": {"tags": {"isEmpty": False}, "total": {"gte": 2}}}},
    {"orders": {"where": {"tags": {"has": "x"}}, "count": {"gte": 1}}},
    {"orders": {"where": {"data": {"path": ["k"], "equals": 1}}, "sum": {"total": {"gte": 2}}}},
]


def _expected(flt: af.Filter) -> list[str]:
    return [record["email"] for record in flt.select(RECORDS)]


@pytest.mark.parametrize("where", WHERES, ids=range(len(WHERES)))
def test_polars_reads_the_related_row(where: dict[str, Any]) -> None:
    from audiencefilter.backends.frames.polars import frame_for

    flt = af.parse(where, SCHEMA)
    frame = frame_for(RECORDS, SCHEMA)
    assert flt.select_frame(frame)["email"].to_list() == _expected(flt)


@pytest.mark.spark
def test_pyspark_reads_the_related_row(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    frame = frame_for(spark, RECORDS, SCHEMA)
    for where in WHERES:
        flt = af.parse(where, SCHEMA)
        found = [row["email"] for row in flt.select_frame(frame).collect()]
        assert sorted(found) == sorted(_expected(flt)), where


@pytest.mark.spark
def test_to_pyspark_works_in_a_worker_thread(spark: Any) -> None:
    frame = spark.createDataFrame([("a", 5), ("b", 500)], "email string, points long")
    flt = af.parse({"points": {"gte": 100}})
    built: list[Any] = []
    failed: list[BaseException] = []

    def build() -> None:
        try:
            built.append(flt.to_pyspark())
        except BaseException as exc:  # pragma: no cover - the failure is asserted below
            failed.append(exc)

    worker = threading.Thread(target=build)
    worker.start()
    worker.join(60)
    assert not failed, failed
    assert [row["email"] for row in frame.filter(built[0]).collect()] == ["b"]
    assert [row["email"] for row in frame.filter(flt.to_pyspark(session=spark)).collect()] == ["b"]


@pytest.mark.spark
@pytest.mark.parametrize(
    "where",
    [
        {"data": {"path": ["plan"], "equals": "pro"}},
        {"data": {"path": ["tags"], "array_contains": "vip"}},
    ],
)
def test_a_struct_data_column_is_a_short_frame_error(spark: Any, where: dict[str, Any]) -> None:
    frame = spark.createDataFrame(
        [("a", {"plan": "pro", "tags": None})], "email string, data struct<plan:string,tags:string>"
    )
    with pytest.raises(af.FrameError) as caught:
        af.parse(where).select_frame(frame).collect()
    message = str(caught.value)
    assert 'field "data"' in message and "STRING column of JSON text" in message
    assert len(message) < 400


WRONG_ROWS = {"orders": {"some": {"total": {"gte": 2}}}}


def test_polars_a_relation_column_of_another_type_is_a_frame_error() -> None:
    import polars as pl

    frame = pl.DataFrame({"email": ["a"], "tags": [["x"]], "data": ['{"k": 1}'], "orders": [3]})
    with pytest.raises(af.FrameError, match=r'"orders" is Int64; expected a List of Struct, one'):
        af.parse(WRONG_ROWS, SCHEMA).select_frame(frame)


@pytest.mark.spark
def test_pyspark_a_relation_column_of_another_type_is_a_frame_error(spark: Any) -> None:
    """It was a bare `TypeError`, where polars' same refusal is a `FrameError`: the relation's
    column types are read by the frame core once (`struct_dtypes`), for both engines."""
    frame = spark.createDataFrame([("a", 3)], "email string, orders long")
    with pytest.raises(af.FrameError, match=r'"orders" is LongType\(\); expected an ARRAY of'):
        af.parse(WRONG_ROWS, SCHEMA).select_frame(frame).collect()


BIG = af.Schema.of(email="string").with_relations(
    af.Relation("orders", af.Schema.of(total="number"), many=True)
)
BIG_RECORDS = [
    {"email": "past", "orders": [{"total": 2**62}, {"total": 2**62}, {"total": 2**62}]},
    {"email": "below", "orders": [{"total": -(2**62)}, {"total": -(2**62)}, {"total": -(2**62)}]},
    {"email": "small", "orders": [{"total": 5}]},
]
BIG_WHERES = [
    {"orders": {"sum": {"total": {"gt": 2**63}}}},
    {"orders": {"sum": {"total": {"equals": 3 * 2**62}}}},
    {"orders": {"sum": {"total": {"lt": -(2**63)}}}},
    {"orders": {"sum": {"total": {"gte": 0}}}},
]


@pytest.mark.parametrize("where", BIG_WHERES, ids=range(len(BIG_WHERES)))
def test_polars_sums_past_64_bits_exactly(where: dict[str, Any]) -> None:
    from audiencefilter.backends.frames.polars import frame_for

    flt = af.parse(where, BIG)
    expected = [r["email"] for r in flt.select(BIG_RECORDS)]
    assert flt.select_frame(frame_for(BIG_RECORDS, BIG))["email"].to_list() == expected


@pytest.mark.spark
def test_pyspark_sums_past_64_bits_exactly(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    frame = frame_for(spark, BIG_RECORDS, BIG)
    for where in BIG_WHERES:
        flt = af.parse(where, BIG)
        expected = sorted(r["email"] for r in flt.select(BIG_RECORDS))
        assert sorted(r["email"] for r in flt.select_frame(frame).collect()) == expected, where


def test_polars_number_lists_keep_integers_exact_or_say_why_not() -> None:
    """`number[]` lists were Float64 whatever they held: 2^53 + 1 became 2^53 silently."""
    from audiencefilter.backends.frames.polars import frame_for

    schema = af.Schema.of(id="string", scores="number[]")
    records = [{"id": "a", "scores": [2**53 + 1]}, {"id": "b", "scores": [2**53]}]
    flt = af.parse({"scores": {"has": 2**53 + 1}}, schema)
    assert flt.select_frame(frame_for(records, schema))["id"].to_list() == ["a"]
    big = [{"id": "c", "scores": [2**70]}]
    assert af.parse({"scores": {"has": 2**70}}, schema).select_frame(frame_for(big, schema)).height
    with pytest.raises(af.FrameError, match="9007199254740993 beside fractional numbers"):
        frame_for([{"id": "d", "scores": [2**53 + 1, 0.5]}], schema)


LINES = af.Relation("lines", af.Schema.of(sku="string", qty="number"))
NESTED = af.Schema.of(email="string").with_relations(
    af.Relation("orders", af.Schema.of(total="number").with_relations(LINES))
)
NESTED_RECORDS = [{"email": "a", "orders": [{"total": 1, "lines": [{"sku": "x", "qty": 2}]}]}]
NESTED_WHERE = {"orders": {"some": {"lines": {"some": {"sku": "x"}}}}}


def test_polars_refuses_a_relation_inside_a_relation_in_the_shared_words() -> None:
    """It stopped with a raw `ComputeError`; memory, SQL text and SQLAlchemy answer it."""
    from audiencefilter.backends.frames.polars import frame_for

    flt = af.parse(NESTED_WHERE, NESTED)
    assert [r["email"] for r in flt.select(NESTED_RECORDS)] == ["a"]
    with pytest.raises(af.FilterError, match=r"polars does not evaluate a relation inside a"):
        flt.select_frame(frame_for(NESTED_RECORDS, NESTED))


@pytest.mark.spark
def test_pyspark_refuses_a_relation_inside_a_relation_in_the_shared_words(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    flt = af.parse(NESTED_WHERE, NESTED)
    with pytest.raises(af.FilterError, match=r"PySpark does not evaluate a relation inside a"):
        flt.select_frame(frame_for(spark, NESTED_RECORDS, NESTED)).collect()


EDGES = [
    {"id": "a", "createdAt": "0001-01-01T00:00:00Z"},
    {"id": "b", "createdAt": "9999-12-31T23:59:59Z"},
    {"id": "c", "createdAt": "0001-03-01T12:00:00Z"},
    {"id": "d", "createdAt": "9999-12-31T00:00:00Z"},
]
EDGE_CASES = [
    ("Pacific/Kiritimati", "2026-12-31T12:00:00+00:00"),  # local dates past 9999, before year 1
    ("America/New_York", "2026-01-01T03:00:00+00:00"),
    ("Asia/Tokyo", "2026-12-31T16:00:00+00:00"),
]


@pytest.mark.spark
def test_pyspark_anniversaries_at_the_calendar_edges_follow_memory(spark: Any) -> None:
    """A local date of year 0 or 10000 is the proleptic calendar's, in memory as on Spark (and
    polars and the SQL engines: tests/test_calendar_edges.py)."""
    from datetime import datetime

    from audiencefilter.backends.frames.spark import frame_for

    frame = frame_for(spark, EDGES, af.CONTACT).select("id", "createdAt")
    for zone, now_text in EDGE_CASES:
        now = datetime.fromisoformat(now_text)
        flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": zone}}})
        expected = sorted(r["id"] for r in flt.select(EDGES, now=now))
        found = sorted(r["id"] for r in flt.select_frame(frame, now=now).select("id").collect())
        by_sql = frame.filter(flt.to_sql("spark", now=now)).select("id").collect()
        assert found == sorted(r["id"] for r in by_sql) == expected, zone


# ---- every placement of a related field, quantified every way, each encoding of `data` --------

TYPED = af.Relation(
    "orders",
    af.Schema.of(
        total="number",
        tags="string[]",
        data="json",
        plan=("string", ("data", "plan")),
        scores=("number[]", ("data", "scores")),
        day=("date", ("data", "day")),
    ),
    many=True,
)
TYPED_SCHEMA = af.Schema.of(email="string", tags="string[]", data="json").with_relations(TYPED)
NOW = datetime(2026, 6, 14, 12, tzinfo=UTC)


def _order(total: int, tags: list[str] | None, **data: Any) -> dict[str, Any]:
    return {"total": total, "tags": tags, "data": data or None}


# The contact's own `tags` and `data` hold what its orders' do not: a back-end reading the
# contact's columns inside a relation condition answers differently.
TYPED_RECORDS: list[dict[str, Any]] = [
    {
        "email": "own",
        "tags": ["x"],
        "data": {"k": "x", "arr": ["x"], "plan": "pro", "scores": [3], "day": "1990-06-14"},
        "orders": [_order(1, ["y"], k="y", arr=["y"], plan="free", scores=[1], day="2001-01-01")],
    },
    {
        "email": "all",
        "orders": [
            _order(2, ["x"], k="x", arr=["x", "z"], plan="pro", scores=[3, 4], day="1990-06-14"),
            _order(3, ["x", "z"], k="x", arr=["x"], plan="pro", scores=[3], day="1999-06-14"),
        ],
    },
    {
        "email": "one",
        "orders": [
            _order(2, ["x"], k="x", arr=["x"], plan="pro", scores=[3], day="1995-06-14"),
            _order(5, [], k="q"),
        ],
    },
    {"email": "nulls", "orders": [_order(4, None)]},
    {"email": "empty", "orders": []},
    {"email": "missing"},
]
PLACEMENTS = {
    "list field": {"tags": {"has": "x"}},
    "data path equals": {"data": {"path": ["k"], "equals": "x"}},
    "data path array_contains": {"data": {"path": ["arr"], "array_contains": "x"}},
    "declared inside JSON": {"plan": "pro"},
    "number[] inside JSON": {"scores": {"has": 3}},
    "date inside JSON": {"day": {"lt": "2000-01-01"}},
    "date anniversary inside JSON": {"day": {"anniversary": {"this": "day"}}},
}


def _quantified(where: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        {"orders": {"some": where}},
        {"orders": {"every": where}},
        {"orders": {"none": where}},
        {"orders": {"where": where, "count": {"gte": 1}}},
        {"orders": {"where": where, "sum": {"total": {"gte": 3}}}},
    ]


CROSS = [(name, w) for name, where in PLACEMENTS.items() for w in _quantified(where)]


def _as_text(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The records with every `data`, the contact's and each related row's, as JSON text, as a
    JSON column reads into a frame."""

    def text(value: Any) -> Any:
        return None if value is None else json.dumps(value)

    out = []
    for record in records:
        copy = {**record, "data": text(record.get("data"))}
        if record.get("orders") is not None:
            copy["orders"] = [{**o, "data": text(o["data"])} for o in record["orders"]]
        out.append(copy)
    return out


def _polars_frame(encoding: str) -> Any:
    import polars as pl

    from audiencefilter.backends.frames.polars import frame_for

    if encoding == "frame_for":
        return frame_for(TYPED_RECORDS, TYPED_SCHEMA)
    if encoding == "decoded":  # objects as polars reads them: Structs
        return pl.DataFrame(TYPED_RECORDS)
    return pl.DataFrame(_as_text(TYPED_RECORDS))  # JSON text, no column for `plan` anywhere


@pytest.mark.parametrize("way", ["typed", "untyped"])
@pytest.mark.parametrize("encoding", ["decoded", "text", "frame_for"])
def test_polars_related_fields_in_every_placement_and_encoding(encoding: str, way: str) -> None:
    """Before, `to_polars()` without the frame's types took a related `data` Struct for JSON
    text and stopped with a `TypeError`: the relation column's type is now learnt per batch."""
    frame = _polars_frame(encoding)
    wrong = []
    for name, where in CROSS:
        flt = af.parse(where, TYPED_SCHEMA)
        expected = [r["email"] for r in flt.select(TYPED_RECORDS, now=NOW)]
        if way == "typed":
            found = flt.select_frame(frame, now=NOW)["email"].to_list()
        else:
            found = frame.filter(flt.to_polars(now=NOW))["email"].to_list()
        if found != expected:
            wrong.append((name, where, expected, found))
    assert not wrong, wrong


def test_frame_for_makes_no_column_for_a_field_declared_inside_json() -> None:
    """A `plan` column (null) beside `data` hid whether a back-end read the JSON; a user's frame
    has none, so `frame_for` makes none, the contact's or a related row's."""
    from audiencefilter.backends.frames.polars import frame_for

    schema = TYPED_SCHEMA.with_fields(rank=("number", ("data", "rank")))
    frame = frame_for(TYPED_RECORDS, schema)
    assert "rank" not in frame.columns
    assert [f.name for f in frame.schema["orders"].inner.fields] == ["total", "tags", "data"]


@pytest.mark.spark
def test_pyspark_related_fields_in_every_placement_and_encoding(spark: Any) -> None:
    """JSON text (a frame without a `plan` column, and `frame_for`'s) answers as memory does, in
    one select per frame; a related `data` STRUCT, as `spark.read.json` makes of objects, is
    a short FrameError naming the relation, where it was a raw AnalysisException."""
    from pyspark.sql import functions as F

    from audiencefilter.backends.frames.spark import frame_for

    rows = "array<struct<total:bigint,tags:array<string>,data:string>>"
    text = spark.createDataFrame(
        _as_text(TYPED_RECORDS),
        f"email string, tags array<string>, data string, orders {rows}",
    )
    schema = TYPED_SCHEMA.with_fields(rank=("number", ("data", "rank")))
    built = frame_for(spark, TYPED_RECORDS, schema)
    assert "rank" not in built.columns
    assert "plan" not in built.schema["orders"].dataType.elementType.names
    filters = [af.parse(where, TYPED_SCHEMA) for _, where in CROSS]
    expected = [sorted(r["email"] for r in f.select(TYPED_RECORDS, now=NOW)) for f in filters]
    for frame in (text, built):
        dtypes = {f.name: f.dataType for f in frame.schema.fields}
        columns = [
            F.coalesce(f.to_pyspark(dtypes=dtypes, now=NOW), F.lit(False)).alias(f"f{i}")
            for i, f in enumerate(filters)
        ]
        found = frame.select("email", *columns).collect()
        for i, (name, where) in enumerate(CROSS):
            chosen = sorted(row["email"] for row in found if row[f"f{i}"])
            assert chosen == expected[i], (name, where)

    structs = spark.createDataFrame(
        [("a", [(1, ["x"], ("x", "pro"))])],
        "email string, orders array<struct<total:bigint,tags:array<string>,"
        "data:struct<k:string,plan:string>>>",
    )
    dtypes = {f.name: f.dataType for f in structs.schema.fields}
    for name, where in CROSS:
        flt = af.parse(where, TYPED_SCHEMA)
        if name == "list field":
            flt.to_pyspark(dtypes=dtypes, now=NOW)  # reads no `data`: built as ever
            continue
        with pytest.raises(af.FrameError) as caught:
            flt.to_pyspark(dtypes=dtypes, now=NOW)
        message = str(caught.value)
        assert message.startswith('relation "orders": field "data" needs a STRING column')
        assert len(message) < 400
