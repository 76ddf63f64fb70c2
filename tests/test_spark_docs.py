"""The Spark job of docs/backends-spark.md runs as written, on the shared local Spark, over a small
Parquet dataset, and writes the ids memory selects."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af

pytestmark = pytest.mark.spark
DOC = Path(__file__).parent.parent / "docs" / "backends-spark.md"


def _job() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Running an audience over a Parquet dataset", 1)[1]
    found = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert found is not None, "the Spark section has no Python example"
    return found.group(1)


def test_the_documented_job_writes_the_audience(spark: Any, tmp_path: Path) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    now = datetime.now(UTC)
    records = [
        {"id": "a", "isVerified": True, "points": 150, "email": "Ann@ACME.com"},
        {"id": "b", "isVerified": True, "points": 99, "email": "bob@acme.com"},
        {"id": "c", "isVerified": False, "points": 500, "email": "cy@acme.com"},
        {"id": "d", "isVerified": True, "points": 100, "email": "dee@acme.co"},
        {"id": "e", "isVerified": True, "points": None, "email": "eve@acme.com"},
        {"id": "f", "isVerified": True, "points": 2**62, "email": "fay@Acme.Com"},
    ]
    for index, record in enumerate(records):
        record["createdAt"] = now - timedelta(days=30 * index)
    source, target = tmp_path / "contacts", tmp_path / "audience"
    frame_for(spark, [*records], af.CONTACT).write.parquet(str(source))
    namespace: dict[str, Any] = {"__name__": "audience"}
    exec(compile(_job(), "audience.py", "exec"), namespace)
    namespace["members"](spark, str(source)).write.mode("overwrite").parquet(str(target))
    written = {row["id"] for row in spark.read.parquet(str(target)).collect()}
    expected = {r["id"] for r in records if af.parse(namespace["WHERE"]).matches(r)}
    assert written == expected == {"a", "f"}
