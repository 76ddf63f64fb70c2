"""The reports of `audiencefilter bench`: the table on stdout, the JSON results, the PNG plot.

Every timed figure is printed with a decimal point (`1.23M/s`, `1.00×`, `12.3 MB`, `0.41 s`)
and every count without one, so a reader (or a test of the documentation) can tell measured
values from the answers, which must not change from run to run.
"""

from __future__ import annotations

import json
import os
import platform
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import audiencefilter as af

from .bench_results import Bench, EngineRun, Timing


def rate(bench: Bench, timing: Timing) -> float:
    """Contacts per second of the median run."""
    return bench.rows / timing.median if timing.median > 0 else float("inf")


def fastest(bench: Bench) -> dict[str, float]:
    """The best rate of each filter over the engines that ran."""
    best: dict[str, float] = {}
    for run in bench.runs:
        for timing in run.timings:
            best[timing.label] = max(best.get(timing.label, 0.0), rate(bench, timing))
    return best


def render_table(bench: Bench) -> str:
    """The filters, then one line per engine and filter, then each engine's load time."""
    lines = [f"{f.label}  {' '.join(f.text.split())}" for f in bench.filters]
    average = ", ".join(f"{v:.2f}" for v in bench.load_average)
    lines += [
        "",
        f"{bench.rows:,} contact{'s' if bench.rows != 1 else ''} from {bench.contacts.source}; "
        f"median of {bench.repeat} "
        f"run{'s' if bench.repeat != 1 else ''}; load average {average} on {os.cpu_count()} CPUs",
        "",
    ]
    rows: list[tuple[str, ...]] = [("engine", "filter", "rows/s", "vs fastest", "peak memory")]
    rows[0] += ("matches",)
    best = fastest(bench)
    for run in bench.runs:
        for timing in run.timings:
            speed = rate(bench, timing)
            ratio = best[timing.label] / speed if speed else float("inf")
            rows.append(_row(run, timing, speed, ratio))
    lines += _aligned(rows, right=(2, 3, 4, 5))
    loads: list[tuple[str, ...]] = [("engine", "load")]
    loads += [(run.name, f"{run.load_seconds:.2f} s") for run in bench.runs if not run.skipped]
    return "\n".join([*lines, "", *_aligned(loads, right=(1,)), ""])


def _row(run: EngineRun, timing: Timing, speed: float, ratio: float) -> tuple[str, ...]:
    memory = f"{run.peak_bytes / 1e6:.1f} MB"
    matches = f"{len(timing.positions):,}"
    return (run.name, timing.label, f"{speed / 1e6:.2f}M/s", f"{ratio:.2f}×", memory, matches)


def _aligned(rows: Sequence[tuple[str, ...]], right: tuple[int, ...]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    return [
        "  ".join(
            cell.rjust(widths[i]) if i in right else cell.ljust(widths[i])
            for i, cell in enumerate(row)
        ).rstrip()
        for row in rows
    ]


def results(bench: Bench) -> dict[str, Any]:
    """Everything measured, as a JSON document (documented in docs/cli.md)."""
    best = fastest(bench)
    return {
        "machine": _machine(bench),
        "contacts": {
            "source": bench.contacts.source,
            "rows": bench.rows,
            "bad_rows": len(bench.contacts.bad_rows),
        },
        "now": bench.now.isoformat(),
        "repeat": bench.repeat,
        "filters": [
            {"label": f.label, "text": f.text, "json": f.flt.to_json()} for f in bench.filters
        ],
        "engines": [_engine(run) for run in bench.runs],
        "results": [_result(bench, timing, best) for run in bench.runs for timing in run.timings],
        "differences": [
            {"engine": d.engine, "reference": d.reference, "filter": d.label}
            | {"extra": _labels(bench, d.extra), "missing": _labels(bench, d.missing)}
            for d in bench.differences()
        ],
    }


def _machine(bench: Bench) -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "load_average": list(bench.load_average),
        "python": platform.python_version(),
        "platform": platform.platform(),
        "audiencefilter": af.__version__,
    }


def _engine(run: EngineRun) -> dict[str, Any]:
    return {
        "name": run.name,
        "load_seconds": run.load_seconds,
        "peak_bytes": run.peak_bytes,
        "skipped": run.skipped,
    }


def _result(bench: Bench, timing: Timing, best: dict[str, float]) -> dict[str, Any]:
    speed = rate(bench, timing)
    return {
        "engine": timing.engine,
        "filter": timing.label,
        "seconds": timing.seconds,
        "median_seconds": timing.median,
        "rows_per_second": speed,
        "vs_fastest": best[timing.label] / speed if speed else None,
        "matches": len(timing.positions),
    }


def _labels(bench: Bench, positions: list[int]) -> list[str]:
    return [bench.contacts.label(p) for p in positions]


def write_json(bench: Bench, path: str) -> None:
    Path(path).write_text(json.dumps(results(bench), indent=2, ensure_ascii=False) + "\n")


PLOT_TEXT = 60
"""The longest filter text a plot shows in full beside its label."""


def plot_labels(bench: Bench) -> list[str]:
    """Each filter as the plot names it: its label and its text (`F1: points >= 100`), so the
    picture reads without the command line; a long text is cut with an ellipsis."""
    labels = []
    for item in bench.filters:
        text = " ".join(item.flt.to_text().split())
        if len(text) > PLOT_TEXT:
            text = text[: PLOT_TEXT - 1] + "…"
        labels.append(f"{item.label}: {text}")
    return labels


def write_plot(bench: Bench, path: str) -> None:
    """Rows per second of each engine on each filter, grouped by filter, on a log scale."""
    import matplotlib

    matplotlib.use("Agg")  # no display: the file is the output
    import matplotlib.pyplot as plt

    engines = [run for run in bench.runs if run.timings]
    labels = [f.label for f in bench.filters]
    height = 0.8 / max(1, len(engines))
    figure, axes = plt.subplots(figsize=(11, 1.2 + 0.5 * len(labels) * max(1, len(engines)) / 2))
    for index, run in enumerate(engines):
        speeds = {t.label: rate(bench, t) for t in run.timings}
        positions = [n + index * height for n in range(len(labels))]
        axes.barh(positions, [speeds.get(label, 0) for label in labels], height, label=run.name)
    ticks = [n + height * (len(engines) - 1) / 2 for n in range(len(labels))]
    axes.set_yticks(ticks, plot_labels(bench), fontsize="small")
    axes.invert_yaxis()
    axes.set_xscale("log")
    axes.set_xlabel("contacts per second (median run, log scale; higher is better)")
    average = ", ".join(f"{v:.2f}" for v in bench.load_average)
    axes.set_title(f"{bench.rows:,} contacts, {os.cpu_count()} CPUs, load average {average}")
    axes.legend(loc="lower right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
