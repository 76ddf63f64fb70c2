"""One local Spark session for the whole test run, shared by every Spark test.

The `spark` fixture (session scope) starts `local[2]` through the library's `local_session`:
bound to 127.0.0.1, UI off, UTC, en-US JVM locale. Starting takes several seconds, so it
happens once, the first time a test asks, and the session stops when the run ends. Without
pyspark or Java the Spark tests are skipped, unless `AUDIENCEFILTER_REQUIRE_SERVERS=1` (CI),
which makes the absence a failure.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

_state: dict[str, Any] = {}


def _unavailable(reason: str) -> None:
    if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason} (AUDIENCEFILTER_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason)


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    """The shared local SparkSession."""
    try:
        from audiencefilter.backends.frames.spark import local_session
    except ImportError as exc:
        _unavailable(f"pyspark is not installed: {exc}")
    try:
        session = local_session(cores=2, app_name="audiencefilter-tests")
    except Exception as exc:  # a missing or broken Java: the message says which
        _unavailable(f"no local Spark: {str(exc).splitlines()[0]}")
    session.sparkContext.setLogLevel("ERROR")
    # Test frames hold a handful of rows: interpreting expressions beats compiling them to
    # Java per query, which costs seconds on a cold JVM for a select of a hundred conditions.
    session.conf.set("spark.sql.codegen.wholeStage", "false")
    session.conf.set("spark.sql.codegen.factoryMode", "NO_CODEGEN")
    yield session
    session.stop()
