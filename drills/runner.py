"""`python -m drills [--fast] [--only NAME ...] [--output FILE]`: run the drills, print the table.

Drills run one after another (they measure throughput, so they must not share the two cores),
each in a scratch folder of its own. A drill that raises is a failed row carrying the exception,
and the run goes on to the next one. The summary is a Markdown table, printed at the end and
written to `drills/last-run.md` (ignored by git) so a long run's result outlives the terminal.
The exit status is 1 when any drill failed.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import sys
import tempfile
import time
import traceback
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from . import (
    abuse,
    crash,
    floods,
    fuzzing,
    heavy,
    isolation,
    limits,
    load,
    mixed,
    outage,
    webhooks,
)
from .common import FAST, FULL, Context, Drill, Missing, Outcome, Row, servers_required

DRILLS: dict[str, tuple[Drill, str]] = {
    "crash-sqlite": (crash.crash_sqlite, "SIGKILL during a creation burst on SQLite"),
    "crash-postgres": (crash.crash_postgres, "SIGKILL during a creation burst on PostgreSQL"),
    "pg-outage": (outage.pg_outage, "PostgreSQL stopped immediately under load"),
    "shared-limits": (limits.shared_limits, "two workers share Redis rate-limit counters"),
    "redis-down": (limits.redis_down, "Redis killed under load"),
    "load-contacts": (load.load_contacts, "wrk on a 100-row contacts page"),
    "load-audience": (load.load_audience, "wrk on a smart audience"),
    "mixed": (mixed.mixed, "concurrent reads and writes against a model"),
    "mixed-postgres": (mixed.mixed_postgres, "the same on PostgreSQL (PATCHes share turns)"),
    "fuzz": (fuzzing.fuzz, "both filter parsers, coverage-guided"),
    "schemathesis": (fuzzing.schemathesis, "the OpenAPI document against a live service"),
    "webhook-crash": (webhooks.webhook_crash, "SIGKILL during updates: every event delivered"),
    "webhook-outage": (webhooks.webhook_outage, "a receiver answering 500 for 20 s"),
    "webhook-two-workers": (webhooks.webhook_two_workers, "two worker processes on PostgreSQL"),
    "abuse": (abuse.abuse, "large filters, memory and a public key's budget, as an attacker"),
    "isolation": (isolation.isolation, "one account's heavy audience and silent receiver"),
    "isolation-builds-sqlite": (
        isolation.isolation_builds_sqlite,
        "another account's small build and clock exit during one's builds, SQLite",
    ),
    "isolation-builds-postgres": (
        isolation.isolation_builds_postgres,
        "the same on PostgreSQL",
    ),
    "floods-sqlite": (floods.floods_sqlite, "another account during four floods, SQLite"),
    "floods-postgres": (floods.floods_postgres, "the same on PostgreSQL"),
    "heavy-requests": (
        heavy.heavy_requests,
        "another account's reads beside one's CSV dry run, compares, estimates and previews",
    ),
}
# `make test` runs the schemathesis test already; CI runs it there, not twice.
NOT_FAST = {
    "schemathesis": "`make test` runs it",
    "webhook-two-workers": "`make test` runs two workers on PostgreSQL (test_webhooks.py)",
}
DEFAULT_OUTPUT = Path(__file__).resolve().parent / "last-run.md"


def render(rows: Sequence[Row], title: str = "") -> str:
    """The summary as a Markdown table; pipes inside figures are escaped."""
    lines = [title, ""] if title else []
    lines += ["| Drill | Result | Seconds | Figures |", "|---|---|---:|---|"]
    for result in rows:
        figures = result.figures.replace("|", "\\|").replace("\n", " ")
        outcome = {"pass": "pass", "fail": "**FAIL**", "skip": "skipped"}[result.outcome]
        lines.append(f"| {result.name} | {outcome} | {result.seconds:.0f} | {figures} |")
    passed = sum(result.outcome == "pass" for result in rows)
    failed = sum(result.outcome == "fail" for result in rows)
    skipped = len(rows) - passed - failed
    lines += ["", f"{passed} passed, {failed} failed, {skipped} skipped."]
    return "\n".join(lines) + "\n"


def run_one(name: str, drill: Drill, ctx: Context, required: bool) -> Row:
    started = time.monotonic()
    try:
        result = drill(ctx)
    except Missing as exc:
        outcome: Outcome = "fail" if required else "skip"
        note = " (required in CI)" if required else ""
        result = Row(name, outcome, f"{exc}{note}")
    except Exception as exc:  # a broken drill is a failed row, and the run goes on
        traceback.print_exc()
        result = Row(name, "fail", f"{type(exc).__name__}: {str(exc).splitlines()[0][:300]}")
    return Row(name, result.outcome, result.figures, time.monotonic() - started)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m drills", description=__doc__)
    parser.add_argument("--fast", action="store_true", help="CI sizes: a few minutes in all")
    parser.add_argument("--only", nargs="+", choices=sorted(DRILLS), metavar="NAME")
    parser.add_argument("--output", type=Path, default=DEFAULT_OUTPUT)
    parser.add_argument("--keep", action="store_true", help="keep the scratch folder and logs")
    parser.add_argument("--list", action="store_true", help="name and describe the drills")
    return parser.parse_args(argv)


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    if args.list:
        for name, (_, what) in DRILLS.items():
            print(f"{name:<16} {what}")
        return 0
    if args.only:
        names = [name for name in DRILLS if name in args.only]
    else:
        names = [name for name in DRILLS if not (args.fast and name in NOT_FAST)]
    required = servers_required()
    workdir = Path(tempfile.mkdtemp(prefix="audiencefilter-drills-"))
    rows: list[Row] = []
    try:
        for name in names:
            drill, what = DRILLS[name]
            print(f"== {name}: {what}", flush=True)
            drill_dir = workdir / name
            drill_dir.mkdir()
            ctx = Context(sizes=FAST if args.fast else FULL, workdir=drill_dir, fast=args.fast)
            result = run_one(name, drill, ctx, required)
            rows.append(result)
            print(f"   {result.outcome} in {result.seconds:.0f} s: {result.figures}", flush=True)
    finally:
        if args.keep:
            print(f"scratch folder kept: {workdir}")
        else:
            shutil.rmtree(workdir, ignore_errors=True)
    mode = "--fast" if args.fast else "full"
    when = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    title = f"Drills ({mode}), {when}, Python {platform.python_version()}, {os.cpu_count()} cores"
    left_out = [f"{name} ({why})" for name, why in NOT_FAST.items() if name not in names]
    if args.fast and left_out and not args.only:
        title += f"; not in --fast: {', '.join(left_out)}"
    table = render(rows, title)
    print()
    print(table)
    args.output.write_text(table)
    return 1 if any(result.outcome == "fail" for result in rows) else 0


if __name__ == "__main__":
    sys.exit(main())
