"""Relations over frames read the RELATED row: list fields, data paths, JSON arrays and
JSON-declared fields inside `some`/`every`/`none`/aggregates, on polars and PySpark, as in
memory. Before the fix PySpark read the contact's column of the same name and polars stopped
with `ComputeError`; a `data` STRUCT column on Spark surfaced a raw `AnalysisException`; and
`to_pyspark()` refused any thread but the session's.
"""

from __future__ import annotations

import threading
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
    from audiencefilter.backends.columnar import frame_for

    flt = af.parse(where, SCHEMA)
    frame = frame_for(RECORDS, SCHEMA)
    assert flt.select_frame(frame)["email"].to_list() == _expected(flt)


@pytest.mark.spark
def test_pyspark_reads_the_related_row(spark: Any) -> None:
    from audiencefilter.backends.spark import frame_for

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
    from audiencefilter.backends.columnar import frame_for

    flt = af.parse(where, BIG)
    expected = [r["email"] for r in flt.select(BIG_RECORDS)]
    assert flt.select_frame(frame_for(BIG_RECORDS, BIG))["email"].to_list() == expected


@pytest.mark.spark
def test_pyspark_sums_past_64_bits_exactly(spark: Any) -> None:
    from audiencefilter.backends.spark import frame_for

    frame = frame_for(spark, BIG_RECORDS, BIG)
    for where in BIG_WHERES:
        flt = af.parse(where, BIG)
        expected = sorted(r["email"] for r in flt.select(BIG_RECORDS))
        assert sorted(r["email"] for r in flt.select_frame(frame).collect()) == expected, where


def test_polars_number_lists_keep_integers_exact_or_say_why_not() -> None:
    """`number[]` lists were Float64 whatever they held: 2^53 + 1 became 2^53 silently."""
    from audiencefilter.backends.columnar import frame_for

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
    from audiencefilter.backends.columnar import frame_for

    flt = af.parse(NESTED_WHERE, NESTED)
    assert [r["email"] for r in flt.select(NESTED_RECORDS)] == ["a"]
    with pytest.raises(af.FilterError, match=r"polars does not evaluate a relation inside a"):
        flt.select_frame(frame_for(NESTED_RECORDS, NESTED))


@pytest.mark.spark
def test_pyspark_refuses_a_relation_inside_a_relation_in_the_shared_words(spark: Any) -> None:
    from audiencefilter.backends.spark import frame_for

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
    """A local date before year 1 or after 9999 counts as 1 January or 31 December in memory;
    Spark took the out-of-range date's own month and day, so the two disagreed there."""
    from datetime import datetime

    from audiencefilter.backends.spark import frame_for

    frame = frame_for(spark, EDGES, af.CONTACT).select("id", "createdAt")
    for zone, now_text in EDGE_CASES:
        now = datetime.fromisoformat(now_text)
        flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": zone}}})
        expected = sorted(r["id"] for r in flt.select(EDGES, now=now))
        found = sorted(r["id"] for r in flt.select_frame(frame, now=now).select("id").collect())
        by_sql = frame.filter(flt.to_sql("spark", now=now)).select("id").collect()
        assert found == sorted(r["id"] for r in by_sql) == expected, zone
