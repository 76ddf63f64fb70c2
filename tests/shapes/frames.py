"""Frames shapes users bring: their cells for the support matrix (tests/shapes/__init__.py).

The pandas dtypes of a number column are read from NumPy's and pandas' own type lists (every
NumPy integer and float type, and the nullable `Int8`...`Float64` pandas builds on them), the
rest are the spellings pandas and polars users write. `tests/test_frame_shapes.py` builds
each cell's frame and runs it."""

from __future__ import annotations

import numpy as np

from tests.shapes import Cell

_FIX_JSON = "write the column with json.dumps, or set the cell to null"

_FIX_MIXED = "give the column one dtype: Int64 for integers, Float64 for fractions"
MIXED_OBJECT = "object mixing integers past 2^53 with fractions"
"""A column no one type holds exactly: its integers need 64 bits, its fractions a double."""
OBJECT_NUMBERS = {
    "object of integers": "integers",
    "object of fractions and integers up to 2^53": "doubles",
}
"""The object columns of numbers one type holds exactly, and which values each holds."""

_NUMPY_NUMBERS = [
    np.dtype(code).name for code in np.typecodes["AllInteger"] + "fd" if code not in "pP"
]
"""NumPy's integer and float types (`int8`...`uint64`, `float32`, `float64`)."""
_MASKED_NUMBERS = [name.capitalize().replace("Uint", "UInt") for name in _NUMPY_NUMBERS]
"""pandas' nullable counterparts (`Int8`...`UInt64`, `Float32`, `Float64`)."""


def _pandas() -> list[Cell]:
    cells = [
        Cell("frames", "pandas", shape, "string", "exact")
        for shape in ("object", "string[python]", "string[pyarrow]", "category")
    ]
    for shape in dict.fromkeys(
        [*_NUMPY_NUMBERS, *_MASKED_NUMBERS, *OBJECT_NUMBERS, "int64[pyarrow]"]
    ):
        cells.append(Cell("frames", "pandas", shape, "number", "exact"))
    cells.append(Cell("frames", "pandas", MIXED_OBJECT, "number", "refused", _FIX_MIXED))
    cells += [
        Cell("frames", "pandas", shape, "boolean", "exact")
        for shape in ("bool", "boolean", "object", "bool[pyarrow]")
    ]
    cells += [
        Cell("frames", "pandas", shape, "datetime", "exact", note)
        for shape, note in (
            ("datetime64[ns]", "naive is UTC"),
            ("datetime64[ns, UTC]", ""),
            ("datetime64[ns, Europe/Paris]", ""),
            ("datetime64[us, Asia/Kolkata]", ""),
            ("timestamp[us, tz=UTC][pyarrow]", ""),
        )
    ]
    cells += [
        Cell("frames", "pandas", shape, "date", "exact") for shape in ("object", "date32[pyarrow]")
    ]
    cells += [
        Cell("frames", "pandas", "object of lists", "string[]", "exact"),
        Cell("frames", "pandas", "object of dicts", "json", "exact"),
        Cell("frames", "pandas", "object of JSON text", "json", "exact"),
        Cell("frames", "pandas", "string[pyarrow] of JSON text", "json", "exact"),
    ]
    return cells + _bad_json("pandas")


def _bad_json(backend: str) -> list[Cell]:
    return [
        Cell("frames", backend, shape, "json", "refused", _FIX_JSON)
        for shape in ("a dict's repr (to_csv)", "text that is no JSON", "empty text")
    ]


def _polars() -> list[Cell]:
    cells = [
        Cell("frames", "polars", shape, "string", "exact")
        for shape in ("String", "Categorical", "Enum")
    ]
    numbers = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")
    cells += [
        Cell("frames", "polars", shape, "number", "exact")
        for shape in (*numbers, "Float32", "Float64", "Decimal(38, 0)")
    ]
    cells += [
        Cell("frames", "polars", "Boolean", "boolean", "exact"),
        Cell("frames", "polars", "Datetime(us, UTC)", "datetime", "exact"),
        Cell("frames", "polars", "Datetime(ns, Europe/Paris)", "datetime", "exact"),
        Cell("frames", "polars", "Datetime(ms)", "datetime", "exact", "naive is UTC"),
        Cell("frames", "polars", "Date", "date", "exact"),
        Cell("frames", "polars", "List(String)", "string[]", "exact"),
        Cell("frames", "polars", "String of JSON text", "json", "exact"),
        Cell("frames", "polars", "Struct (read_ndjson)", "json", "exact"),
    ]
    return cells + _bad_json("polars")


LEFT_OUT: dict[tuple[str, str, str], str] = {}
"""Cells not on the page yet, each with why: the page says only what the tests prove."""

CELLS: list[Cell] = [
    cell
    for cell in (*_pandas(), *_polars())
    if (cell.backend, cell.shape, cell.field_type) not in LEFT_OUT
]
