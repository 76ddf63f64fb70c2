"""Suite-wide configuration: hypothesis profiles and the real database servers.

The `ci` profile keeps property tests bounded and derandomised (the same examples on every run,
no example database), so the whole suite stays fast and passes or fails the same way each time;
`thorough` is for deep runs (`HYPOTHESIS_PROFILE=thorough make test`). `search` leaves out
the `@example`s, so that a wide differential property shows what its generators find alone
(`HYPOTHESIS_PROFILE=search pytest --runxfail tests/test_differential_engines.py`).
`deep` is for the space test (`make deep`, docs/testing.md): hundreds of generated batches
through every surface, the whole sweep, and a report of counts and disagreements at the end.
"""

from __future__ import annotations

import gc
import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, settings

pytest_plugins = [
    "tests.servers",
    "tests.spark_session",
    "tests.clickhouse_engines",
    "tests.space_databases",
]

settings.register_profile(
    "ci",
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    # Every run, and every fresh clone, tries the same examples: `make test` must pass or fail
    # the same way each time. `thorough` and `search` explore.
    derandomize=True,
    database=None,
)
settings.register_profile(
    "thorough",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.register_profile(
    "search",
    max_examples=2000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    phases=[Phase.generate, Phase.target, Phase.shrink],
)
settings.register_profile(
    "deep",
    max_examples=5000,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


LONGEST_FIRST = (
    "tests/service/test_schemathesis.py",
    "tests/test_benchmarks_claims_services.py",
    "tests/test_shapes_relations.py",
    "tests/test_benchmarks_claims_spark.py",
    "tests/service/test_membership_benchmark.py",
    "tests/test_benchmarks_figures.py",
    "tests/service/test_memory_bound.py",
    "tests/test_benchmarks.py",
    "tests/test_residual.py",
    "tests/service/test_ratelimit_fallback.py",
    "tests/test_benchmarks_overlap.py",
    "tests/test_packaging.py",
)
"""Files of few tests that run for long (tens of seconds to three minutes), measured by
`--durations`: handed out first."""


def pytest_collection_modifyitems(items: list[Any]) -> None:
    """Files in the order workers should take them (`make test` runs `--dist loadfile
    --no-loadscope-reorder`): `LONGEST_FIRST`, then the others by their number of tests, most
    first, as xdist's own reordering has them. That reordering puts a file of one long test
    last (the schemathesis run: three minutes), where one worker ran it alone while the other
    had finished. A file's tests keep their order."""
    counts: dict[str, int] = {}
    for item in items:
        path = item.nodeid.split("::")[0]
        counts[path] = counts.get(path, 0) + 1
    first = {path: rank for rank, path in enumerate(LONGEST_FIRST)}

    def place(item: Any) -> tuple[int, int]:
        path = item.nodeid.split("::")[0]
        return first.get(path, len(first)), -counts[path]

    items.sort(key=place)


_FROZEN_AT: list[str] = [""]
_FREEZE = os.environ.get("AUDIENCEFILTER_TEST_GC_FREEZE") != "0"
_COLLECTED: list[bool] = [False]


def _note_a_full_collection(phase: str, info: dict[str, int]) -> None:
    if phase == "stop" and info["generation"] == 2:
        _COLLECTED[0] = True


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_setup(item: Any) -> None:
    """What is alive when a test starts is moved out of the collector's reach (`gc.freeze`,
    after a young collection frees the recent garbage of the tests before): at each file's
    first test, and at any test that follows a full collection.

    A worker holds five million objects after collection and eleven million by the middle of
    its run (the items, the session's caches, the engines' tables); every full collection
    walked them all, 3 to 10 s each, a fifth of a worker's CPU. Frozen at each file's start, a
    full collection walked what the file had made so far, each walk longer than the last: the
    relation shapes' file built five million objects (SQLAlchemy's columns and compiled
    statements), and 20 walks took 11 s of its 39 s. Frozen again after each, a full collection
    walks what was made since the last. Nothing is frozen during a test, so a test that frees
    what it made and collects sees it freed. What was alive at a freeze and turns into a cycle
    of garbage later (a module's app at the module's end) stays unfreed, memory a test run can
    spare. `AUDIENCEFILTER_TEST_GC_FREEZE=0` leaves the collector as it is, to measure without.
    Not before the first test either: `gc.get_referrers` does not see frozen objects, and
    Hypothesis asks it when a module registers a random generator at import."""
    if not _FREEZE:
        return
    path = item.nodeid.split("::")[0]
    if path != _FROZEN_AT[0] or _COLLECTED[0]:
        if not _FROZEN_AT[0]:
            gc.callbacks.append(_note_a_full_collection)
        _FROZEN_AT[0] = path
        gc.collect(1)
        gc.freeze()
    _COLLECTED[0] = False


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: Any) -> None:
    """The counts of the space and of the storage shapes, where this run asked them."""
    _space_summary(terminalreporter, config)
    _shapes_summary(terminalreporter)


def _shapes_summary(terminalreporter: Any) -> None:
    """The shape cells' checks per family, with the cells and engines they ran on."""
    tally = getattr(sys.modules.get("tests.shapes"), "TALLY", None)
    if tally is None or not tally.checks:
        return
    write = terminalreporter.write_line
    terminalreporter.section("the storage shapes against the oracle")
    for family in sorted(tally.checks):
        write(f"{family:28} {tally.checks[family]:>9} checks")
    write(
        f"{'total':28} {sum(tally.checks.values()):>9} checks on {len(tally.cells)} cells, "
        f"{len(tally.engines)} engines, {tally.disagreements} disagreements"
    )


def _space_summary(terminalreporter: Any, config: Any) -> None:
    """The space test's counts: checks, documented refusals and disagreements per surface
    (tests/test_space*.py, one file per family of surfaces, one tally in tests/space_run.py);
    the full report, repros included, as JSON in a file."""
    module = sys.modules.get("tests.space_run")
    tally = getattr(module, "TALLY", None)
    if tally is None or not tally.checks:
        return
    write = terminalreporter.write_line
    terminalreporter.section("the space against the oracle")
    for surface in sorted(tally.checks):
        write(
            f"{surface:28} {tally.checks[surface]:>9} checks {tally.refusals[surface]:>7} "
            f"refused (documented) {tally.disagreements[surface]:>5} disagreements"
        )
    write(f"{'total':28} {sum(tally.checks.values()):>9} checks")
    path = Path(
        os.environ.get("SPACE_REPORT") or config._tmp_path_factory.getbasetemp() / "space.json"
    )
    report = json.dumps(tally.report(), indent=1, ensure_ascii=True, default=str)
    path.write_text(report, encoding="utf-8")
    write(f"report with every repro: {path}")


def pytest_sessionfinish(session: Any, exitstatus: int) -> None:
    """The folders made outside `tmp_path` go now, before the exit handlers (tests/scratch.py);
    the chDB session's own folder with them (tests/clickhouse_engines.py)."""
    from tests import clickhouse_engines, scratch

    clickhouse_engines.close()
    scratch.remove_all()


def pytest_unconfigure(config: object) -> None:
    """Take hypothesis's garbage-collection timer out of `gc.callbacks` when the run ends.

    Hypothesis adds a callback to `gc.callbacks` the first time a `@given` test runs and never
    removes it. At interpreter exit the module globals it reads are wiped before the last
    collections; the callback still runs in them, and objects still in the graph
    then, DuckDB's module-level type constants among them, are never freed: DuckDB's nanobind
    build reports them as ~60 lines of `nanobind: leaked ...` after the summary
    (tests/test_shutdown.py). The run is over here, so the timer has nothing left to measure;
    nor has the note of full collections (`_note_a_full_collection`) any use.
    """
    gc.callbacks[:] = [
        callback
        for callback in gc.callbacks
        if not getattr(callback, "__module__", "").startswith("hypothesis.")
        and callback is not _note_a_full_collection
    ]
