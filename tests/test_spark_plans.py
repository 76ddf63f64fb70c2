"""`to_pyspark()` costs what a hand-written PySpark expression costs: for the benchmark filters
F1-F5, Spark's optimized plan of the one is the plan of the other, so no timing is needed to
know that the generated Column is as fast (benchmarks/spark.py measures it anyway)."""

from __future__ import annotations

from typing import Any

import pytest

import audiencefilter as af

pytestmark = pytest.mark.spark


@pytest.mark.parametrize("name", ["F1", "F2", "F3", "F4", "F5"])
def test_optimized_plan_equals_the_hand_written_one(spark: Any, name: str) -> None:
    from pyspark.sql import types as T

    from audiencefilter.backends.frames.spark import CANONICAL
    from benchmarks.data import FIELDS
    from benchmarks.spark import BENCHES, _hand_written

    fields = [T.StructField("id", T.LongType())]
    fields += [T.StructField(f, CANONICAL[af.CONTACT[f].type]) for f in FIELDS]
    frame = spark.createDataFrame([], T.StructType(fields))
    bench = next(b for b in BENCHES if b.name == name)
    ours = frame.filter(af.parse(bench.where).to_pyspark())
    hand = frame.filter(_hand_written(name))

    def plan(df: Any) -> str:
        return str(df._jdf.queryExecution().optimizedPlan().toString())

    assert plan(ours) == plan(hand)
