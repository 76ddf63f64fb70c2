"""The measures of the long claims: minutes to hours at the sizes the document states (a FilterSet
of 100,000 filters, a simulated week, the service's rate on PostgreSQL, a million contacts, Spark
at 10 million). `python -m benchmarks.claims` runs them only when named (`--only`) or with
`--long`; their `--quick` form, at tiny sizes, checks that they still run and answer."""

from __future__ import annotations

import functools
import statistics

from .. import (
    filterset_scale,
    million,
    overlap_settle,
    rate_layers,
    service_analysis,
    service_rate,
    simulated_week,
    spark,
    update_layers,
)
from .registry import Unavailable
from .services import membership_ratios, sqlite_url

FILTERSET_RUNS = 3
"""Runs of the FilterSet's changes a claim takes the median of: one run's p50 spread by twice
on one tree and one quiet machine (docs/performance-history.md, *A FilterSet of 100,000
filters*), so a single run's figure says as much about the moment as about the code."""


QUICK_SPARK = {
    "spark.sql.codegen.wholeStage": "false",
    "spark.sql.codegen.factoryMode": "NO_CODEGEN",
}
"""The quick run's Spark: 2,000 rows are read faster interpreted than compiled to Java first,
which costs seconds a query on a cold JVM (as for the tests' own session)."""


@functools.cache
def _filterset(quick: bool) -> tuple[list[float], ...]:
    """`Tracked.update`'s CPU ms of each change, 100,000 filters and 2,000 changes, in each of
    `FILTERSET_RUNS` runs, each building its own set (`benchmarks.filterset_scale`)."""
    filters, changes = (200, 40) if quick else (100_000, 2_000)
    return tuple(filterset_scale.update_cpu_ms(filters, changes) for _ in range(FILTERSET_RUNS))


def filterset_p50(quick: bool) -> list[float]:
    """`Tracked.update` per change, median CPU ms: the median of the runs' medians."""
    return [statistics.median(statistics.median(run) for run in _filterset(quick))]


def filterset_p99(quick: bool) -> list[float]:
    """`Tracked.update` per change, 99th percentile of CPU ms as the benchmark prints it: the
    median of the runs' 99th percentiles."""
    runs = _filterset(quick)
    return [statistics.median(filterset_scale.quantile(run, 0.99) for run in runs)]


@functools.cache
def _week(quick: bool) -> simulated_week.Tally:
    if quick:
        return simulated_week.simulate(contacts=40, audiences=12, days=1)
    return simulated_week.simulate(contacts=200, audiences=100, days=7)


def week_faults(quick: bool) -> list[float]:
    """Missed, duplicated and wrong events of the simulated week."""
    tally = _week(quick)
    return [float(tally.missed), float(tally.duplicated), float(tally.wrong)]


def week_on_time(quick: bool) -> list[float]:
    """The share of events written within 1 s of their instant (the application's clock)."""
    tally = _week(quick)
    return [100 * tally.on_time / tally.events if tally.events else 100.0]


@functools.cache
def _rate(quick: bool) -> service_rate.Result:
    argv = ["--contacts", "100000", "--seconds", "30", "--repeats", "1"]
    argv += ["--batch-seconds", "60", "--batch-clients", "4", "--batch-rows", "500"]
    if quick:
        argv = ["--contacts", "60", "--small", "30", "--seconds", "2", "--clients", "2"]
        argv += ["--workers", "1", "--audiences", "6", "--touched", "3,20", "--repeats", "1"]
        argv += ["--batch-seconds", "2", "--batch-rows", "8"]
    result = service_rate.run(service_rate.parse(argv))
    if result is None or result.sustained is None:
        raise Unavailable("no PostgreSQL server for the service's rate")
    return result


def rate_missing(quick: bool) -> list[float]:
    """Membership events of the sustained writes missing from the feed."""
    return [float(_rate(quick).sustained.lags.missing)]  # type: ignore[union-attr]


def rate_updates(quick: bool) -> list[float]:
    """Updates acknowledged a second, 8 clients for 30 s on 100,000 contacts."""
    sustained = _rate(quick).sustained
    assert sustained is not None
    return [sustained.writes / sustained.seconds]


