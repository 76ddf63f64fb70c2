"""The conformance suite on Spark: every `matches` case of tests/conformance/*.json, through
`Filter.to_pyspark()` and through `to_sql("spark")` text, selects the expected ids.

Spark runs one job per file, not per case: the file's `given` records become one DataFrame, and
every case is one boolean column of a single `select` (two per case, one for each way), so the
whole suite costs a few Spark jobs. Each case is still its own test, reading its column from the
file's batch. A case Spark refuses to write (`REFUSED`) must raise the documented error.
"""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.values import parse_datetime

HERE = Path(__file__).parent / "conformance"
WAYS = ("pyspark", "spark-sql")
REFUSED: dict[str, str] = {}
"""`file:case` -> the start of the error Spark raises for it instead of answering."""

pytestmark = pytest.mark.spark


def _cases() -> list[Any]:
    params = []
    for path in sorted(HERE.glob("*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        if "spark" in suite.get("refused", ()):  # tests/test_lists.py checks the refusal
            continue
        for index, case in enumerate(suite["cases"]):
            if "matches" in case:
                name = case.get("name", str(index))
                params.append(pytest.param(path.stem, index, id=f"{path.stem}:{name}"))
    return params


def _now(suite: dict[str, Any], case: dict[str, Any]) -> datetime | None:
    text = case.get("now", suite.get("now"))
    return None if text is None else parse_datetime(text)


_batches: dict[str, dict[tuple[str, int], set[str] | Exception]] = {}


def _batch(spark: Any, stem: str) -> dict[tuple[str, int], set[str] | Exception]:
    """Every case of one file on Spark in one job: (way, index) -> ids, or the refusal."""
    if stem in _batches:
        return _batches[stem]
    from pyspark.sql import functions as F

    from audiencefilter.backends.frames.spark import frame_for

    suite = json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))
    schema = af.Schema.from_mapping(suite["schema"]) if "schema" in suite else af.CONTACT
    frame = frame_for(spark, suite["given"], schema)
    dtypes = {f.name: f.dataType for f in frame.schema.fields}
    results: dict[tuple[str, int], set[str] | Exception] = {}
    columns = []
    for index, case in enumerate(suite["cases"]):
        if "matches" not in case:
            continue
        where = case["where_json"] if "where_json" in case else case["where"]
        flt = af.parse(where, schema)
        now = _now(suite, case)
        for way in WAYS:
            try:
                if way == "pyspark":
                    condition = flt.to_pyspark(dtypes=dtypes, now=now)
                else:
                    condition = F.expr(flt.to_sql("spark", now=now))
            except (ValueError, TypeError, af.FilterError) as exc:
                results[way, index] = exc
                continue
            columns.append(condition.alias(f"{way}:{index}"))
    rows = frame.select("id", *columns).collect()
    names = rows[0].__fields__ if rows else []
    for name in names[1:]:
        way, index = name.split(":")
        results[way, int(index)] = {row["id"] for row in rows if row[name] is True}
    _batches[stem] = results
    return results


@pytest.mark.parametrize("way", WAYS)
@pytest.mark.parametrize(("stem", "index"), _cases())
def test_spark_selects_expected_ids(spark: Any, stem: str, index: int, way: str) -> None:
    suite = json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))
    case = suite["cases"][index]
    found = _batch(spark, stem)[way, index]
    name = f"{stem}:{case.get('name', index)}"
    if name in REFUSED:
        assert isinstance(found, Exception) and str(found).startswith(REFUSED[name])
        return
    schema = af.Schema.from_mapping(suite["schema"]) if "schema" in suite else af.CONTACT
    if way == "spark-sql" and _relations(af.parse(case["where"], schema).lowered):
        # Spark SQL text refuses relation conditions; PySpark answers them.
        assert isinstance(found, af.FilterError), found
        assert "does not evaluate relation conditions" in str(found)
        return
    if isinstance(found, Exception):
        raise found
    assert found == set(case["matches"])


def _relations(node: Any) -> bool:
    from audiencefilter.language.nodes import Aggregated, Quantified, walk

    return any(isinstance(n, Quantified | Aggregated) for n in walk(node))
