"""The closed world of frame column types: each dtype polars, pyarrow and pandas expose, and
for each field type whether the frame back-ends are proven exact on it or refuse it.

Why: a frame's column arrives in whatever type its library gave it (`pd.read_csv`, a Parquet
file, `pl.read_ndjson`), and most types convert to something polars can compare. Converting
is not proving: a Decimal256 column crashed the Arrow import, a `float128` or complex column
failed inside pyarrow, an object column of `datetime`s or a `category` of integers answered
without a test behind the answer. So the frame back-ends answer only on the dtypes a cell of
the support matrix (docs/support.md, tests/shapes/frames.py) proves against the in-memory
oracle, and refuse every other one when the expression is built, from the frame's schema and
before any value is read, with a `FrameError` naming the column, the field, the dtype and the
fix. The tables below are that decision, one place for the polars back-end and for pandas and
pyarrow frames (`narwhals.py`, which reads them through Arrow into polars);
tests/test_frame_catalogues.py lists each library's own dtype catalogue at run time and fails
on a dtype without an entry here, so a new library version's new type is a failing test, not
a user's wrong answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from ...errors import FrameError
from ...language.fields import Field, Schema
from ...language.nodes import Node
from .columns import stored_names

LISTS = frozenset({"string[]", "number[]", "boolean[]", "datetime[]", "date[]"})
"""The list field types: a list dtype is exact for one when its items are for the item type."""
FIELD_TYPES = ("string", "number", "boolean", "date", "datetime", "json", *sorted(LISTS))
"""The field types a frame column can hold, each decided for every dtype below."""
EVERY = frozenset(FIELD_TYPES)


@dataclass(frozen=True)
class Gate:
    """One dtype's decision: the field types it is exact for, and the fix for the others."""

    exact: frozenset[str] = frozenset()
    fix: str = ""
    """The conversion to advise for a field type outside `exact`; empty where the type is
    simply another kind of value than the field's, and the engine's own advice (a conversion
    to the field's type) says it."""
    delegate: str = ""
    """A library whose table decides instead (pandas' `ArrowDtype`: its Arrow type's)."""


def _exact(*field_types: str, fix: str = "") -> Gate:
    return Gate(frozenset(field_types), fix)


def _refused(fix: str) -> Gate:
    return Gate(frozenset(), fix)


_NUMBER = _exact("number")
_TEXT = 'cast the column to text (pl.String, pa.string() or pandas\' "string")'
_OPAQUE = "give the column one of the types docs/support.md lists for its field type"

POLARS: Mapping[str, Gate] = {
    **{name: _NUMBER for name in ("Int8", "Int16", "Int32", "Int64", "Int128")},
    **{name: _NUMBER for name in ("UInt8", "UInt16", "UInt32", "UInt64")},
    "UInt128": _refused("cast the column to pl.Int128 (or pl.Decimal(38, 0)) if its values fit"),
    "Float16": _refused("cast the column to pl.Float64"),
    "Float32": _NUMBER,
    "Float64": _NUMBER,
    "Decimal": _NUMBER,
    "String": _exact("string", "json"),
    "Categorical": _exact("string"),
    "Enum": _exact("string"),
    "Boolean": _exact("boolean"),
    "Date": _exact("date", "datetime"),
    "Datetime": _exact("datetime"),
    "List": Gate(LISTS),
    "Struct": _exact("json"),
    "Object": _exact("json", fix="give the column its field's polars type, as frame_for does"),
    "Null": Gate(EVERY),
    "Time": _refused("combine it with a date into a pl.Datetime, or hold the field as a string"),
    "Duration": _refused("hold it as a number: pl.col(...).dt.total_microseconds()"),
    "Binary": _refused(f"decode it first: {_TEXT}"),
    "Array": _refused("cast the column to a pl.List of its item type: pl.col(...).arr.to_list()"),
    "Map": _refused("hold the document as JSON text (pl.String) or a pl.Struct"),
    "Extension": _refused("cast the column to its storage type, if docs/support.md lists it"),
    "Unknown": _refused(_OPAQUE),
}
"""polars' dtype classes (`polars.datatypes`), by class name."""

