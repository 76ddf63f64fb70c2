"""The closed world of frame dtypes (`backends/frames/frame_dtypes.py`): every dtype polars,
pyarrow and pandas expose, read from the installed libraries (tests/shapes/frame_catalogues.py),
has a decision for each field type, exact or refused; an exact one has a cell of the support
matrix (tests/shapes/frames.py) that proves it against the oracle; a refused one is a
`FrameError` when the expression is built from the frame's schema, naming the field, the
dtype and the fix. A new library version's new dtype fails here, not in a user's answer.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import audiencefilter as af
from audiencefilter.backends.frames.frame_dtypes import (
    FIELD_TYPES,
    TABLES,
    arrow_key,
    gate,
    pandas_key,
    polars_key,
)
from tests.shapes.frame_catalogues import (
    arrow_catalogue,
    arrow_sample,
    arrow_table,
    pandas_catalogue,
    polars_catalogue,
    polars_sample,
)
from tests.shapes.frames import CELLS
from tests.test_frame_shapes import FIELD, NOW, _conditions, _frame, _schema

_WHERE = {
    "polars": "POLARS",
    "pyarrow": "ARROW",
    "pandas": "PANDAS",
}
"""The table of src/audiencefilter/backends/frames/frame_dtypes.py holding each library's."""


def _catalogue(library: str) -> list[str]:
    if library == "polars":
        return sorted(polars_catalogue())
    if library == "pyarrow":
        return arrow_catalogue()
    return sorted(pandas_catalogue())


@pytest.mark.parametrize("library", sorted(TABLES))
def test_every_dtype_of_the_library_has_a_decision(library: str) -> None:
    missing = [key for key in _catalogue(library) if key not in TABLES[library]]
    assert not missing, (
        f"{library} has dtypes with no decision: {missing}. Add each to {_WHERE[library]} in "
        "src/audiencefilter/backends/frames/frame_dtypes.py: exact for the field types a cell "
        "of tests/shapes/frames.py proves, refused with its fix for the others"
    )


@cache
def _proven() -> frozenset[tuple[str, str, str]]:
    """(library, dtype key, field type) of every exact cell, read from the cell's own frame."""
    found = set()
    for cell in CELLS:
        if cell.outcome != "exact":
            continue
        frame, _ = _frame(cell)
        dtype = (
            frame.schema[FIELD.get(cell.field_type, "f")]
            if cell.backend == "polars"
            else (frame.dtypes[FIELD.get(cell.field_type, "f")])
        )
        for library, key in _keys(cell.backend, dtype):
            found.add((library, key, cell.field_type))
    return frozenset(found)


def _keys(backend: str, dtype: Any) -> list[tuple[str, str]]:
    if backend == "polars":
        return [("polars", polars_key(dtype))]
    keys = [("pandas", pandas_key(dtype))]
    if isinstance(dtype, pd.ArrowDtype):
        keys.append(("pyarrow", arrow_key(dtype.pyarrow_dtype)))
    return keys


@pytest.mark.parametrize("library", sorted(TABLES))
def test_every_exact_decision_has_a_cell_proving_it(library: str) -> None:
    unproven = [
        (key, field_type)
        for key, entry in TABLES[library].items()
        for field_type in sorted(entry.exact)
        if (library, key, field_type) not in _proven()
    ]
    assert not unproven, (
        f"{library}: exact without a cell in tests/shapes/frames.py: {unproven}. Add the cell "
        f"(and run it), or refuse the field type in {_WHERE[library]} with its fix"
    )


def _samples(library: str) -> list[tuple[str, Any]]:
    if library == "polars":
        found = [(n, polars_sample(n, cls)) for n, cls in polars_catalogue().items()]
    elif library == "pyarrow":
        found = [(n, arrow_sample(n)) for n in arrow_catalogue()]
    else:
        found = [(n, d) for n, d in pandas_catalogue().items() if _pandas_column(d) is not None]
    return [(name, dtype) for name, dtype in found if dtype is not None]


def _pandas_column(dtype: Any) -> Any:
    """An empty pandas column of `dtype`, or None where pandas keeps no such column (NumPy's
    `str_`, `bytes` and `void` become object)."""
    try:
        column = pd.DataFrame({"f": pd.Series([], dtype=dtype)})["f"]
    except (TypeError, ValueError, NotImplementedError):
        return None
    return column if pandas_key(column.dtype) == pandas_key(dtype) else None


def _refusals(library: str) -> list[tuple[str, Any, str]]:
    return [
        (name, dtype, field_type)
        for name, dtype in _samples(library)
        for field_type in FIELD_TYPES
        if gate(library, dtype, field_type) is not None
    ]


