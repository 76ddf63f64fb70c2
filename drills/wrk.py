"""Running wrk against the service and reading its report.

wrk prints a human report, not JSON; `parse` reads the lines the drills judge by: the request
count and duration, socket errors (absent when all are zero), "Non-2xx or 3xx responses"
(absent when zero), requests per second and the latency distribution of `--latency`. Latencies
come with a unit (`us`, `ms`, `s`, `m`, `h`) and are turned into milliseconds.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from .common import need_binary

UNITS_MS = {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60_000.0, "h": 3_600_000.0}


class WrkOutputError(ValueError):
    """The text is not a wrk report with `--latency`."""


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    errors: int
    non_2xx: int
    requests_per_second: float
    latency_ms: dict[int, float]

    @property
    def clean(self) -> bool:
        return self.requests > 0 and self.errors == 0 and self.non_2xx == 0

    def figures(self) -> str:
        p50, p99 = self.latency_ms.get(50), self.latency_ms.get(99)
        return (
            f"{self.requests:,} requests in {self.seconds:.1f} s, "
            f"{self.requests_per_second:,.0f} req/s, p50 {p50:.1f} ms, p99 {p99:.1f} ms, "
            f"{self.errors} errors, {self.non_2xx} non-2xx"
        )


def _ms(number: str, unit: str) -> float:
    return float(number) * UNITS_MS[unit]


def parse(output: str) -> WrkResult:
    total = re.search(r"^\s*(\d+) requests in ([\d.]+)(us|ms|s|m|h),", output, re.MULTILINE)
    per_second = re.search(r"^Requests/sec:\s*([\d.]+)", output, re.MULTILINE)
    if total is None or per_second is None:
        raise WrkOutputError(f"not a wrk report:\n{output[-2000:]}")
    errors = 0
    sockets = re.search(
        r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output
    )
    if sockets:
        errors = sum(int(value) for value in sockets.groups())
    non_2xx = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", output)
    distribution = {
        int(match.group(1)): _ms(match.group(2), match.group(3))
        for match in re.finditer(r"^\s*(\d+)%\s+([\d.]+)(us|ms|s|m|h)\s*$", output, re.MULTILINE)
    }
    if 99 not in distribution:
        raise WrkOutputError("no latency distribution: run wrk with --latency")
    return WrkResult(
        requests=int(total.group(1)),
        seconds=_ms(total.group(2), total.group(3)) / 1000.0,
        errors=errors,
        non_2xx=int(non_2xx.group(1)) if non_2xx else 0,
        requests_per_second=float(per_second.group(1)),
        latency_ms=distribution,
    )


def run(
    url: str, headers: dict[str, str], seconds: int, threads: int = 2, connections: int = 20
) -> tuple[WrkResult, str]:
    """One wrk run; the timeout is generous so that slowness shows in p99, not as errors."""
    binary = need_binary("wrk", "wrk")
    command = [binary, f"-t{threads}", f"-c{connections}", f"-d{seconds}s", "--latency"]
    command += ["--timeout", "10s"]
    for name, value in headers.items():
        command += ["-H", f"{name}: {value}"]
    done = subprocess.run(
        [*command, url], capture_output=True, text=True, timeout=seconds + 60, check=False
    )
    output = done.stdout + done.stderr
    return parse(output), output
