"""Values shapes users bring: their cells for the support matrix (tests/shapes/__init__.py).

Python values a record holds (`Decimal`), and the number column types that hold them
(exact decimals, doubles) on each engine. `tests/test_shape_values.py` runs every cell: each
engine's answer equals the oracle's on the values the column gives back, for every operator
of a number field (`testing.space.operations`) and every edge literal.
"""

from __future__ import annotations

from tests.shapes import Cell

_DECIMAL = "compares as the literal is written: `0.3` is 3/10 (`values.decimal_literal`)"
_DOUBLE = "an integer no double holds equals none, and orders between its two doubles"
_SQLITE = "SQLite keeps a decimal's fraction as a double: exact to 15 significant digits"

CELLS: list[Cell] = [
    Cell("values", "memory", "Decimal", "number", "exact", _DECIMAL),
    Cell("values", "PostgreSQL", "numeric", "number", "exact", _DECIMAL),
    Cell("values", "DuckDB", "DECIMAL(38,10)", "number", "exact", _DECIMAL),
    Cell("values", "Django", "DecimalField (PostgreSQL)", "number", "exact", _DECIMAL),
    Cell("values", "polars", "Decimal(38, 17)", "number", "exact", _DECIMAL),
    Cell("values", "pandas", "object (Decimal)", "number", "exact", _DECIMAL),
]
