"""The Spark back-end's own surface: column types and names, literals Spark could misread,
and the errors for a missing session, Java or column type. The answers on every rule are the
conformance and differential suites' (`test_spark_conformance.py`, `test_spark_differential.py`).
"""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import UTC, date, datetime
from typing import Any

import pytest

import audiencefilter as af

pytestmark = pytest.mark.spark


def _ids(frame: Any, condition: Any) -> set[Any]:
    return {row["id"] for row in frame.filter(condition).collect()}


@pytest.mark.parametrize(
    "literal",
    ["${spark.app.name}", "a\\b", "O'Brien", "a\x00b", "tab\there", "--", "'; DROP TABLE t; --"],
)
def test_literals_spark_could_misread_match_themselves_only(spark: Any, literal: str) -> None:
    from pyspark.sql import functions as F

    from audiencefilter.backends.frames.spark import frame_for

    records = [
        {"id": "same", "email": literal},
        {"id": "app", "email": "audiencefilter-tests"},
        {"id": "other", "email": literal + "x"},
    ]
    frame = frame_for(spark, records, af.CONTACT)
    for where in ({"email": literal}, {"email": {"in": [literal]}}):
        flt = af.parse(where)
        assert _ids(frame, F.expr(flt.to_sql("spark"))) == {"same"}
        assert _ids(frame, flt.to_pyspark()) == {"same"}


def test_columns_map_fields_to_other_names_even_with_dots(spark: Any) -> None:
    frame = spark.createDataFrame([("a", 5), ("b", 50)], "`contact.id` string, `points.total` long")
    flt = af.parse({"points": {"gt": 10}})
    condition = flt.to_pyspark(columns={"points": "points.total"})
    assert {row[0] for row in frame.filter(condition).collect()} == {"b"}
    sql = flt.to_sql("spark", columns={"points": "points.total"})
    assert sql == "`points.total` > 10"
    assert {row[0] for row in frame.filter(sql).collect()} == {"b"}


def test_naive_and_date_columns_are_utc(spark: Any) -> None:
    frame = spark.createDataFrame(
        [("a", datetime(2025, 1, 1, 0, 0), date(2025, 1, 1)), ("b", None, None)],
        "id string, wall timestamp_ntz, day date",
    )
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    schema = af.Schema.of(wall="datetime", day="datetime")
    for name in ("wall", "day"):
        flt = af.parse({name: {"gte": "2025-01-01T01:00:00+01:00"}}, schema=schema)
        assert _ids(frame, flt.to_pyspark(dtypes=dtypes)) == {"a"}
        later = af.parse({name: {"gt": "2025-01-01T00:00:00Z"}}, schema=schema)
        assert _ids(frame, later.to_pyspark(dtypes=dtypes)) == set()


def test_nan_in_a_double_column_is_a_missing_number(spark: Any) -> None:
    frame = spark.createDataFrame([("nan", float("nan")), ("one", 1.0)], "id string, points double")
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    for where, expected in (
        ({"points": {"gt": 0}}, {"one"}),
        ({"points": {"not": {"lt": 0}}}, {"one"}),
        ({"points": {"notIn": [1]}}, set()),
        ({"points": None}, {"nan"}),
        ({"points": {"gte": 2**53 + 1}}, set()),
    ):
        found = _ids(frame, af.parse(where).to_pyspark(dtypes=dtypes))
        expected_memory = {
            r["id"]
            for r in ({"id": "nan", "points": float("nan")}, {"id": "one", "points": 1.0})
            if af.parse(where).matches(r)
        }
        assert found == expected == expected_memory, where


def test_a_record_holding_nan_is_stored_as_a_missing_number(spark: Any) -> None:
    """`frame_for` reads a record's NaN as `matches` does, null: a filter asked without the
    column types (no `dtypes`, or as Spark SQL) then answers as `matches` (a witness of the
    algebra, tests/test_algebra_engines.py, found the frame holding NaN, not null)."""
    from audiencefilter.backends.frames.spark import frame_for

    records = [{"id": "nan", "points": float("nan")}, {"id": "one", "points": 1}]
    frame = frame_for(spark, records, af.CONTACT)
    frame.createOrReplaceTempView("nan_contacts")
    for where in ({"points": None}, {"points": {"not": None}}, {"points": {"gte": 0}}):
        flt = af.parse(where)
        expected = {r["id"] for r in records if flt.matches(r)}
        assert _ids(frame, flt.to_pyspark(session=spark)) == expected, where
        condition = flt.to_sql("spark", table="nan_contacts")
        rows = spark.sql(f"SELECT id FROM nan_contacts WHERE {condition}").collect()
        assert {r["id"] for r in rows} == expected, where


def test_a_column_of_the_wrong_type_is_named(spark: Any) -> None:
    from pyspark.sql import types as T

    with pytest.raises(
        TypeError, match='field "points" needs an integer .* the DataFrame has string'
    ):
        af.parse({"points": 1}).to_pyspark(dtypes={"points": T.StringType()})


def test_relative_dates_are_resolved_once_at_now(spark: Any) -> None:
    frame = spark.createDataFrame(
        [("old", datetime(2024, 1, 1, tzinfo=UTC)), ("new", datetime(2025, 6, 20, tzinfo=UTC))],
        "id string, createdAt timestamp",
    )
    flt = af.parse({"createdAt": {"gte": {"ago": "P30D"}}})
    assert _ids(frame, flt.to_pyspark(now=datetime(2025, 7, 1, tzinfo=UTC))) == {"new"}
    assert _ids(frame, flt.to_pyspark(now=datetime(2026, 7, 1, tzinfo=UTC))) == set()


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120
    )


def test_without_a_session_the_error_says_to_start_one() -> None:
    done = _python("import audiencefilter as af; af.parse({}).to_pyspark()", dict(os.environ))
    assert "needs a SparkSession: start one" in done.stderr


def test_without_java_the_error_says_to_install_it(tmp_path: Any) -> None:
    env = {k: v for k, v in os.environ.items() if k != "JAVA_HOME"}
    env["PATH"] = str(tmp_path)  # no java on it
    done = _python("import audiencefilter as af; af.spark_session()", env)
    assert "Spark needs a Java 17+ runtime" in done.stderr


def test_a_column_of_nulls_only_is_unknown_as_on_polars(spark: Any) -> None:
    """A VOID column holds no value: UNKNOWN for every condition, as polars' `pl.Null` (the
    frame core's one rule), where it used to be refused as a column of the wrong type."""
    from pyspark.sql import functions as F

    frame = spark.range(2).select(
        F.col("id").cast("string").alias("id"),
        F.lit(None).alias("points"),
        F.lit(None).alias("createdAt"),
        F.lit(None).alias("email"),
    )
    for where, expected in (
        ({"points": {"gt": 1}}, set()),
        ({"NOT": {"points": 1}}, set()),
        ({"createdAt": {"lt": "2025-01-01"}}, set()),
        ({"email": {"contains": "a"}}, set()),
        ({"points": None}, {"0", "1"}),
        ({"points": {"gt": {"_ref": "referrals"}}}, set()),
    ):
        flt = af.parse(where)
        assert {
            row["id"] for row in flt.select_frame(frame.withColumn("referrals", F.lit(3))).collect()
        } == expected
