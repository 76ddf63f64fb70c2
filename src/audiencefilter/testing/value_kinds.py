"""The kinds of Python value a record may hold for one plain value: a dimension of records.

Records come from frames and ORMs as well as from JSON, so a missing number may be `nan` or
`pd.NA`, an integer `numpy.int64` or `Decimal`, a date-time `pd.Timestamp` (docs/semantics.md,
"Values from NumPy and pandas"). Whatever judges records, `Filter.matches`, `FilterSet` and
its trackers, must read each kind as the plain value it stands for; `value_kinds` draws them,
so that a differential test meets every kind where it meets the plain value.

NumPy and pandas are optional: their kinds are drawn only where they are installed.
"""

from __future__ import annotations

import importlib
from datetime import UTC, date, datetime
from decimal import Decimal
from types import ModuleType
from typing import Any

from hypothesis import strategies as st

_INT64 = range(-(2**63), 2**63)


def _module(name: str) -> ModuleType | None:
    try:
        return importlib.import_module(name)
    except ImportError:
        return None


def null_likes() -> list[Any]:
    """Every value a record may hold for null: `None`, `nan` and, where installed, NumPy's
    `nan` and `NaT` and pandas' `NA` and `NaT`."""
    found: list[Any] = [None, float("nan")]
    if (np := _module("numpy")) is not None:
        found += [np.float64("nan"), np.float32("nan"), np.datetime64("NaT")]
        found += [np.datetime64("NaT", "D")]
    if (pd := _module("pandas")) is not None:
        found += [pd.NA, pd.NaT]
    return found


def other_kinds(value: Any) -> list[Any]:
    """`value` as the other kinds of Python value that stand for it (none for a value no
    other kind stands for)."""
    if value is None:
        return null_likes()[1:]
    if isinstance(value, bool):
        return _numpy(lambda np: [np.bool_(value)])
    if isinstance(value, int):
        numpy = _numpy(lambda np: [np.int64(value)] if value in _INT64 else [])
        return [Decimal(value), *numpy]
    if isinstance(value, float):
        return [Decimal(repr(value)), *_numpy(lambda np: [np.float64(value)])]
    if isinstance(value, str):
        return _numpy(lambda np: [np.str_(value)])
    if isinstance(value, datetime):
        return _instants(value)
    if isinstance(value, date):
        return _numpy(lambda np: [np.datetime64(value.isoformat(), "D")])
    if isinstance(value, list) and value:
        return _numpy(lambda np: [np.array(value, dtype=object)])
    return []


def _numpy(make: Any) -> list[Any]:
    np = _module("numpy")
    return [] if np is None else list(make(np))


def _instants(value: datetime) -> list[Any]:
    """A date-time as `pd.Timestamp` and as the naive UTC `datetime64` it counts to."""
    utc = value if value.tzinfo is None else value.astimezone(UTC).replace(tzinfo=None)
    found = _numpy(lambda np: [np.datetime64(utc.isoformat(), "us")])
    if (pd := _module("pandas")) is not None and value.year > 1677 and value.year < 2262:
        found.append(pd.Timestamp(value))  # nanoseconds since 1970 in 64 bits
    return found


def value_kinds(value: Any) -> st.SearchStrategy[Any]:
    """`value` itself, or another kind of Python value that stands for it (`other_kinds`)."""
    return st.sampled_from([value, *other_kinds(value)])