def rate_batched(quick: bool) -> list[float]:
    """Rows updated a second by upsert imports, 4 clients of 500 rows for 60 s on 100,000
    contacts."""
    batched = _rate(quick).batched
    if batched is None:
        raise Unavailable("no batched phase in the service's rate")
    return [batched.updates / batched.seconds]


def patch_cpu(quick: bool) -> list[float]:
    """One PATCH's CPU in the service's thread, ours ÷ the hand-written endpoint's
    (`benchmarks.rate_layers`: 20,000 contacts, 100 audiences, PostgreSQL)."""
    figures = _layers(quick, [])
    return [figures.thread["ours"] / figures.thread["hand"]]


def patch_calls(quick: bool) -> list[float]:
    """The function calls of one PATCH on the service's thread (`benchmarks.rate_layers`
    counting them: 5,000 contacts, 100 audiences, PostgreSQL)."""
    figures = _layers(quick, ["--contacts", "5000", "--updates", "100", "--rounds", "2"])
    return [figures.calls["ours"]]


def patch_planning(quick: bool) -> list[float]:
    """PostgreSQL's time planning one PATCH's top-level statements, ms (`benchmarks.rate_layers
    --statements`, `pg_stat_statements`: 20,000 contacts, 100 audiences)."""
    figures = _layers(quick, ["--statements"], statements=True)
    return [sum(cost.plan_ms for cost in figures.statements["ours"] if cost.toplevel)]


def patch_statements(quick: bool) -> list[float]:
    """PostgreSQL's top-level statements a PATCH, ours (the key's read, `BEGIN` and `COMMIT`
    counted; `benchmarks.rate_layers --statements`, `pg_stat_statements`: 20,000 contacts, 100
    audiences): each one a round trip of the service's."""
    figures = _layers(quick, ["--statements"], statements=True)
    return [sum(cost.calls for cost in figures.statements["ours"] if cost.toplevel)]


def patch_server_cpu(quick: bool) -> list[float]:
    """PostgreSQL's CPU for one PATCH, ours ÷ the hand-written endpoint's (`benchmarks.
    rate_layers`, from /proc of the server's processes: 20,000 contacts, 100 audiences)."""
    # The server's CPU is read from /proc in ticks of 10 ms: the quick form's run is long
    # enough for the hand-written side to span several (six updates read as none at all).
    quick_run = ("--contacts", "300", "--audiences", "10", "--updates", "80", "--rounds", "1")
    figures = _layers_run(quick_run) if quick else _layers(quick, [])
    return [figures.database["ours"] / figures.database["hand"]]


def update_statement_server(quick: bool) -> list[float]:
    """PostgreSQL's time executing one update's `UPDATE contacts`, ours (with its row, stamp,
    memberships and position read back) ÷ the hand-written one's (`benchmarks.update_layers
    --statements`: a million contacts, the update of `benchmarks.million`)."""
    rows, updates = (2_000, 10) if quick else (1_000_000, 200)
    found = update_layers.statements_on_a_server(rows, updates)
    if found is None:
        raise Unavailable("no PostgreSQL server for the update's statements")
    ours, hand = found["ours"], found["hand-written"]
    return [update_layers.update_statement_ms(ours) / update_layers.update_statement_ms(hand)]


def _layers(quick: bool, argv: list[str], statements: bool = False) -> rate_layers.Figures:
    """The figures of `argv`'s run; the quick form of every such claim is one tiny run."""
    tiny = ("--contacts", "300", "--audiences", "10", "--updates", "6", "--rounds", "1")
    return _layers_run((*tiny, *(["--statements"] if statements else [])) if quick else tuple(argv))


@functools.cache
def _layers_run(argv: tuple[str, ...]) -> rate_layers.Figures:
    figures = rate_layers.run(rate_layers.parse(list(argv)))
    if figures is None:
        raise Unavailable("no PostgreSQL server for the PATCH's layers")
    return figures