_ARROW_LIST = "cast the column to pa.large_list(<item type>)"
_ARROW_TIME = 'cast it to a timestamp (pa.timestamp("us", tz="UTC")) or hold it as a number'
ARROW: Mapping[str, Gate] = {
    **{name: _NUMBER for name in ("int8", "int16", "int32", "int64")},
    **{name: _NUMBER for name in ("uint8", "uint16", "uint32", "uint64")},
    "half_float": _refused("cast the column to pa.float64()"),
    "float": _NUMBER,
    "double": _NUMBER,
    "decimal128": _NUMBER,
    "decimal32": _refused("cast the column to pa.decimal128(precision, scale)"),
    "decimal64": _refused("cast the column to pa.decimal128(precision, scale)"),
    "decimal256": _refused("cast the column to pa.decimal128(38, scale) if its values fit"),
    "bool": _exact("boolean"),
    "string": _exact("string", "json"),
    "large_string": _exact("string", "json"),
    "string_view": _exact("string", "json"),
    "binary": _refused(f"decode it first: {_TEXT}"),
    "large_binary": _refused(f"decode it first: {_TEXT}"),
    "binary_view": _refused(f"decode it first: {_TEXT}"),
    "fixed_size_binary": _refused(f"decode it first: {_TEXT}"),
    "date32": _exact("date"),
    "date64": _refused("cast the column to pa.date32()"),
    "timestamp": _exact("datetime"),
    "time32": _refused(_ARROW_TIME),
    "time64": _refused(_ARROW_TIME),
    "duration": _refused("hold it as a number (pc.cast(column, pa.int64()), its ticks)"),
    "interval_months": _refused(_ARROW_TIME),
    "interval_day_time": _refused(_ARROW_TIME),
    "interval_month_day_nano": _refused(_ARROW_TIME),
    "dictionary": _exact("string", fix="decode it first: column.dictionary_decode()"),
    "list": Gate(LISTS),
    "large_list": Gate(LISTS),
    "list_view": _refused(_ARROW_LIST),
    "large_list_view": _refused(_ARROW_LIST),
    "fixed_size_list": _refused(_ARROW_LIST),
    "struct": _refused("hold the document as JSON text (pa.string())"),
    "map": _refused("hold the document as JSON text (pa.string())"),
    "dense_union": _refused(_OPAQUE),
    "sparse_union": _refused(_OPAQUE),
    "run_end_encoded": _refused("decode it first: pc.run_end_decode(column)"),
    "na": Gate(EVERY),
}
"""pyarrow's type ids (`pa.lib.Type_*`), by lower-case name: a pyarrow table's columns, and
pandas' `ArrowDtype` columns."""

_WIDE = 'astype("float64") if a double holds its values, else keep exact values as object'
PANDAS: Mapping[str, Gate] = {
    **{name: _NUMBER for name in ("int8", "int16", "int32", "int64")},
    **{name: _NUMBER for name in ("uint8", "uint16", "uint32", "uint64")},
    "float16": _refused('astype("float64")'),
    "float32": _NUMBER,
    "float64": _NUMBER,
    "float128": _refused(_WIDE),
    **{
        name: _refused(f"keep the real part: .real, or {_WIDE}")
        for name in ("complex64", "complex128", "complex256")
    },
    "bool": _exact("boolean"),
    "object": _exact(
        "string",
        "number",
        "boolean",
        "date",
        "json",
        *LISTS,
        fix='convert it first: pd.to_datetime(frame["<column>"], utc=True) for a datetime',
    ),
    "bytes": _refused(f"decode it first: {_TEXT}"),
    "str_": _refused(f"{_TEXT}"),
    "void": _refused(_OPAQUE),
    "datetime64": _exact("datetime"),
    "timedelta64": _refused("hold it as a number: .dt.total_seconds()"),
    **{f"{name}Dtype": _NUMBER for name in ("Int8", "Int16", "Int32", "Int64")},
    **{f"{name}Dtype": _NUMBER for name in ("UInt8", "UInt16", "UInt32", "UInt64")},
    "Float32Dtype": _NUMBER,
    "Float64Dtype": _NUMBER,
    "BooleanDtype": _exact("boolean"),
    "StringDtype": _exact("string", "json"),
    "CategoricalDtype": _exact("string", fix='astype("string"), or the values\' own dtype'),
    "DatetimeTZDtype": _exact("datetime"),
    "PeriodDtype": _refused("convert it first: .dt.to_timestamp() (its start, naive UTC)"),
    "IntervalDtype": _refused("hold its ends as two columns: .array.left and .array.right"),
    "SparseDtype": _refused("convert it first: .sparse.to_dense()"),
    "ArrowDtype": Gate(delegate="pyarrow"),
}
"""pandas' dtypes: NumPy's (by name, a datetime64 or timedelta64 of any unit as one) and the
extension dtypes pandas registers (by class name)."""