def _built(library: str, dtype: Any, field_type: str) -> None:
    """The first condition of the field type, built for a column of `dtype`: from the polars
    schema alone (no frame), over an empty pandas or pyarrow frame."""
    name = FIELD.get(field_type, "f")
    flt = af.parse(_conditions(field_type)[0], _schema(field_type))
    if library == "polars":
        flt.to_polars({name: dtype}, now=NOW)
    elif library == "pyarrow":
        flt.frame_mask(arrow_table(name, dtype), now=NOW)
    else:
        flt.frame_mask(pd.DataFrame({name: _pandas_column(dtype)}), now=NOW)


@pytest.mark.parametrize("library", sorted(TABLES))
def test_every_refused_dtype_is_refused_when_the_expression_is_built(library: str) -> None:
    wrong = []
    for name, dtype, field_type in _refusals(library):
        try:
            _built(library, dtype, field_type)
        except af.FrameError as error:
            message = str(error)
            fix = gate(library, dtype, field_type) or "; expected "  # the engine's advice
            if f'field "{FIELD.get(field_type, "f")}"' not in message or fix not in message:
                wrong.append((name, field_type, message))
            continue
        except Exception as error:  # noqa: BLE001 - any other failure is the finding
            wrong.append((name, field_type, f"{type(error).__name__}: {error}"))
            continue
        wrong.append((name, field_type, "answered"))
    assert not wrong, f"{library}: not refused by name and fix: {wrong[:5]} ({len(wrong)})"


# ---- refusals where the library answered, or failed inside pyarrow or polars ---------------

_SCHEMA = af.Schema.from_mapping({"f": "number", "t": "datetime", "s": "string"}, name="gate")


def _refused(frame: Any, where: dict[str, Any], *needles: str) -> None:
    flt = af.parse(where, _SCHEMA)
    with pytest.raises(af.FrameError) as caught:
        flt.frame_mask(frame, now=NOW)
    for needle in needles:
        assert needle in str(caught.value), str(caught.value)


def test_a_decimal256_column_is_refused_where_the_arrow_import_crashed() -> None:
    """polars' Arrow import panicked on Decimal256 (a `PanicException`, no `Exception`)."""
    from decimal import Decimal

    table = pa.table({"f": pa.array([Decimal("0.10")], pa.decimal256(40, 2))})
    _refused(table, {"f": {"equals": 0.1}}, 'field "f"', "decimal256(40, 2)", "decimal128")


@pytest.mark.parametrize("dtype", ["longdouble", "complex128"])
def test_a_numpy_type_arrow_cannot_read_is_refused_where_pyarrow_failed(dtype: str) -> None:
    """pyarrow raised `ArrowNotImplementedError` converting the column, inside the query."""
    frame = pd.DataFrame({"f": pd.Series([0.5, 1], dtype=dtype)})
    _refused(frame, {"f": {"gt": 0}}, 'field "f"', "astype(")


def test_an_object_column_of_datetimes_is_refused_where_it_answered_unproven() -> None:
    frame = pd.DataFrame({"t": pd.Series([datetime(2020, 1, 2)], dtype=object)})
    _refused(frame, {"t": {"gt": "2020-01-01T00:00:00Z"}}, 'field "t"', "pd.to_datetime")


def test_a_category_of_integers_is_refused_where_it_answered_unproven() -> None:
    frame = pd.DataFrame({"f": pd.Series([1, 2], dtype="category")})
    _refused(frame, {"f": {"equals": 1}}, 'field "f"', "category", 'astype("string")')


def test_an_arrow_dictionary_of_integers_is_refused_where_it_answered_unproven() -> None:
    table = pa.table({"f": pa.array([1, 2]).dictionary_encode()})
    _refused(table, {"f": {"equals": 1}}, 'field "f"', "dictionary_decode")


def test_a_sparse_column_is_refused_from_its_dtype_before_its_values_are_read() -> None:
    """The Arrow conversion refused it while reading the values; now its dtype refuses it."""
    frame = pd.DataFrame({"f": pd.Series([0, 1], dtype="Sparse[int64]")})
    _refused(frame, {"f": {"gt": 0}}, 'field "f"', "Sparse[int64, 0]", "sparse.to_dense()")


def test_a_polars_type_newer_than_the_table_is_refused_by_name() -> None:
    """A dtype the table has no entry for (a new polars version's) is refused, not run."""
    flt = af.parse({"f": {"gt": 0}}, _SCHEMA)
    with pytest.raises(af.FrameError, match='field "f" is _Newer.*not in the support matrix'):
        flt.to_polars({"f": _Newer(), "t": pl.Datetime("us", "UTC"), "s": pl.String})


class _Newer(pl.DataType):
    """A dtype class the table does not know."""
