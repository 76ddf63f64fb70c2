"""The claims of the service's benchmarks and the long ones each answer at their `--quick` size
a number of the right kind (the registry's own tests and the library's measures are in
tests/test_benchmarks_claims.py). No timing is asserted."""

from __future__ import annotations

import pytest

from benchmarks.claims.registry import Claim
from tests.claims_quick import answers_at_its_quick_size, quick


@pytest.mark.parametrize("claim", quick(library=False), ids=lambda c: c.id)
def test_each_measure_answers_at_its_quick_size(claim: Claim) -> None:
    answers_at_its_quick_size(claim)
