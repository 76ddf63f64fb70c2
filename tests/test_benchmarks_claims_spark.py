"""Spark's claim runs through the command at its `--quick` size, in a process of its own: it
stops the Spark session it starts, which in this process may be the tests' shared one. No
timing is asserted."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.claims_quick import OWN_PROCESS

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.parametrize("claim_id", sorted(OWN_PROCESS))
def test_the_command_runs_a_claim_at_its_quick_size(claim_id: str) -> None:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "src"), str(ROOT)])}
    command = [sys.executable, "-m", "benchmarks.claims", "--quick", "--only", claim_id]
    done = subprocess.run(command, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]
    row = next(line for line in done.stdout.splitlines() if line.startswith(f"| {claim_id} |"))
    assert "quick (not judged)" in row
