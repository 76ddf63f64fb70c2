"""`python -m benchmarks.gates_floor`: what bounds F1 of the speed gates, step by step.

F1 (`isVerified is true`) is the one gate the compiled predicate keeps missing: its lambda,
`r.get("isVerified") is True`, is a call and one identity test, and the predicate must do more
with the value it reads. A value that is neither `True`, `False` nor null (`"yes"`, `1`, a
NumPy boolean) must not be answered quietly: the predicate raises `RecordError` for a wrong
type and reads a NumPy or pandas value as the plain value it stands for (docs/errors.md). So it
keeps the value, and tests a value that is not `True` against `False` and null before it can
answer FALSE.

Each step below adds one of those costs to the lambda and is timed against it over the gates'
generated contacts (the same data as `benchmarks.gates`), in alternating rounds, this thread's
CPU time:

- **lambda**: the hand-written lambda, the gate's yardstick;
- **+ value kept**: `(v := r.get(k)) is True`, the value held for the tests that follow;
- **+ false, null, type**: the tests the predicate must make on a value that is not `True`,
  the last (a helper that raises for a wrong type) reached only by a value of another type;
- **compiled predicate**: `af.compile` of F1, which is that expression in a `try`;
- **the same by subscript**: the tests above with `r[k]` for `r.get(k)`, a cheaper read the
  predicate does not use: it raises `KeyError` for a record that leaves the field out (JSON
  records often do), and it inserts the field into a `defaultdict` record, changing the
  caller's data.

Every step must count the same records as the lambda (plain `bool` values and nulls), or the
run fails. The ratios are the lambda's time over each step's (1.0: as fast).
"""

from __future__ import annotations

import argparse
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import audiencefilter as af

from .data import generate
from .filters import MAIN
from .timing import median, per_call

FIELD = "isVerified"


def _wrong_type(value: object) -> bool:
    """What the predicate's type check does for a value that is neither a bool nor null."""
    raise TypeError(f"{type(value).__name__} for a boolean field")


def lambda_(r: Any) -> bool:
    return r.get("isVerified") is True


def value_kept(r: Any) -> bool:
    return (v := r.get("isVerified")) is True  # noqa: F841 - the store is the step timed


def tested(r: Any) -> bool:
    return (v := r.get("isVerified")) is True or (
        v is not False and v is not None and _wrong_type(v)
    )


def by_subscript(r: Any) -> bool:
    return (v := r["isVerified"]) is True or (v is not False and v is not None and _wrong_type(v))


@dataclass(frozen=True)
class Step:
    """One step: its name, its seconds over the records, and the lambda's ÷ its."""

    name: str
    seconds: float
    ratio: float


def steps() -> list[tuple[str, Callable[[Any], bool]]]:
    f1 = next(bench for bench in MAIN if bench.name == "F1")
    return [
        ("lambda", lambda_),
        ("+ value kept", value_kept),
        ("+ false, null, type", tested),
        ("compiled predicate", af.compile(af.parse(f1.json))),
        ("the same by subscript (not used)", by_subscript),
    ]


def measure(size: int, *, rounds: int = 7, sample_seconds: float = 0.05) -> list[Step]:
    """Each step over `size` generated contacts, the median of `rounds` alternating rounds."""
    rows = generate(size).rows
    named = steps()
    expected = sum(1 for row in rows if lambda_(row))
    for name, predicate in named:
        found = sum(1 for row in rows if predicate(row))
        if found != expected:
            raise AssertionError(f"{name} counted {found} records, the lambda {expected}")

    def throughput(predicate: Callable[[Any], bool]) -> float:
        def run() -> int:
            return sum(1 for row in rows if predicate(row))

        return per_call(run, samples=3, sample_seconds=sample_seconds)

    times: dict[str, list[float]] = {name: [] for name, _ in named}
    for _ in range(rounds):
        for name, predicate in named:
            times[name].append(throughput(predicate))
    base = median(times["lambda"])
    return [Step(name, median(times[name]), base / median(times[name])) for name, _ in named]


def markdown(measured: Sequence[Step]) -> str:
    lines = ["| step | time | lambda ÷ step |", "|---|---:|---:|"]
    lines += [f"| {s.name} | {s.seconds * 1e3:.2f} ms | {s.ratio:.2f}x |" for s in measured]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--size", type=int, default=30_000, help="generated contacts")
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args(argv)
    print(markdown(measure(args.size, rounds=args.rounds)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
