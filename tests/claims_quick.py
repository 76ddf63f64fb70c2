"""What the tests of the claims' quick runs share: which claims each file runs, and the check
that a measure answers numbers of its claim's kind. The quick runs are split by family over
three files (`tests/test_benchmarks_claims*.py`) so that a run of several workers, a file to a
worker, spreads them."""

from __future__ import annotations

import functools
import math
from typing import Any

import pytest

from benchmarks.claims import catalogue
from benchmarks.claims import library as library_measures
from benchmarks.claims.registry import Claim, Range, Unavailable

NEEDS_SERVERS = {"rate.missing", "rate.updates", "rate.batched"}  # PostgreSQL and Redis
OWN_PROCESS = {"spark.hand-ratio"}  # stops the Spark session it starts
LIBRARY = library_measures.__name__


def _module(claim: Claim) -> str:
    measure: Any = claim.measure
    while isinstance(measure, functools.partial):
        measure = measure.func
    return str(measure.__module__)


def quick(*, library: bool) -> list[Any]:
    """The claims measured in this process at their quick size: those of the library's
    benchmarks, or the others (the service's and the long ones)."""
    return [
        pytest.param(c, marks=pytest.mark.postgres) if c.id in NEEDS_SERVERS else c
        for c in catalogue.CLAIMS
        if c.id not in OWN_PROCESS and (_module(c) == LIBRARY) == library
    ]


def of_kind(values: list[float], stated: Range) -> None:
    assert values and all(math.isfinite(v) for v in values), values
    if stated.unit == "count":
        assert all(v >= 0 and v == int(v) for v in values), values
    elif stated.unit == "%":
        assert all(0 <= v <= 100 for v in values), values
    else:
        assert all(v > 0 for v in values), values


def answers_at_its_quick_size(claim: Claim) -> None:
    """The claim's measure at its quick size answers numbers of its kind (skipped when what it
    needs is unavailable)."""
    try:
        values = [float(v) for v in claim.measure(True)]
    except Unavailable as exc:
        pytest.skip(str(exc))
    of_kind(values, claim.stated)
