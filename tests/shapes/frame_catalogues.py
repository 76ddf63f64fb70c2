"""Each frame library's own dtype catalogue, read at run time, and one sample of each dtype.

Why here and not in the gate (`backends/frames/frame_dtypes.py`): the gate holds the decisions,
this module asks the installed polars, pyarrow and pandas what exists, so that a type a new
version adds has no decision yet and fails tests/test_frame_catalogues.py. The samples are
the parameters a parametrised type needs to be built (`pl.Datetime("us", "UTC")`), so that
each refusal is also shown on a real schema.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import polars as pl
import pyarrow as pa
from pandas.core.dtypes.base import _registry  # pandas' extension dtype registry

from audiencefilter.backends.frames.frame_dtypes import pandas_key


def polars_catalogue() -> dict[str, type]:
    """Every concrete `pl.DataType` class polars defines (the leaves of the class tree: the
    abstract groups `IntegerType`, `NestedType`... have subclasses), by name."""
    found: dict[str, type] = {}
    pending = [pl.DataType]
    while pending:
        cls = pending.pop()
        subclasses = [c for c in cls.__subclasses__() if c.__module__.startswith("polars.")]
        if not subclasses and cls is not pl.DataType:
            found[cls.__name__] = cls
        pending += subclasses
    return found


def arrow_catalogue() -> list[str]:
    """Every Arrow type id pyarrow names (`pa.lib.Type_*`), lower-case: `int8`, `na`."""
    return sorted(n.removeprefix("Type_").lower() for n in dir(pa.lib) if n.startswith("Type_"))


def pandas_catalogue() -> dict[str, Any]:
    """Every NumPy dtype (`np.typecodes["All"]`) and every extension dtype pandas registers,
    by the gate's key, with a dtype of each."""
    found: dict[str, Any] = {
        pandas_key(np.dtype(code)): np.dtype(code) for code in np.typecodes["All"]
    }
    for cls in _registry.dtypes:
        found[cls.__name__] = PANDAS_SAMPLES.get(cls.__name__) or cls()
    return found


PANDAS_SAMPLES: dict[str, Any] = {
    "CategoricalDtype": pd.CategoricalDtype(["a", "b"]),
    "DatetimeTZDtype": pd.DatetimeTZDtype("ns", "UTC"),
    "PeriodDtype": pd.PeriodDtype("D"),
    "IntervalDtype": pd.IntervalDtype("int64"),
    "SparseDtype": pd.SparseDtype("float64"),
    "ArrowDtype": pd.ArrowDtype(pa.int64()),
    "StringDtype": pd.StringDtype("python"),
}
"""A dtype of each parametrised pandas extension dtype; the others are built without one."""

POLARS_SAMPLES: dict[str, Callable[[], Any]] = {
    "Datetime": lambda: pl.Datetime("ns", "Europe/Paris"),
    "Duration": lambda: pl.Duration("us"),
    "Decimal": lambda: pl.Decimal(38, 4),
    "List": lambda: pl.List(pl.String),
    "Array": lambda: pl.Array(pl.String, 2),
    "Struct": lambda: pl.Struct({"a": pl.Int64}),
    "Enum": lambda: pl.Enum(["a", "b"]),
}
"""A dtype of each parametrised polars class; the others are built without arguments."""

ARROW_SAMPLES: dict[str, Callable[[], Any]] = {
    "half_float": pa.float16,
    "float": pa.float32,
    "double": pa.float64,
    "bool": pa.bool_,
    "na": pa.null,
    "fixed_size_binary": lambda: pa.binary(4),
    "decimal32": lambda: pa.decimal32(7, 2),
    "decimal64": lambda: pa.decimal64(12, 2),
    "decimal128": lambda: pa.decimal128(38, 2),
    "decimal256": lambda: pa.decimal256(40, 2),
    "timestamp": lambda: pa.timestamp("us", tz="America/Santiago"),
    "time32": lambda: pa.time32("s"),
    "time64": lambda: pa.time64("us"),
    "duration": lambda: pa.duration("us"),
    "interval_month_day_nano": pa.month_day_nano_interval,
    "dictionary": lambda: pa.dictionary(pa.int32(), pa.string()),
    "list": lambda: pa.list_(pa.string()),
    "large_list": lambda: pa.large_list(pa.string()),
    "list_view": lambda: pa.list_view(pa.string()),
    "large_list_view": lambda: pa.large_list_view(pa.string()),
    "fixed_size_list": lambda: pa.list_(pa.string(), 2),
    "struct": lambda: pa.struct([("a", pa.int64())]),
    "map": lambda: pa.map_(pa.string(), pa.int64()),
    "dense_union": lambda: pa.dense_union([pa.field("a", pa.int64())]),
    "sparse_union": lambda: pa.sparse_union([pa.field("a", pa.int64())]),
    "run_end_encoded": lambda: pa.run_end_encoded(pa.int32(), pa.string()),
}
"""A type of each Arrow type id whose factory needs arguments or has another name; an id
with neither (`interval_months`: pyarrow has no factory for it) is decided, not sampled."""


def polars_sample(name: str, cls: type) -> Any:
    """A dtype of the polars class, or None where it cannot be built without knowing more."""
    if name in POLARS_SAMPLES:
        return POLARS_SAMPLES[name]()
    try:
        return cls()
    except TypeError:
        return None


def arrow_sample(name: str) -> Any:
    """A type of the Arrow type id, or None where pyarrow has no factory for it."""
    factory = ARROW_SAMPLES.get(name) or getattr(pa, name, None)
    return factory() if callable(factory) else None


def arrow_table(name: str, dtype: Any) -> pa.Table:
    """An empty table with one column of `dtype` (a union column built from its parts: pyarrow
    builds no empty union from a Python sequence)."""
    if pa.types.is_union(dtype):
        codes, children = pa.array([], pa.int8()), [pa.array([], f.type) for f in dtype]
        if dtype.mode == "dense":
            column = pa.UnionArray.from_dense(codes, pa.array([], pa.int32()), children)
        else:
            column = pa.UnionArray.from_sparse(codes, children)
        return pa.table({name: column})
    return pa.schema([pa.field(name, dtype)]).empty_table()
