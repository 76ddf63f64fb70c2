"""A test run must end quietly: no `nanobind: leaked ...` report from DuckDB at interpreter exit.

DuckDB's Python module is built with nanobind, which prints every DuckDB object still alive when
the interpreter finishes. The report appears when the DuckDB conformance engines and a
hypothesis property test run in one process (the SQL and polars conformance files, say); either
alone is silent. This test runs the smallest such session in a subprocess and reads its output.

The cause: hypothesis adds a timer to `gc.callbacks` on its first `@given` test and never
removes it. At exit the module globals it reads are wiped before the interpreter's last
collections; the callback still runs in them, and much of the object graph (`_pytest.*`,
`audiencefilter.*`, `_duckdb`: `PYTHONVERBOSE=1` shows no `# destroy` line for them) is never
freed; DuckDB's nanobind build then lists its type constants (`duckdb.sqltypes`) and connection
type as leaked. `tests/conftest.py` removes the callback when the run ends
(`pytest_unconfigure`); without that hook this test fails.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


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
