"""Peak memory and speed of `audiencefilter eval` over a JSON Lines file of contacts.

The CLI should stream: its memory must not grow with the file. The file is written to a
temporary folder, and the CLI runs in a child of a small wrapper process, so the wrapper's
`RUSAGE_CHILDREN` maximum resident set size is the CLI's own peak (the benchmark's million
dicts are not counted).
"""

from __future__ import annotations

import json
import math
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .data import Contacts

_WRAPPER = """
import json, resource, subprocess, sys, time
start = time.perf_counter()
done = subprocess.run(sys.argv[1:], capture_output=True, text=True)
seconds = time.perf_counter() - start
peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
tail = (done.stdout.strip() or done.stderr.strip())[-300:]
print(json.dumps({"code": done.returncode, "seconds": seconds, "peak_kib": peak_kib, "tail": tail}))
"""


@dataclass
class CliResult:
    contacts: int
    file_mib: float
    seconds: float
    peak_mib: float
    output: str
    ok: bool


def available() -> bool:
    try:
        import audiencefilter.cli  # noqa: F401
    except ImportError:
        return False
    return True


def measure(contacts: Contacts, where: str) -> CliResult:
    """Run `audiencefilter eval WHERE FILE --count` once and report its peak RSS."""
    with tempfile.TemporaryDirectory(prefix="af-bench-cli-") as folder:
        path = Path(folder) / "contacts.jsonl"
        contacts.write_jsonl(path)
        size = path.stat().st_size / 2**20
        command = [sys.executable, "-m", "audiencefilter.cli", "eval", where, str(path)]
        command += ["--count", "--progress", "never"]
        done = subprocess.run(
            [sys.executable, "-c", _WRAPPER, *command], capture_output=True, text=True, check=False
        )
    try:
        report = json.loads(done.stdout)
    except ValueError:
        return CliResult(len(contacts), size, math.nan, math.nan, done.stderr[-300:], False)
    return CliResult(
        contacts=len(contacts),
        file_mib=size,
        seconds=report["seconds"],
        peak_mib=report["peak_kib"] / 1024,
        output=report["tail"],
        ok=report["code"] == 0,
    )