TABLES: Mapping[str, Mapping[str, Gate]] = {"polars": POLARS, "pyarrow": ARROW, "pandas": PANDAS}


def polars_key(dtype: Any) -> str:
    """A polars dtype's entry: its class name (a class, as `pl.Int64`, or an instance)."""
    return dtype.__name__ if isinstance(dtype, type) else type(dtype).__name__


@cache
def _arrow_ids() -> dict[int, str]:
    import pyarrow as pa

    ids = {getattr(pa.lib, n): n for n in dir(pa.lib) if n.startswith("Type_")}
    return {number: name.removeprefix("Type_").lower() for number, name in ids.items()}


def arrow_key(dtype: Any) -> str:
    """A pyarrow type's entry: the lower-case name of its type id (`timestamp`, `na`)."""
    return _arrow_ids().get(dtype.id, f"type id {dtype.id}")


_NUMPY_KINDS = {"M": "datetime64", "m": "timedelta64", "S": "bytes", "U": "str_", "V": "void"}


def pandas_key(dtype: Any) -> str:
    """A pandas dtype's entry: a NumPy dtype's name (its kind for dates, durations and
    bytes, whatever the unit or size), an extension dtype's class name."""
    if type(dtype).__module__ == "numpy.dtypes" or type(dtype).__name__ == "dtype":
        return _NUMPY_KINDS.get(dtype.kind, str(dtype.name))
    return type(dtype).__name__


KEYS = {"polars": polars_key, "pyarrow": arrow_key, "pandas": pandas_key}
"""How each library's dtype finds its entry."""

WrongType = Callable[[str, Any], FrameError]
"""The engine's own refusal of a column of another kind of value (field, dtype): it advises
the conversion to the field's type in the engine's own code."""


def gate(library: str, dtype: Any, field_type: str) -> str | None:
    """None where the frame back-ends are exact on `dtype` for `field_type`; else the fix
    (empty where the column holds another kind of value, which the engine's advice says)."""
    key = KEYS[library](dtype)
    entry = TABLES[library].get(key)
    if entry is None:  # a type newer than this table: unproven, so refused
        return f"{key} is not in the support matrix; {_OPAQUE}"
    if entry.delegate:
        return gate(entry.delegate, dtype.pyarrow_dtype, field_type)
    if field_type not in entry.exact:
        return entry.fix
    return _refined(library, key, dtype, field_type, entry)


def _refined(library: str, key: str, dtype: Any, field_type: str, entry: Gate) -> str | None:
    """The parts of a parametrised dtype that decide too: a list's items, the values of a
    dictionary or a pandas category."""
    if field_type in LISTS and key in ("List", "list", "large_list"):
        items = getattr(dtype, "inner", None) or getattr(dtype, "value_type", None)
        if items is None or gate(library, items, field_type[:-2]) is None:
            return None
        return f"its items are {items}: cast them to a type exact for {field_type[:-2]} values"
    if key == "dictionary" and gate(library, dtype.value_type, "string") is not None:
        return entry.fix
    if key == "CategoricalDtype" and gate(library, dtype.categories.dtype, "string") is not None:
        return entry.fix
    return None


def check_column(
    library: str, dtype: Any, field: Field, column: str, wrong: WrongType | None = None
) -> None:
    """Refuse `column` (of `dtype`) for `field` unless the back-ends are proven exact on it.

    Raises:
        FrameError: naming the column, the field, the dtype and the fix.
    """
    fix = gate(library, dtype, field.type.value)
    if fix is None:
        return
    if not fix and wrong is not None:
        raise wrong(field.name, dtype)
    raise FrameError(
        f'column "{column}" for field "{field.name}" is {dtype} ({library}), a type the frame '
        f"back-ends are not proven exact on for a {field.type} field (docs/support.md): "
        f"{fix or 'convert it to the field type'}"
    )


def check_frame(
    library: str,
    node: Node,
    schema: Schema,
    dtype_of: Callable[[str], Any],
    columns: Mapping[str, str],
    wrong: WrongType | None = None,
) -> None:
    """Refuse, before any value is read, a column the filter reads whose dtype
    (`dtype_of(column)`, None where unknown) is not proven exact for its field."""
    declared = {f.name: f for f in schema.fields}
    for name in sorted(stored_names(node, schema)):
        field = declared.get(name)
        column = columns.get(name, name)
        dtype = None if field is None else dtype_of(column)
        if field is not None and dtype is not None:
            check_column(library, dtype, field, column, wrong)
