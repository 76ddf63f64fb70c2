"""Spark against polars and DuckDB on one Parquet dataset of generated contacts (not run in CI).

    python -m benchmarks.spark --rows 10000000 --sizes 1000000,3000000,10000000

The contacts are `benchmarks.data.generate`'s, written as Parquet parts of a million rows each
(seeds differ per part; ids are global), once, under `benchmarks/results/spark-data/`. Each
size reads the first parts of the same files, so every engine scans identical bytes.

Per size and engine, one subprocess runs F1-F5 (`benchmarks.filters.MAIN`) as `count(*)` of
the matching rows: one warm-up run, then the median of `--repeat` runs. The subprocess samples
the resident memory of itself and its children (Spark's JVM) every 50 ms and reports the peak.
Engines: `to_pyspark()` and a hand-written PySpark expression in the same Spark session
(`local[N]`, N the machine's cores), polars' lazy Parquet scan with `to_polars()`, and DuckDB
with `to_sql("duckdb")`, each on all cores. Every engine must count the same rows.

The fixed-plus-per-row model: per engine, the total time of F1-F5 at each size is fitted by
least squares to `a + b * rows`; Spark stops losing to an engine at `rows = (a_s - a_x) /
(b_x - b_s / k)` with k machines sharing Spark's per-row work. The results land in
`benchmarks/results/spark.json`, the table in `benchmarks/results/spark.md` and the plot in
`docs/performance-spark.png`.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import audiencefilter as af
from benchmarks.data import FIELDS, generate
from benchmarks.filters import SINCE
from benchmarks.spark_report import BENCHES, ROOT, report

DATA = ROOT / "results" / "spark-data"
PART = 1_000_000
ENGINES = ("spark", "polars", "duckdb")


# ---- data -------------------------------------------------------------------------------------


def parts(rows: int) -> list[Path]:
    """The Parquet parts holding the first `rows` contacts, written when missing."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    DATA.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range((rows + PART - 1) // PART):
        size = min(PART, rows - index * PART)
        path = DATA / f"part-{index:03d}-{size}.parquet"
        paths.append(path)
        if path.exists():
            continue
        contacts = generate(size, seed=20250101 + index)
        columns: dict[str, Any] = {"id": list(range(index * PART, index * PART + size))}
        columns.update({name: contacts.columns[name] for name in FIELDS})
        types = {"id": pa.int64(), "points": pa.int64(), "referrals": pa.int64()}
        types["createdAt"] = pa.timestamp("us", tz="UTC")
        for name in ("isVerified", "unsubscribed"):
            types[name] = pa.bool_()
        schema = pa.schema([(name, types.get(name, pa.string())) for name in columns])
        pq.write_table(pa.table(columns, schema=schema), path)
        print(f"wrote {path.name}", file=sys.stderr)
    return paths


# ---- memory -----------------------------------------------------------------------------------


class PeakMemory:
    """The peak resident memory of this process and its descendants, sampled every 50 ms."""

    def __init__(self) -> None:
        self.peak = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self) -> None:
        while not self._stop.is_set():
            self.peak = max(self.peak, _tree_rss(os.getpid()))
            time.sleep(0.05)

    def stop(self) -> int:
        self._stop.set()
        self._thread.join()
        return self.peak


def _tree_rss(root: int) -> int:
    parents: dict[int, int] = {}
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
            except OSError:
                continue
            parents[int(entry)] = int(stat.rsplit(")", 1)[1].split()[1])
    tree, frontier = {root}, [root]
    while frontier:
        pid = frontier.pop()
        for child, parent in parents.items():
            if parent == pid and child not in tree:
                tree.add(child)
                frontier.append(child)
    total = 0
    for pid in tree:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            continue
    return total


# ---- engines (each runs in its own subprocess) ------------------------------------------------


def _timed(count: Callable[[], int], repeat: int) -> tuple[float, int]:
    found = count()  # warm-up: caches, JIT, file metadata
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        again = count()
        times.append(time.perf_counter() - start)
        assert again == found
    return statistics.median(times), found


def _hand_written(name: str) -> Any:
    """F1-F5 as a PySpark user would write them by hand."""
    from pyspark.sql import functions as F

    col = F.col
    return {
        "F1": col("isVerified"),
        "F2": F.lower(col("email")).contains("gmail"),
        "F3": (col("points") >= 100) & (col("points") < 1000),
        "F4": col("country").isin(["FR", "DE", "ES"]) | col("city").startswith("San"),
        "F5": ~col("unsubscribed")
        & (col("createdAt") >= F.lit(SINCE.isoformat()).cast("timestamp"))
        & ((col("points") > 500) | (col("referrals") >= 3) | col("company").isNotNull()),
    }[name]


