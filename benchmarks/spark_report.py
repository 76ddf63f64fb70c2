"""The Spark benchmark's table, model and plot, from `benchmarks/results/spark.json`.

    python -m benchmarks.spark_report

Writes `benchmarks/results/spark.md` (the tables docs/performance-history.md quotes) and
`docs/performance-spark.png`, and returns the markdown.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path
from typing import Any

from benchmarks.filters import MAIN

ROOT = Path(__file__).resolve().parent
BENCHES = tuple(bench for bench in MAIN if bench.name in {"F1", "F2", "F3", "F4", "F5"})
"""The filters the Spark benchmark (`benchmarks/spark.py`) times, which this report tabulates."""
PLOT = ROOT.parent / "docs" / "performance-spark.png"
WAYS = {"spark": ("to_pyspark", "hand"), "polars": ("to_polars",), "duckdb": ("to_sql",)}


def fit(points: list[tuple[int, float]]) -> tuple[float, float]:
    """Least squares `seconds = a + b * rows`."""
    if len(points) == 1:
        return 0.0, points[0][1] / points[0][0]
    xs, ys = [p[0] for p in points], [p[1] for p in points]
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in points) / sum((x - mx) ** 2 for x in xs)
    return my - b * mx, b


def crossover(spark: tuple[float, float], other: tuple[float, float], k: int) -> float | None:
    """Rows from which Spark on k machines is faster than `other` on one; None: never."""
    (a_s, b_s), (a_x, b_x) = spark, other
    gain = b_x - b_s / k
    if gain <= 0:
        return None
    return max(0.0, (a_s - a_x) / gain)


def _total(run: dict[str, Any], way: str) -> float:
    return sum(run[bench.name][way][0] for bench in BENCHES)


def _engines_at(runs: list[dict[str, Any]], size: int) -> set[str]:
    return {run["engine"] for run in runs if run["rows"] == size}


def report(path: Path) -> str:
    data = json.loads(path.read_text())
    runs: list[dict[str, Any]] = data["runs"]
    complete = [s for s in {run["rows"] for run in runs} if _engines_at(runs, s) == set(WAYS)]
    runs = [run for run in runs if run["rows"] in complete]  # an interrupted size is left out
    sizes = sorted(complete)
    largest = max(sizes)
    at = {run["engine"]: run for run in runs if run["rows"] == largest}
    lines = [
        f"{largest:,} contacts in Parquet, {data['cores']} cores; median seconds of a count(*).",
        "",
        "| filter | to_pyspark | hand PySpark | to_pyspark / hand | polars | DuckDB "
        "| Spark / polars | Spark / DuckDB |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for bench in BENCHES:
        ours = at["spark"][bench.name]["to_pyspark"][0]
        hand = at["spark"][bench.name]["hand"][0]
        pl_s = at["polars"][bench.name]["to_polars"][0]
        duck = at["duckdb"][bench.name]["to_sql"][0]
        lines.append(
            f"| {bench.name} | {ours:.3f} | {hand:.3f} | {hand / ours:.2f}x speed | {pl_s:.3f} "
            f"| {duck:.3f} | {ours / pl_s:.1f}x | {ours / duck:.1f}x |"
        )
    lines += ["", "| engine | peak memory (MiB) | start (s) |", "|---|---|---|"]
    for engine in ("spark", "polars", "duckdb"):
        run = at[engine]
        start = f"{run['start_s']:.1f}" if "start_s" in run else "-"
        lines.append(f"| {engine} | {run['peak_rss_bytes'] / 2**20:,.0f} | {start} |")
    models = {
        engine: fit(
            [(run["rows"], _total(run, WAYS[engine][0])) for run in runs if run["engine"] == engine]
        )
        for engine in WAYS
    }
    lines += [
        "",
        "Model of F1-F5 together, `seconds = fixed + per_row * rows` (least squares over "
        + ", ".join(f"{s:,}" for s in sizes)
        + " rows):",
        "",
        "| engine | fixed (s) | per million rows (s) |",
        "|---|---|---|",
    ]
    for engine, (a, b) in models.items():
        lines.append(f"| {engine} | {a:.2f} | {b * 1e6:.3f} |")
    lines += [
        "",
        "| Spark stops losing to | 1 machine | 4 machines | 16 machines |",
        "|---|---|---|---|",
    ]
    for other in ("polars", "duckdb"):
        cells = []
        for k in (1, 4, 16):
            n = crossover(models["spark"], models[other], k)
            cells.append("never" if n is None else f"{n:,.0f} rows")
        lines.append(f"| {other} | " + " | ".join(cells) + " |")
    text = "\n".join(lines) + "\n"
    (ROOT / "results" / "spark.md").write_text(text)
    _plot(runs, sizes, models)
    return text


def _plot(runs: list[dict[str, Any]], sizes: list[int], models: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    largest = max(sizes)
    at = {run["engine"]: run for run in runs if run["rows"] == largest}
    names = [bench.name for bench in BENCHES]
    series = [
        ("to_pyspark", at["spark"], "to_pyspark"),
        ("hand PySpark", at["spark"], "hand"),
        ("polars", at["polars"], "to_polars"),
        ("DuckDB", at["duckdb"], "to_sql"),
    ]
    width = 0.2
    for i, (label, run, way) in enumerate(series):
        xs = [j + (i - 1.5) * width for j in range(len(names))]
        left.bar(xs, [run[name][way][0] for name in names], width, label=label)
    left.set_xticks(range(len(names)), names)
    left.set_ylabel("seconds (median)")
    left.set_title(f"F1-F5 over {largest:,} contacts (Parquet)")
    left.legend()
    for engine, label in (("spark", "Spark"), ("polars", "polars"), ("duckdb", "DuckDB")):
        points = sorted(
            (run["rows"], _total(run, WAYS[engine][0])) for run in runs if run["engine"] == engine
        )
        right.plot([p[0] for p in points], [p[1] for p in points], "o", label=f"{label} measured")
        a, b = models[engine]
        xs = [0, largest * 1.1]
        right.plot(xs, [a + b * x for x in xs], "-", alpha=0.6, label=f"{label} model")
    right.set_xlabel("contacts")
    right.set_ylabel("seconds, F1-F5 together")
    right.set_title("fixed + per-row cost")
    right.legend(fontsize=8)
    figure.tight_layout()
    figure.savefig(PLOT, dpi=110)


if __name__ == "__main__":
    print(report(ROOT / "results" / "spark.json"))
