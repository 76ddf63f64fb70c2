"""Frames shapes users bring: their cells for the support matrix (tests/shapes/__init__.py).

The pandas dtypes of a number column are read from NumPy's and pandas' own type lists (every
NumPy integer and float type, and the nullable `Int8`...`Float64` pandas builds on them), the
rest are the spellings pandas and polars users write. `tests/test_frame_shapes.py` builds
each cell's frame and runs it."""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from audiencefilter.language.data_paths import FIX_KEYS
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


LISTS = ("string[]", "number[]", "boolean[]", "datetime[]", "date[]")
SCALARS = ("string", "number", "boolean", "datetime", "date", "json")
NULLS = {"pandas": "null[pyarrow]", "polars": "Null"}
"""The all-null column of each back-end, UNKNOWN for every field type."""

_ITEMS = {
    "string": pa.large_string(),
    "number": pa.int64(),
    "boolean": pa.bool_(),
    "datetime": pa.timestamp("us", tz="UTC"),
    "date": pa.date32(),
}
ARROW_TYPES: dict[str, pa.DataType] = {
    str(pd_name): arrow
    for pd_name, arrow in (
        *((f"{t}[pyarrow]", getattr(pa, t)()) for t in ("int8", "int16", "int32", "uint8")),
        *((f"{t}[pyarrow]", getattr(pa, t)()) for t in ("uint16", "uint32", "uint64")),
        ("float[pyarrow]", pa.float32()),
        ("double[pyarrow]", pa.float64()),
        ("decimal128(38, 0)[pyarrow]", pa.decimal128(38, 0)),
        ("decimal128(20, 4)[pyarrow]", pa.decimal128(20, 4)),
        ("ArrowDtype(pa.string())", pa.string()),
        ("large_string[pyarrow]", pa.large_string()),
        ("string_view[pyarrow]", pa.string_view()),
        (
            "dictionary<values=string, indices=int32>[pyarrow]",
            pa.dictionary(pa.int32(), pa.string()),
        ),
        ("timestamp[ns, tz=Europe/Paris][pyarrow]", pa.timestamp("ns", tz="Europe/Paris")),
        ("timestamp[ms][pyarrow]", pa.timestamp("ms")),
        *((f"large_list<{k}>[pyarrow]", pa.large_list(t)) for k, t in _ITEMS.items()),
        *((f"list<{k}>[pyarrow]", pa.list_(t)) for k, t in _ITEMS.items()),
    )
}
"""pandas' `ArrowDtype` columns built from an Arrow type (a pyarrow table's columns too): the
cells proving each Arrow type the pandas and pyarrow frames are exact on."""
_ARROW_JSON = ("ArrowDtype(pa.string())", "large_string[pyarrow]", "string_view[pyarrow]")


def _arrow_cells() -> list[Cell]:
    cells = []
    for shape, arrow in ARROW_TYPES.items():
        kind = _arrow_field_type(arrow)
        cells.append(Cell("frames", "pandas", shape, kind, "exact"))
    cells += [
        Cell("frames", "pandas", f"{shape} of JSON text", "json", "exact") for shape in _ARROW_JSON
    ]
    return cells


def _arrow_field_type(arrow: pa.DataType) -> str:
    if pa.types.is_list(arrow) or pa.types.is_large_list(arrow):
        return f"{_arrow_field_type(arrow.value_type)}[]"
    for kind, test in (
        ("number", lambda t: pa.types.is_integer(t) or pa.types.is_floating(t)),
        ("number", pa.types.is_decimal),
        ("boolean", pa.types.is_boolean),
        ("datetime", pa.types.is_timestamp),
        ("date", pa.types.is_date),
    ):
        if test(arrow):
            return kind
    return "string"


def _nulls(backend: str) -> list[Cell]:
    return [
        Cell("frames", backend, NULLS[backend], kind, "exact", "UNKNOWN")
        for kind in (*SCALARS, *LISTS)
    ]


