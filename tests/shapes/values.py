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

NUMBER_CELLS: list[Cell] = [
    Cell("values", "memory", "Decimal", "number", "exact", _DECIMAL),
    Cell("values", "PostgreSQL", "numeric", "number", "exact", _DECIMAL),
    Cell("values", "DuckDB", "DECIMAL(38,10)", "number", "exact", _DECIMAL),
    Cell("values", "Django", "DecimalField (PostgreSQL)", "number", "exact", _DECIMAL),
    Cell("values", "polars", "Decimal(38, 17)", "number", "exact", _DECIMAL),
    Cell("values", "pandas", "object (Decimal)", "number", "exact", _DECIMAL),
    Cell("values", "PostgreSQL", "double precision", "number", "exact", _DOUBLE),
    Cell("values", "DuckDB", "DOUBLE", "number", "exact", _DOUBLE),
    Cell("values", "SQLite", "NUMERIC", "number", "exact", _SQLITE),
    Cell("values", "SQLite", "REAL", "number", "exact", _DOUBLE),
    Cell("values", "ClickHouse", "Nullable(Float64)", "number", "exact", _DOUBLE),
    Cell("values", "Django", "DecimalField (SQLite)", "number", "exact", _SQLITE),
    Cell("values", "Django", "FloatField (PostgreSQL)", "number", "exact", _DOUBLE),
    Cell("values", "polars", "Float64", "number", "exact", _DOUBLE),
    Cell("values", "pandas", "float64", "number", "exact", _DOUBLE),
]

_MISSING = 'null, as pandas reads it (docs/semantics.md, "Values from NumPy and pandas")'
_SCALAR = "its Python value"
RECORD_SHAPES: tuple[tuple[str, str, str], ...] = (
    ("number", "NumPy integer (int32, int64, uint64)", _SCALAR),
    ("number", "NumPy float (float32, float64)", _SCALAR),
    ("number", "nan", _MISSING),
    ("number", "pd.NA", _MISSING),
    ("string", "numpy.str_", _SCALAR),
    ("string", "str subclass", "compared as the str it is"),
    ("string", "pd.NA", _MISSING),
    ("string", "nan", _MISSING),
    ("boolean", "numpy.bool_", _SCALAR),
    ("boolean", "pd.NA", _MISSING),
    ("datetime", "pd.Timestamp", "an aware one its instant, a naive one UTC"),
    ("datetime", "numpy.datetime64", "the naive (UTC) instant it counts to, to the microsecond"),
    ("datetime", "pd.NaT", _MISSING),
    ("datetime", "numpy.datetime64 NaT", _MISSING),
    ("datetime", "nan", _MISSING),
    ("date", "numpy.datetime64[D]", "the date"),
    ("date", "pd.NaT", _MISSING),
    ("date", "numpy.datetime64 NaT", _MISSING),
    ("date", "pd.NA", _MISSING),
    ("list", "NumPy array", "the list of its items"),
    ("list", "list of NumPy scalars", "each item its Python value"),
    ("list", "pd.NA", _MISSING),
)
"""A record's values from NumPy and pandas (`DataFrame.to_dict("records")`), by field type;
`tests/test_python_values.py` runs each against its plain value on every condition."""

RECORD_CELLS: list[Cell] = [
    Cell("values", "memory (records)", shape, kind, "exact", note)
    for kind, shape, note in RECORD_SHAPES
]

CELLS: list[Cell] = [*NUMBER_CELLS, *RECORD_CELLS]
