"""The space against the oracle on polars on both frames (`data` as JSON text or as the objects)
and pandas on three (NumPy dtypes with both kinds of `data`, pyarrow dtypes).

One family of the space test's surfaces (tests/test_space.py says what is asked; tests/space_run.py
holds what every family's file shares), a file of its own so that a worker runs it alone.
"""

from __future__ import annotations

import pytest

from tests.space_run import FAMILIES, generated, operands_holding_nul, surface_params, sweep
from tests.space_surfaces import Surface

SURFACES = surface_params(FAMILIES["frames"])


@pytest.mark.parametrize("surface", SURFACES)
def test_the_sweep_agrees_with_the_oracle(surface: Surface, request: pytest.FixtureRequest) -> None:
    """Every condition of the space (each slot, each operation legal there) on this surface."""
    sweep(surface, request)


@pytest.mark.parametrize("surface", SURFACES)
def test_generated_batches_agree_with_the_oracle(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    """Generated where clauses over generated records, batch after batch, on this surface."""
    generated(surface, request)


@pytest.mark.parametrize("surface", [p for p in SURFACES if not p.id.startswith("cli-")])
def test_operands_holding_nul_agree_with_the_oracle(
    surface: Surface, request: pytest.FixtureRequest
) -> None:
    """A list literal holding NUL made PostgreSQL's SQL text raise a bare `ValueError` in
    every placement (a JSON array at a path, a list declared inside JSON, inside a related
    row); the family is every operand holding NUL, on every surface."""
    operands_holding_nul(surface, request)
