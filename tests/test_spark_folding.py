"""Spark's `lower` against Python's `str.lower()`, over every code point.

The Spark back-ends fold case with Spark's own `lower` (ICU, a newer Unicode than Python
3.11's) and refuse the literals that could meet a difference (`fold_refusal`). That is sound
only if `LOWER_DIFFERS` is exactly the set where the two differ, and if no difference folds
to or from ASCII: this module measures both on the shared local Spark. Code points go in
chunks of 4096 per row of a Parquet file, so the whole range is under 300 rows and two small
jobs.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.backends.sql.dialects.spark import LOWER_DIFFERS, fold_refusal

pytestmark = pytest.mark.spark
CHUNK = 4096


def _code_points() -> list[int]:
    return [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]


def _spark_lower(spark: Any, texts: list[str], folder: Path | None = None) -> list[str]:
    from pyspark.sql import functions as F

    if folder is None:
        frame = spark.createDataFrame([(i, t) for i, t in enumerate(texts)], "i int, t string")
    else:  # many long texts: through a file, not through the Python-to-JVM pipe
        import pyarrow as pa
        import pyarrow.parquet as pq

        path = folder / "texts.parquet"
        pq.write_table(pa.table({"i": list(range(len(texts))), "t": texts}), path)
        frame = spark.read.parquet(str(path))
    rows = frame.select("i", F.lower("t").alias("low")).collect()
    return [row["low"] for row in sorted(rows, key=lambda row: row["i"])]


def test_lower_differs_from_python_exactly_on_the_documented_code_points(
    spark: Any, tmp_path: Path
) -> None:
    points = _code_points()
    # Separated by spaces: no character is next to a capital sigma or another letter.
    chunks = [" ".join(chr(c) for c in points[i : i + CHUNK]) for i in range(0, len(points), CHUNK)]
    suspects = [
        chr(c)
        for chunk, low, start in zip(
            chunks, _spark_lower(spark, chunks, tmp_path), range(0, len(points), CHUNK), strict=True
        )
        if low != chunk.lower()
        for c in points[start : start + CHUNK]
    ]
    differing = {
        ch: low
        for ch, low in zip(suspects, _spark_lower(spark, suspects), strict=True)
        if low != ch.lower()
    }
    assert differing == LOWER_DIFFERS
    # The native fold is used for ASCII literals whatever the data: no difference involves ASCII.
    assert not any(ch.isascii() or low.isascii() for ch, low in differing.items())


@pytest.mark.parametrize(
    "text",
    ["AΣ", "ΑΣ Β", "Σ", "AΣB", "A\u0301Σ", "A.Σ", "AΣ.", "ΣΊΣΥΦΟΣ", "İSTANBUL", "ẞ", "Ǆ"],
)
def test_lower_agrees_on_context_and_multi_character_folds(spark: Any, text: str) -> None:
    assert _spark_lower(spark, [text]) == [text.lower()]


@pytest.mark.parametrize("literal", ["\ua7cb", "\u0264x", "prefix-\U00010d50"])
def test_a_literal_that_could_meet_a_difference_is_refused(spark: Any, literal: str) -> None:
    assert fold_refusal(literal) is not None
    flt = af.parse({"email": {"contains": literal}})
    with pytest.raises(ValueError, match=r'"contains" on "email" faithfully: .*U\+'):
        flt.to_pyspark()
    with pytest.raises(ValueError, match="case-insensitive comparison"):
        flt.to_sql("spark")


def test_a_case_sensitive_literal_with_such_a_code_point_runs_on_pyspark(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    records = [{"id": "a", "email": "x\ua7cb"}, {"id": "b", "email": "x\u0264"}]
    flt = af.parse({"email": {"endsWith": "\ua7cb"}})
    frame = frame_for(spark, records, flt.schema)
    assert {row["id"] for row in flt.select_frame(frame).collect()} == {"a"}
