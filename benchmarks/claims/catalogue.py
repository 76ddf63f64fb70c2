"""Every claim of the performance pages (docs/performance*.md), in the order they were written.

Each entry names the heading of the section holding its words (whatever page that section is
on: `markers.py` finds it), and its `stated` range is written, word for word, in the text its
marker (`<!-- claim: ID -->`) stands before; `tests/test_benchmarks_claims.py` checks both ways.
"""

from __future__ import annotations

from . import library as lib
from . import long, services
from .registry import Claim, at_least, at_most, between, none

TARGETS = "Reading the targets"
GATES = "The speed gates"
MATCHES = "`matches(record, now=...)` in a loop"
CONSTRUCTS = "Each construct against hand-written code"
PARSE = "Why `parse` is fast"
SPARK = "Spark at 10 million contacts"
RELATIONS = "Relations"
MILLION = "A million contacts"
MILLION_IMPORT = "The import at a million contacts, both databases (2026-11-26, the evening)"
MEMBERSHIP = "Stored membership (the service)"
THOUSAND = "A thousand audiences on one list"
FILTERSET = "A FilterSet of 100,000 filters"
SCHEDULER = "The membership scheduler"
WEEK = "A simulated week of time audiences"
IMPORT = "Bulk import into a list with 100 audiences"
COST = "The cost model"
RESIDUAL = "Residual judgement on writes (the service)"
RATE = "The service's rate on PostgreSQL"
BATCHED = "The service's part of a turn, cut by a quarter"
GAPS = "Known gaps to hand code"
WEBHOOKS = "Webhook delivery"
ACTIONS = "Behaviour audiences (the service)"
READS = "Two read paths near the hand-written floor (2026-11-27)"
HOT = "A hot route beside FastAPI, and prepared statements kept again (2026-11-28, night)"
WALK = "A large audience paged by walking its list (2026-11-28)"
DRIVER = "The write's fixed statements on the driver's cursor (2026-11-29)"
DOOR = "The door's read, its lock and its list in one round trip (2026-11-29)"
PLANNED = "Statements planned once on PostgreSQL (2026-11-29)"
NEARER = "The ties counted from their nearer end (2026-11-29)"
SETTLE = "The settling pairs only what moved (2026-11-29)"
CARRIED = "The memberships carried in the events' statement (2026-11-29)"
RANGES = "The ties ahead counted as ranges of the index alone (2026-11-29)"

ENGINES_100K = "100,000 contacts (benchmarks/data.py)"
GAPS_DATA = "50,000 contacts; relations 10,000 with 100,000 actions"
CONSTRUCTS_DATA = "50,000 contacts; relations 10,000 with 100,000 actions"
MEMORY_SQL = ("compiled memory", "SQLite", "DuckDB", "polars")

