"""Values of other Python libraries in a record, read as the plain values they stand for.

Records come from where users keep their data: `DataFrame.to_dict("records")` gives NumPy
scalars, `nan` for a missing number, `pd.NA` and `pd.NaT` for other missing values, NumPy
arrays for list cells. Each is read as the Python value it stands for (the rule, stated once
in docs/semantics.md, "Values from NumPy and pandas"):

- a missing value (`None`, `float("nan")`, NumPy's `nan` and `NaT`, pandas' `NA` and `NaT`)
  is null, as pandas itself reads it and as a frame's missing cell is read;
- a NumPy scalar is its Python value (`np.int64(5)` is `5`, `np.bool_(True)` is `True`, a
  `datetime64` the naive UTC `datetime` it counts to);
- a NumPy array (a list cell) is the list of its items, each read by these rules.

No NumPy or pandas import: the types are known by their module and name, so a record of
plain values never pays for either library. The in-memory evaluator reads records as they
are and turns here only when a value surprises it (`backends/memory/compiler.py`), so plain records
cost nothing more.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from decimal import Decimal
from typing import Any

_PLAIN: frozenset[type] = frozenset({str, int, bool, datetime, date, Decimal, dict})
"""Classes whose values are read as they are (a float may be NaN, a list may hold others)."""

NEVER_MISSING: frozenset[type] = _PLAIN | {list, tuple}
"""Classes of which no value is missing (`is_missing`): the evaluator's quick test."""

_MISSING_NAMES = frozenset({"NAType", "NaTType"})
"""pandas' missing values, by class name (their module moved between pandas' versions)."""


def plain_value(value: Any) -> Any:
    """`value` as the plain Python value it stands for (see the module docstring): the same
    object when it is plain already, so a caller tells a change by identity."""
    kind = value.__class__
    if value is None or kind in _PLAIN:
        return value
    if isinstance(value, float):  # a float, or NumPy's float64, a subclass
        if value != value:  # NaN, the missing number of NumPy and pandas
            return None
        return value if kind is float else float(value)
    if kind.__name__ in _MISSING_NAMES and kind.__module__.startswith("pandas"):
        return None
    if kind.__module__ == "numpy":
        return _numpy_value(value)
    if isinstance(value, list | tuple):
        return _plain_items(value)
    return value


def _plain_items(value: list[Any] | tuple[Any, ...]) -> Any:
    """A list's items made plain: the same list when each is plain already."""
    items = [plain_value(item) for item in value]
    same = all(a is b for a, b in zip(items, value, strict=True))
    return value if same else items


def _numpy_value(value: Any) -> Any:
    """A NumPy scalar or array as its Python value; `datetime64` to microseconds first (its
    `item()` at nanoseconds is an int)."""
    dtype = getattr(value, "dtype", None)
    if dtype is not None and dtype.kind == "M":  # days stay dates, finer units date-times
        value = value.astype("datetime64[D]" if dtype.str.endswith("[D]") else "datetime64[us]")
    if hasattr(value, "tolist") and getattr(value, "ndim", 0) > 0:
        return [plain_value(item) for item in value.tolist()]
    if not hasattr(value, "item"):
        return value
    item = value.item()
    return None if item is None else plain_value(item)


def is_plain(value: Any) -> bool:
    """Whether `value` is read as it is (`plain_value` gives it back)."""
    return plain_value(value) is value


def is_missing(value: Any) -> bool:
    """Whether `value` is null as read (`plain_value`): None, NaN, `NA` or `NaT`. The one
    test of a record's null: the compiled functions inline its quick part, and `FilterSet`
    and its trackers call it, so the two never read a null-like value two ways."""
    return value is None or (value.__class__ not in NEVER_MISSING and plain_value(value) is None)


def plain_record(record: Mapping[str, Any]) -> dict[str, Any] | None:
    """`record` with every value plain (`plain_value`), or None when it holds none to change:
    then a value that failed was of a wrong type, not of another library."""
    plain = {name: plain_value(value) for name, value in record.items()}
    if all(plain[name] is value for name, value in record.items()):
        return None
    return plain