def million_audience(quick: bool) -> list[float]:
    """A smart audience over a list of 1,000,000 contacts on SQLite, ours ÷ hand-written."""
    count, runs = (300, 1) if quick else (1_000_000, 11)
    with sqlite_url() as url:
        result = million.run("SQLite", url, count, runs, with_profile=False)
    return [m.ratio for m in result.measures if m.what == "audience over the list"]


@functools.cache
def _compare(quick: bool) -> dict[str, float]:
    """`benchmarks.service_analysis --only compare` on SQLite: median ms by way (ours, the
    previous scan, the hand-written counts), at 200,000 contacts (2,000 when quick)."""
    with sqlite_url() as url:
        bench = service_analysis.Bench(url, 2_000 if quick else 200_000)
        try:
            found = service_analysis.measure_compare(bench, 3 if quick else 21)
        finally:
            bench.close()
    return {label: ms for label, ms, _ in found}


def compare_ratio(quick: bool) -> list[float]:
    """The same compare, ours ÷ the hand-written SQL of its counts."""
    found = _compare(quick)
    return [found["compare, ours"] / found["compare, hand SQL"]]


@functools.cache
def _page_100(kind: str, quick: bool) -> float:
    """`benchmarks.million --only reads --audiences 100`'s contacts page, ours ÷ hand."""
    return _reads_ratio(kind, quick, "contacts page of 100", 10 if quick else 100)


def _reads_ratio(kind: str, quick: bool, step: str, audiences: int) -> float:
    """`benchmarks.million --only reads --audiences A`'s `step`, ours ÷ hand."""
    count, runs = (500, 3) if quick else (200_000, 21 if audiences > 1 else 41)
    with million.database(kind) as (url, note):
        if url is None:
            raise Unavailable(f"no PostgreSQL server for the {step} ({note})")
        result = million.run(note, url, count, runs, False, only="reads", audiences=audiences)
    [ratio] = [m.ratio for m in result.measures if m.what == step]
    return ratio


def update_sqlite(quick: bool) -> list[float]:
    """One contact update moving it across one audience on SQLite, ours ÷ hand."""
    return [_reads_ratio("sqlite", quick, "one contact update", 1)]


def update_postgresql(quick: bool) -> list[float]:
    """The same update on PostgreSQL (a throw-away server, or `AUDIENCEFILTER_BENCH_PG_URL`)."""
    return [_reads_ratio("postgresql", quick, "one contact update", 1)]


def page_100_sqlite(quick: bool) -> list[float]:
    """The contacts page of 100 in a list of 100 smart audiences on SQLite, ours ÷ hand."""
    return [_page_100("sqlite", quick)]


def page_100_postgresql(quick: bool) -> list[float]:
    """The same page on PostgreSQL (a throw-away server, or `AUDIENCEFILTER_BENCH_PG_URL`)."""
    return [_page_100("postgresql", quick)]


def compare_speedup(quick: bool) -> list[float]:
    """The same compare, the previous scan ÷ ours."""
    found = _compare(quick)
    return [found["compare, previous scan"] / found["compare, ours"]]


def million_import_sqlite(quick: bool) -> list[float]:
    """The bulk import of 1,000,000 contacts on SQLite, ours ÷ hand-written (one run each)."""
    return _million_import("sqlite", 300 if quick else 1_000_000)


def million_audience_postgresql(quick: bool) -> list[float]:
    """A smart audience over a list of 200,000 contacts on PostgreSQL, ours ÷ hand-written
    (both lists loaded by the hand-written import; a throw-away server, or the one at
    `AUDIENCEFILTER_BENCH_PG_URL`)."""
    with million.database("postgresql") as (url, note):
        if url is None:
            raise Unavailable(f"no PostgreSQL server for the audience ({note})")
        result = million.run(note, url, 300 if quick else 200_000, 1 if quick else 3,
                             with_profile=False, only="reads")  # fmt: skip
    return [m.ratio for m in result.measures if m.what == "audience over the list"]


def million_import_postgresql(quick: bool) -> list[float]:
    """The bulk import of 1,000,000 contacts on PostgreSQL, ours ÷ hand-written (one run each;
    a throw-away server, or the one at `AUDIENCEFILTER_BENCH_PG_URL`)."""
    return _million_import("postgresql", 300 if quick else 1_000_000)