def run_engine(
    engine: str, files: list[str], repeat: int, spark_conf: dict[str, str] | None = None
) -> dict[str, Any]:
    """Each bench's count by `engine` over the Parquet `files`, timed `repeat` times after a
    warm-up; `spark_conf` adds to the Spark session's settings."""
    memory = PeakMemory()
    started = time.perf_counter()
    results: dict[str, Any] = {}
    cores = os.cpu_count() or 2
    if engine == "spark":
        from audiencefilter.backends.frames.spark import local_session

        conf = {"spark.driver.memory": "6g", **(spark_conf or {})}
        session = local_session(cores, "audiencefilter-bench", conf)
        session.sparkContext.setLogLevel("ERROR")
        results["start_s"] = time.perf_counter() - started
        frame = session.read.parquet(*files)
        dtypes = {f.name: f.dataType for f in frame.schema.fields}
        for bench in BENCHES:
            flt = af.parse(bench.where)
            ours = flt.to_pyspark(dtypes=dtypes)
            hand = _hand_written(bench.name)
            results[bench.name] = {
                "to_pyspark": _timed(lambda c=ours: frame.filter(c).count(), repeat),
                "hand": _timed(lambda c=hand: frame.filter(c).count(), repeat),
            }
        session.stop()
    elif engine == "polars":
        import polars as pl

        from audiencefilter.backends.frames.polars import to_polars

        scan = pl.scan_parquet(files)
        dtypes = scan.collect_schema()
        for bench in BENCHES:
            expr = to_polars(af.parse(bench.where), dtypes)
            query = scan.filter(expr).select(pl.len())
            results[bench.name] = {"to_polars": _timed(lambda q=query: q.collect().item(), repeat)}
    else:
        import duckdb

        connection = duckdb.connect()
        connection.execute(f"SET threads = {cores}")
        source = "read_parquet([" + ", ".join(f"'{f}'" for f in files) + "])"
        for bench in BENCHES:
            sql = af.parse(bench.where).to_sql("duckdb")
            query = f"SELECT count(*) FROM {source} WHERE {sql}"

            def count(q: str = query) -> int:
                row = connection.execute(q).fetchone()
                assert row is not None
                return int(row[0])

            results[bench.name] = {"to_sql": _timed(count, repeat)}
    results["peak_rss_bytes"] = memory.stop()
    results["wall_s"] = time.perf_counter() - started
    return results


# ---- driver -----------------------------------------------------------------------------------


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=10_000_000)
    parser.add_argument("--sizes", default="")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--engine", choices=ENGINES)
    parser.add_argument("--files", nargs="*")
    args = parser.parse_args()
    if args.engine:  # a subprocess: one engine, one size
        print(json.dumps(run_engine(args.engine, args.files, args.repeat)))
        return
    sizes = [int(s) for s in args.sizes.split(",") if s] or [args.rows]
    files = [str(p) for p in parts(max(sizes))]
    runs: list[dict[str, Any]] = []
    out = ROOT / "results" / "spark.json"
    for size in sizes:
        chosen = files[: (size + PART - 1) // PART]
        for engine in ENGINES:
            command = [sys.executable, "-m", "benchmarks.spark", "--engine", engine]
            command += ["--repeat", str(args.repeat), "--files", *chosen]
            output = subprocess.run(command, check=True, capture_output=True, text=True).stdout
            result = json.loads(output.strip().splitlines()[-1])
            runs.append({"rows": size, "engine": engine, **result})
            print(f"{size:>10} {engine:7} done in {result['wall_s']:.1f}s", file=sys.stderr)
            _check_counts(runs, size)
            # Written after every run, so that an interrupted run keeps what it measured.
            out.write_text(json.dumps({"cores": os.cpu_count(), "runs": runs}, indent=1))
    print(report(out))


def _check_counts(runs: list[dict[str, Any]], size: int) -> None:
    for bench in BENCHES:
        counts = {
            f"{run['engine']}/{way}": result[1]
            for run in runs
            if run["rows"] == size
            for way, result in run[bench.name].items()
        }
        assert len(set(counts.values())) == 1, f"{bench.name} at {size}: counts differ {counts}"


if __name__ == "__main__":
    main()