def _pandas() -> list[Cell]:
    cells = [
        Cell("frames", "pandas", shape, "string", "exact")
        for shape in ("object", "string[python]", "string[pyarrow]", "str", "category")
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
    cells += [Cell("frames", "pandas", "object of lists", kind, "exact") for kind in LISTS]
    cells += [
        Cell("frames", "pandas", "object of dicts", "json", "exact"),
        Cell("frames", "pandas", "object of JSON text", "json", "exact"),
        Cell("frames", "pandas", "string[pyarrow] of JSON text", "json", "exact"),
    ]
    return cells + _arrow_cells() + _nulls("pandas") + _bad_json("pandas")


def _bad_json(backend: str) -> list[Cell]:
    cells = [
        Cell("frames", backend, shape, "json", "refused", _FIX_JSON)
        for shape in ("a dict's repr (to_csv)", "text that is no JSON", "empty text")
    ]
    cells.append(Cell("frames", backend, KEY_TWICE, "json", "refused", FIX_KEYS))
    if backend == "pandas":
        cells.append(Cell("frames", backend, KEYS_ALIKE, "json", "refused", FIX_KEYS))
    return cells


KEY_TWICE = "JSON text holding a key twice"
KEYS_ALIKE = "object of dicts with two keys written alike"


def _polars() -> list[Cell]:
    cells = [
        Cell("frames", "polars", shape, "string", "exact")
        for shape in ("String", "Categorical", "Enum")
    ]
    numbers = ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")
    cells += [
        Cell("frames", "polars", shape, "number", "exact")
        for shape in (
            *numbers,
            "Int128",
            "Float32",
            "Float64",
            "Decimal(38, 0)",
            "Decimal(20, 4)",
            "Decimal(38, 30)",
        )
    ]
    cells += [
        Cell("frames", "polars", "Boolean", "boolean", "exact"),
        Cell("frames", "polars", "Datetime(us, UTC)", "datetime", "exact"),
        Cell("frames", "polars", "Datetime(ns, Europe/Paris)", "datetime", "exact"),
        Cell("frames", "polars", "Datetime(ms)", "datetime", "exact", "naive is UTC"),
        Cell("frames", "polars", "Date", "date", "exact"),
        Cell("frames", "polars", "Date", "datetime", "exact", "midnight UTC"),
        *(Cell("frames", "polars", shape, kind, "exact") for shape, kind in POLARS_LISTS.items()),
        Cell("frames", "polars", "String of JSON text", "json", "exact"),
        Cell("frames", "polars", "Struct (read_ndjson)", "json", "exact"),
        Cell("frames", "polars", "Object of decoded values", "json", "exact"),
    ]
    return cells + _nulls("polars") + _bad_json("polars")


POLARS_LISTS = {
    "List(String)": "string[]",
    "List(Int64)": "number[]",
    "List(Float64)": "number[]",
    "List(Boolean)": "boolean[]",
    "List(Datetime(us, UTC))": "datetime[]",
    "List(Date)": "date[]",
}
"""The polars list columns, each with its field type."""


LEFT_OUT: dict[tuple[str, str, str], str] = {}
"""Cells not on the page yet, each with why: the page says only what the tests prove."""

CELLS: list[Cell] = [
    cell
    for cell in (*_pandas(), *_polars())
    if (cell.backend, cell.shape, cell.field_type) not in LEFT_OUT
]


def render_refused() -> list[str]:
    """The support page's list of the dtypes refused outright or with a fix of their own
    (`frame_dtypes`' tables); a dtype exact for one field type is refused for the others with
    the engine's conversion to the field's type."""
    from audiencefilter.backends.frames.frame_dtypes import FIELD_TYPES, TABLES

    out = [
        "### refused frame dtypes",
        "",
        "Refused when the expression is built, from the frame's schema (`FrameError`). A dtype",
        "exact above for one field type is refused for the others, with a conversion to the",
        "field's type; pandas' `ArrowDtype` columns are decided as pyarrow's types.",
        "",
        "| library | dtype | field types | fix |",
        "|---|---|---|---|",
    ]
    for library, table in TABLES.items():
        for key, entry in table.items():
            if entry.delegate or not entry.fix:
                continue
            refused = [t for t in FIELD_TYPES if t not in entry.exact]
            kinds = "every" if len(refused) == len(FIELD_TYPES) else ", ".join(refused)
            fix = entry.fix.replace("|", "\\|")
            out.append(f"| {library} | `{key}` | {kinds} | {fix} |")
    return [*out, ""]