CLAIMS: tuple[Claim, ...] = (
    Claim("targets.f2-jsonlogic", TARGETS, "compile() ÷ json-logic on F2, records a second",
          between("between 12× and 30×", 12, 30), ENGINES_100K,
          lib.engine_ratio(lib.COMPILED, lib.JSON_LOGIC, "F2")),
    Claim("targets.f2-polars", TARGETS, "to_polars() ÷ compile() on F2, records a second",
          between("between 0.5× and 10×", 0.5, 10), ENGINES_100K,
          lib.engine_ratio(lib.POLARS_OURS, lib.COMPILED, "F2")),
    Claim("targets.polars-twins", TARGETS, "to_polars() ÷ the same polars expression, F1 and F3",
          between("from about 0.5 to 2", 0.5, 2), ENGINES_100K,
          lib.engine_ratio(lib.POLARS_OURS, lib.POLARS_HAND, "F1", "F3")),
    Claim("gates.compile", GATES, "compiled predicate's speed ÷ the lambda's, F1-F5",
          between("0.7x to 1.25x", 0.7, 1.25), "30,000 contacts", lib.gate_compile),
    Claim("gates.parse", GATES, "parse of F5 ÷ json.loads of its text",
          at_most("<= 4x", 4), "F5's text", lib.gate_parse),
    Claim("gates.to_sql", GATES, "to_sql of F5 ÷ json.loads of its text",
          at_most("<= 15x", 15), "F5's text", lib.gate_to_sql),
    Claim("gates.matches-now", MATCHES, "matches(record, now=t) ÷ the clocked predicate",
          between("0.8x to 1.6x", 0.8, 1.6), "20,000 contacts", lib.gate_matches),
    Claim("constructs.lists-memory", CONSTRUCTS, "memory: tags hasSome [3 tags], hand ÷ ours",
          between("lists 0.65x-0.95x", 0.65, 0.95), CONSTRUCTS_DATA,
          lib.construct("memory: hasSome")),
    Claim("constructs.relations-memory", CONSTRUCTS, "memory: count, sum, none in 60 days",
          between("count, sum and window 0.6x-1.1x", 0.6, 1.1), CONSTRUCTS_DATA,
          lib.construct("memory: count", "memory: sum", "memory: none")),
    Claim("constructs.anniversary-memory", CONSTRUCTS, "memory: this week in Paris, on a clock",
          between("anniversaries 1.4x-2.5x", 1.4, 2.5), CONSTRUCTS_DATA,
          lib.construct("memory: this week")),
    Claim("constructs.contains-sql", CONSTRUCTS, "SQLite and DuckDB contains (any case)",
          between("contains 0.25x-1.0x", 0.25, 1.0), CONSTRUCTS_DATA,
          lib.construct("SQLite: contains", "DuckDB: contains")),
    Claim("constructs.long-in-duckdb", CONSTRUCTS, "DuckDB in 400 values, one parameter",
          between("long IN on DuckDB 1.7x-3.5x", 1.7, 3.5), CONSTRUCTS_DATA,
          lib.construct("DuckDB: in 400")),
    Claim("parse.f5", PARSE, "parse of F5 ÷ json.loads, medians of the gate",
          between("3.2x to 4x", 3.2, 4), "F5's text", lib.gate_parse),
    Claim("spark.hand-ratio", SPARK, "hand PySpark ÷ to_pyspark time, F1-F5",
          between("0.74x to 1.21x", 0.74, 1.21), "10,000,000 contacts in Parquet",
          long.spark_hand_ratio, long=True),
    Claim("relations.share3-memory", RELATIONS, "compiled memory share3, hand ÷ ours",
          between("between 0.6x and 1.0x", 0.6, 1.0), "100,000 contacts, 1,000,000 actions",
          lib.relation(("compiled memory",), ("share3",))),
    Claim("relations.engines", RELATIONS, "polars, SQLite, DuckDB, both segments, hand ÷ ours",
          between("from 0.5x to 2x", 0.5, 2), "100,000 contacts, 1,000,000 actions",
          lib.relation(MEMORY_SQL[1:], ("share3", "idle60"))),
    Claim("million.audience-sqlite", MILLION, "audience over the list on SQLite, ours ÷ hand",
          at_most("1.25×", 1.25), "1,000,000 contacts a list", long.million_audience, long=True),
    Claim("million.audience-postgresql", WALK, "audience over the list on PostgreSQL, ours ÷ hand",
          at_most("≤ 2x", 2), "200,000 contacts a list", long.million_audience_postgresql,
          long=True),
    Claim("million.import-sqlite", MILLION_IMPORT, "bulk import on SQLite, ours ÷ hand",
          at_most("≤ 2x", 2), "1,000,000 contacts, requests of 1,000", long.million_import_sqlite,
          long=True),
    Claim("million.import-postgresql", MILLION_IMPORT, "bulk import on PostgreSQL, ours ÷ hand",
          at_most("≤ 2x", 2), "1,000,000 contacts, requests of 1,000",
          long.million_import_postgresql, long=True),
    Claim("membership.page", MEMBERSHIP, "contacts page, 100 audiences ÷ none",
          at_most("≤ 1.5x", 1.5), "2,000 contacts a list, SQLite",
          services.membership("contacts page of 100")),
    Claim("membership.update-moving", MEMBERSHIP, "update moving across 50 audiences ÷ none",
          at_most("≤ 2x", 2), "2,000 contacts a list, SQLite",
          services.membership("update, moving")),
    Claim("membership.update-still", MEMBERSHIP, "update of a field no filter reads ÷ none",
          at_most("≤ 2x", 2), "2,000 contacts a list, SQLite",
          services.membership("update, no change")),
    Claim("thousand.update-still", THOUSAND, "PATCH no filter reads, 1,000 audiences ÷ none",
          at_most("≤ 2x", 2), "2,000 contacts a list, SQLite", long.thousand_still),
    Claim("judging.ratio", THOUSAND, "a thousand predicates in turn ÷ one FilterSet, per row",
          between("2.7x to 5x", 2.7, 5), "1,000 filters, 200 rows", lib.judging_ratio),
    Claim("filterset.tracked-p50", FILTERSET, "Tracked.update per change, p50 CPU",
          at_most("≤ 1 ms p50", 1, "ms"), "100,000 filters, 2,000 changes, median of 3 runs",
          long.filterset_p50, long=True),
    Claim("filterset.tracked-p99", FILTERSET, "Tracked.update per change, p99 CPU",
          at_most("≤ 5 ms p99", 5, "ms"), "100,000 filters, 2,000 changes, median of 3 runs",
          long.filterset_p99, long=True),
    Claim("scheduler.median-lag", SCHEDULER, "the scheduler's median lag of audience.left",
          at_most("under 250 ms", 250, "ms"), "20,000 contacts, 500 turning old",
          services.scheduler_median_lag),
    Claim("week.faults", WEEK, "missed / duplicated / wrong events",
          none("0 / 0 / 0"), "200 contacts, 100 audiences, 7 days", long.week_faults, long=True),
    Claim("week.on-time", WEEK, "events within 1 s of their instant (application's clock)",
          at_least("99.9 %", 99.9, "%"), "200 contacts, 100 audiences, 7 days",
          long.week_on_time, long=True),
    Claim("import.sqlite-ratio", IMPORT, "import of 1,000 contacts, 100 audiences ÷ none",
          at_most("at most 30x", 30), "1,000 contacts a list, SQLite",
          services.import_ratio),
    Claim("cost.worst", COST, "worst factor either way, memory and SQLite",
          at_most("within 2x", 2), "5,000 contacts, ten actions each", lib.cost_worst),
    Claim("cost.held-out", COST, "worst factor on the odd filters, fitted on the even",
          at_most("up to 2.4x", 2.4), "5,000 contacts, ten actions each", lib.cost_held_out),
    Claim("cost.check", COST, "the largest uncached cost() over the 30 fixed filters",
          at_most("at most 50 µs", 50, "µs"), "the 30 filters of benchmarks/cost_model.py",
          lib.cost_check_fixed),
    Claim("cost.at-budget", COST, "one uncached cost() of a filter of 500 conditions",
          at_most("at most 1,000 µs", 1000, "µs"), "a filter of 500 conditions",
          lib.cost_call_at_budget),
    Claim("residual.cpu", RESIDUAL, "process CPU of a write, residuals on ÷ off",
          between("between 0.85x and 1.1x", 0.85, 1.1), "2,000 contacts, SQLite",
          services.residual_cpu),
    Claim("rate.missing", RATE, "membership events of the sustained writes missing",
          none("0 missing"), "100,000 contacts, PostgreSQL", long.rate_missing, long=True),
    Claim("rate.updates", RATE, "updates acknowledged a second, 8 clients",
          at_least("12.3 a second", 12.3, "per s"), "100,000 contacts, PostgreSQL",
          long.rate_updates, long=True),
    Claim("rate.patch-cpu", SETTLE, "a PATCH's CPU in the service's thread ÷ hand-written",
          between("between 2.5x and 4x", 2.5, 4), "20,000 contacts, 100 audiences, PostgreSQL",
          long.patch_cpu, long=True),
    Claim("rate.patch-planning", PLANNED, "PostgreSQL's planning of a PATCH's statements",
          at_most("at most 0.35 ms", 0.35, "ms"), "20,000 contacts, 100 audiences, PostgreSQL",
          long.patch_planning, long=True),
    Claim("rate.patch-statements", CARRIED, "PostgreSQL's top-level statements a PATCH, ours",
          at_most("at most 6.3", 6.3, "statements"), "20,000 contacts, 100 audiences, PostgreSQL",
          long.patch_statements, long=True),
    Claim("rate.patch-server-cpu", PLANNED, "PostgreSQL's CPU a PATCH, ours ÷ hand-written",
          at_most("at most 2.3x", 2.3), "20,000 contacts, 100 audiences, PostgreSQL",
          long.patch_server_cpu, long=True),
    Claim("writes.update-statement-postgresql", NEARER,
          "PostgreSQL's execution of the update's `UPDATE`, ours ÷ hand-written",
          at_most("at most 3.8x", 3.8), "1,000,000 contacts, PostgreSQL",
          long.update_statement_server, long=True),
    Claim("rate.patch-calls", HOT, "function calls of a PATCH on the service's thread",
          at_most("at most 4,500 calls", 4500, "count"),
          "5,000 contacts, 100 audiences, PostgreSQL", long.patch_calls, long=True),
    Claim("rate.batched", BATCHED, "rows updated a second by upsert imports, 4 clients",
          at_least("at least 200 a second", 200, "per s"), "100,000 contacts, PostgreSQL",
          long.rate_batched, long=True),
    Claim("gaps.json-path", GAPS, "memory: data.plan equals, ours ÷ hand",
          between("1.0x-1.35x", 1.0, 1.35), GAPS_DATA, lib.gap("memory: data.plan")),
    Claim("gaps.anniversary", GAPS, "memory: compile(clock=) anniversary, ours ÷ hand",
          between("0.3x-0.7x", 0.3, 0.7), GAPS_DATA,
          lib.gap("memory: compile(clock=) anniversary")),
    Claim("gaps.count", GAPS, "memory: compile(clock=) count of shares, ours ÷ hand",
          between("0.9x-1.45x", 0.9, 1.45), GAPS_DATA,
          lib.gap("memory: compile(clock=) count")),
    Claim("gaps.sum", GAPS, "memory: compile(clock=) sum(increase), ours ÷ hand",
          between("0.9x-1.7x", 0.9, 1.7), GAPS_DATA, lib.gap("memory: compile(clock=) sum")),
    Claim("gaps.polars-sum", GAPS, "polars sum(increase) >= 40, ours ÷ hand",
          between("1.0x-1.3x", 1.0, 1.3), GAPS_DATA, lib.gap("polars: sum")),
    Claim("gaps.sqlite-hassome", GAPS, "SQLite hasSome of 3 tags, ours ÷ hand",
          between("1.2x-1.4x", 1.2, 1.4), GAPS_DATA, lib.gap("SQLite: hasSome")),
    Claim("gaps.sqlite-contains", GAPS, "SQLite contains (any case), ours ÷ hand",
          between("1.4x-1.7x", 1.4, 1.7), GAPS_DATA, lib.gap("SQLite: contains")),
    Claim("gaps.matches", GAPS, "matches(record) on F1-F5, ours ÷ lambda",
          between("1.2x-2.6x", 1.2, 2.6), GAPS_DATA, lib.gap("memory: matches()")),
    Claim("webhooks.duplicates", WEBHOOKS, "deliveries received twice, one and two workers",
          none("0 duplicates"), "2,000 events, 500 contacts, SQLite", services.webhook_duplicates),
    Claim("actions.cpu", ACTIONS, "POST /v4/actions, 50 audiences ÷ none, process CPU",
          between("between 1.3x and 1.6x", 1.3, 1.6), "10,000 contacts a list, SQLite",
          services.actions_ratio("process CPU")),
    Claim("actions.wall", ACTIONS, "POST /v4/actions, 50 audiences ÷ none, wall clock",
          at_most("2x in wall clock", 2), "10,000 contacts a list, SQLite",
          services.actions_ratio("wall clock")),
    Claim("reads.compare-hand", READS, "compare of an audience and a filter, ours ÷ hand SQL",
          at_most("at most 1.5x", 1.5), "200,000 contacts a list, SQLite", long.compare_ratio,
          long=True),
    Claim("reads.compare-previous", READS, "the same compare, the previous scan ÷ ours",
          at_least("at least 2x", 2), "200,000 contacts a list, SQLite", long.compare_speedup,
          long=True),
    Claim("reads.page-100-sqlite", READS, "contacts page of 100, 100 audiences, ours ÷ hand",
          at_most("at most 3x", 3), "200,000 contacts a list, SQLite", long.page_100_sqlite,
          long=True),
    Claim("reads.page-100-postgresql", READS, "the same page on PostgreSQL, ours ÷ hand",
          at_most("under the 2x target", 2), "200,000 contacts a list, PostgreSQL",
          long.page_100_postgresql, long=True),
    Claim("reads.update-sqlite", HOT, "one contact update, 1 audience, ours ÷ hand",
          at_most("at most 2.75x", 2.75), "200,000 contacts a list, SQLite", long.update_sqlite,
          long=True),
    Claim("reads.update-postgresql", HOT, "the same update on PostgreSQL, ours ÷ hand",
          at_most("at most 2.75x", 2.75), "200,000 contacts a list, PostgreSQL",
          long.update_postgresql, long=True),
    Claim("writes.update-cpu-sqlite", DRIVER, "one contact update's CPU, ours ÷ hand",
          at_most("the 2x target", 2), "20,000 contacts a list, SQLite", long.update_cpu_sqlite,
          long=True),
    Claim("writes.update-cpu-sqlite-million", RANGES, "one contact update's CPU, ours ÷ hand",
          at_most("the 2x target", 2), "1,000,000 contacts a list, SQLite",
          long.update_cpu_sqlite_million, long=True),
    Claim("writes.update-cpu-postgresql", DOOR, "the same on PostgreSQL, ours ÷ hand",
          at_most("at most 2.25x", 2.25), "20,000 contacts a list, PostgreSQL",
          long.update_cpu_postgresql, long=True),
    Claim("writes.driver-path-gain", DRIVER, "the update's CPU, driver path off ÷ on",
          at_least("at least 1.1x", 1.1), "20,000 contacts a list, SQLite and PostgreSQL",
          long.driver_path_gain, long=True),
    Claim("writes.settle-one-move", SETTLE,
          "the settling of contacts moving across one audience, all pairs ÷ moved pairs",
          at_least("at least 3x", 3), "64 contacts in 33 audiences, SQLite and PostgreSQL",
          long.settle_gain(33, 1), long=True),
    Claim("writes.settle-every-move", SETTLE,
          "the same, contacts entering or leaving 33 audiences beside their 33",
          at_least("at least 1.2x", 1.2), "64 contacts, SQLite and PostgreSQL",
          long.settle_gain(33, 33), long=True),
)  # fmt: skip
