"""A test run must end quietly: no `nanobind: leaked ...` report from DuckDB at interpreter exit.

DuckDB's Python module is built with nanobind, which prints every DuckDB object still alive when
the interpreter finishes. The report appears when the DuckDB conformance engines and a
hypothesis property test run in one process (the SQL and polars conformance files, say); either
alone is silent. This test runs the smallest such session in a subprocess and reads its output.

Known so far: the 27 leaked `DuckDBPyType` objects are the module-level type constants of
`duckdb.sqltypes` (and the 6 "types" include `DuckDBPyConnection`, the default connection's).
In the noisy run most modules (`_pytest.*`, `audiencefilter.*`, `_duckdb`) are never destroyed
at exit (`PYTHONVERBOSE=1` shows no `# destroy` line for them), so something outside the module
dicts keeps a large part of the object graph alive past finalization. Clearing hypothesis's
per-module constants cache or disposing the test engines at exit does not change it, and
neither does the test's own content: collecting `tests/test_conformance.py` (without running
its cases) plus one in-process DuckDB table plus any `@given` test is enough.
Until the owner of that reference is found, the test is a strict xfail, so that the fix
turns it into a pass the suite then demands.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.xfail(
    strict=True,
    reason="DuckDB objects outlive the interpreter when DuckDB and hypothesis share a run",
)
def test_duckdb_and_hypothesis_in_one_run_leave_no_nanobind_leak_report() -> None:
    selection = "sql-duckdb-custom_data:string-equals-insensitive or test_exact_fold"
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "tests/test_conformance.py",
            "tests/test_columnar.py",
            "-k",
            selection,
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = run.stdout + run.stderr
    assert run.returncode == 0, output
    assert "2 passed" in output, output
    assert "nanobind: leaked" not in output, output[-2000:]
