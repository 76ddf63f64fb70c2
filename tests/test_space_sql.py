"""The space against the oracle on the databases in process: SQL text, SQL with parameters and
SQLAlchemy on SQLite and DuckDB, `to_django` on Django's SQLite back-end, SQL text and
parameters on ClickHouse (chDB).

One family of the space test's surfaces (tests/test_space.py says what is asked; tests/space_run.py
holds what every family's file shares), a file of its own so that a worker runs it alone.
"""

from __future__ import annotations

from tests.space_run import family_tests

(
    test_the_sweep_agrees_with_the_oracle,
    test_generated_batches_agree_with_the_oracle,
    test_operands_holding_nul_agree_with_the_oracle,
) = family_tests("sql")
