"""Anniversaries on Spark: TIMESTAMP, TIMESTAMP_NTZ and DATE columns, and answers that do not
depend on the session time zone (conformance covers TIMESTAMP columns in a UTC session)."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest

import audiencefilter as af

pytestmark = pytest.mark.spark

NOW = datetime(2025, 6, 15, 8, tzinfo=UTC)
ZONES = ("UTC", "Europe/Paris", "America/Los_Angeles", "Asia/Tokyo", "Pacific/Chatham")
WALLS = [datetime(1995, 6, 14, 23, 30), datetime(1995, 6, 15, 12), datetime(2000, 6, 14, 11)]


def _ids(frame: Any, condition: Any) -> set[Any]:
    return {row["id"] for row in frame.filter(condition).collect()}


def _frame(spark: Any) -> Any:
    rows = [(f"r{i}", wall.replace(tzinfo=UTC), wall, wall.date()) for i, wall in enumerate(WALLS)]
    return spark.createDataFrame(
        [*rows, ("null", None, None, None)],
        "id string, instant timestamp, wall timestamp_ntz, day date",
    )


def _expected(flt: af.Filter, name: str) -> set[str]:
    records = [
        {"id": f"r{i}", name: datetime.combine(w.date(), datetime.min.time(), UTC)}
        if name == "day"
        else {"id": f"r{i}", name: w.replace(tzinfo=UTC)}
        for i, w in enumerate(WALLS)
    ]
    return {r["id"] for r in records if flt.matches(r, now=NOW)}


@pytest.mark.parametrize("session_zone", ["UTC", "America/New_York", "Asia/Kolkata"])
def test_anniversaries_on_every_column_type_whatever_the_session_zone(
    spark: Any, session_zone: str
) -> None:
    from pyspark.sql import functions as F

    schema = af.Schema.of(instant="datetime", wall="datetime", day="datetime")
    spark.conf.set("spark.sql.session.timeZone", session_zone)
    try:
        frame = _frame(spark)
        dtypes = {f.name: f.dataType for f in frame.schema.fields}
        for zone in ZONES:
            for name in ("instant", "wall", "day"):
                where = {name: {"anniversary": {"this": "day", "timeZone": zone}}}
                flt = af.parse(where, schema)
                wanted = _expected(flt, name)
                assert _ids(frame, flt.to_pyspark(now=NOW, dtypes=dtypes)) == wanted, (zone, name)
                if name == "instant":
                    sql = flt.to_sql("spark", now=NOW)
                    assert _ids(frame, F.expr(sql)) == wanted, (zone, sql)
    finally:
        spark.conf.set("spark.sql.session.timeZone", "UTC")


def test_a_date_column_is_midnight_utc(spark: Any) -> None:
    frame = spark.createDataFrame([("a", date(2000, 6, 15))], "id string, day date")
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    schema = af.Schema.of(day="datetime")
    west = af.parse({"day": {"anniversary": {"this": "day", "timeZone": "America/Denver"}}}, schema)
    # Midnight UTC on 15 June is the evening of 14 June in Denver.
    assert _ids(
        frame, west.to_pyspark(now=datetime(2025, 6, 14, 20, tzinfo=UTC), dtypes=dtypes)
    ) == {"a"}