def _million_import(kind: str, count: int) -> list[float]:
    with million.database(kind) as (url, note):
        if url is None:
            raise Unavailable(f"no PostgreSQL server for the import ({note})")
        result = million.run(note, url, count, 1, with_profile=False, only="import")
    return [m.ratio for m in result.measures if m.what == "bulk import"]


def thousand_still(quick: bool) -> list[float]:
    """`PATCH` of a field no filter reads, 1,000 audiences ÷ none, 2,000 contacts, 30 runs."""
    ratios = membership_ratios(*((40, 20, 3) if quick else (2_000, 1_000, 30)))
    return [ratios["update, no change"]]


def spark_hand_ratio(quick: bool) -> list[float]:
    """Hand-written PySpark time ÷ `to_pyspark()` time, F1-F5, 10,000,000 contacts."""
    rows, repeat = (2_000, 1) if quick else (10_000_000, 3)
    files = [str(path) for path in spark.parts(rows)]
    found = spark.run_engine("spark", files, repeat, QUICK_SPARK if quick else None)
    return [found[b.name]["hand"][0] / found[b.name]["to_pyspark"][0] for b in spark.BENCHES]


@functools.cache
def _update_cpu(kind: str, quick: bool) -> update_layers.Cpu:
    """`benchmarks.update_layers --cpu`: an update's CPU, ours with the driver path and
    without, and by hand, at 20,000 contacts (500 when quick)."""
    rows, updates, rounds = (500, 20, 1) if quick else (20_000, 200, 5)
    with million.database(kind) as (url, note):
        if url is None:
            raise Unavailable(f"no PostgreSQL server for the update's CPU ({note})")
        return update_layers.cpu(url, note, rows, updates, rounds)


def update_cpu_sqlite(quick: bool) -> list[float]:
    """One contact update's CPU on SQLite, ours ÷ hand (no spans)."""
    found = _update_cpu("sqlite", quick)
    return [found.ours / found.hand]


def update_cpu_postgresql(quick: bool) -> list[float]:
    """The same on PostgreSQL (this process's CPU: the server's is not counted on either side)."""
    found = _update_cpu("postgresql", quick)
    return [found.ours / found.hand]


def update_cpu_sqlite_million(quick: bool) -> list[float]:
    """One contact update's CPU at 1,000,000 contacts on SQLite (1,000 when quick), ours ÷ hand:
    `benchmarks.update_layers --cpu --without-off`."""
    rows, updates, rounds = (1_000, 20, 1) if quick else (1_000_000, 200, 5)
    with million.database("sqlite") as (url, note):
        assert url is not None, note
        found = update_layers.cpu(url, note, rows, updates, rounds, with_off=False)
    return [found.ours / found.hand]


def driver_path_gain(quick: bool) -> list[float]:
    """The update's CPU with the driver path off ÷ on, SQLite and PostgreSQL."""
    found = [_update_cpu(kind, quick) for kind in ("sqlite", "postgresql")]
    return [each.ours_off / each.ours for each in found]


def settle_gain(stayed: int, moved: int) -> functools.partial[list[float]]:
    """The measure of one case of `benchmarks.overlap_settle`: the settling's whole pairs ÷
    its moved pairs, on SQLite and on PostgreSQL."""
    return functools.partial(_settle_gain, (stayed, moved))


def _settle_gain(case: tuple[int, int], quick: bool) -> list[float]:
    found = [_settled(kind, quick) for kind in ("sqlite", "postgresql")]
    return [
        all_ms / moved_ms for rows in found for (*at, moved_ms, all_ms) in rows if tuple(at) == case
    ]


@functools.cache
def _settled(kind: str, quick: bool) -> tuple[tuple[int, int, float, float], ...]:
    """Every case of `benchmarks.overlap_settle` on one database: 64 noted contacts (4 quick),
    the median of 31 runs each way (1 quick)."""
    contacts, runs = (4, 1) if quick else (overlap_settle.overlaps.SETTLE_EVERY, 31)
    with million.database(kind) as (url, name):
        if url is None:
            raise Unavailable(name)
        return tuple(overlap_settle.run(name, url, contacts, runs).rows)
