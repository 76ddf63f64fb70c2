"""Frame cells and dtypes (tests/shapes/frames.py): each cell's frame, built in the shape its
users have (a pandas dtype, a polars type, JSON cells as text, objects or a struct), gives the
oracle's answer (`Filter.matches`) on every condition of its field type the space's registries
hold (`every_condition`, and `edge_conditions` for the edge literals), row by row, through
`frame_mask` (pandas) or `select_frame` (polars); a refused cell is a `FrameError` naming the
field, the shape and the fix, for every condition reading it."""

from __future__ import annotations

import io
import json
from collections.abc import Callable
from datetime import UTC, datetime
from decimal import Decimal
from functools import cache
from typing import Any

import pandas as pd
import polars as pl
import pyarrow as pa
import pytest

import audiencefilter as af
from audiencefilter.testing.space import (
    COLUMN_NUMBERS,
    FIXED_DATES,
    FIXED_INSTANTS,
    JSON_HOLDINGS,
    NOWS,
    STRINGS,
    edge_conditions,
    every_condition,
)
from tests.shapes import TALLY, Cell
from tests.shapes.frames import (
    ARROW_TYPES,
    CELLS,
    KEY_TWICE,
    KEYS_ALIKE,
    MIXED_OBJECT,
    NULLS,
    OBJECT_NUMBERS,
)

NOW = NOWS[0]
FIELD = {"json": "data"}
"""The column of each field type (`f`, but `data` for JSON: the space's paths are on `data`)."""

_INSTANTS = (*FIXED_INSTANTS, NOW, datetime(2025, 3, 30, 1, 30, tzinfo=UTC))


def _pool(field_type: str) -> list[Any]:
    """The values a column of the type holds: null and the space's edges."""
    pools: dict[str, list[Any]] = {
        "string": list(STRINGS),
        "number": [*COLUMN_NUMBERS, 0.5, -0.0, 99.5, 1e300],
        "boolean": [True, False],
        "datetime": [m.astimezone(UTC) for m in _INSTANTS],
        "date": [*FIXED_DATES, NOW.date()],
        "string[]": [[], [None], ["a"], ["A", "b"], ["ß", None, "SS"], [""]],
        "number[]": [[], [None], [1, 2], [2**53 + 1, -3], [0.5, None], [-0.0, 2.5], [100]],
        "boolean[]": [[], [None], [True], [True, False], [False, None]],
        "datetime[]": [[], [None], *([m.astimezone(UTC), None] for m in _INSTANTS)],
        "date[]": [[], [None], *([d, None] for d in FIXED_DATES), [NOW.date()]],
    }
    return [None, *pools[field_type]]


_JSON_VALUES = [None, {}] + [
    {"a": held, "b": [held]}
    for held in JSON_HOLDINGS
    if isinstance(held, (dict, list, str, int, float, bool)) or held is None
]
_STRUCT_VALUES = [
    None,
    {"a": "x", "n": 1.0},
    {"a": "", "n": 2.5},
    {"a": None, "n": None},
    {"a": "2025-07-04", "n": -0.0},
]


def _kept(
    values: list[Any], build: Callable[[list[Any]], Any], back: Callable[[Any], list[Any]]
) -> list[Any]:
    """The values the shape holds exactly (a float32 column rounds 2**53 + 1, an int8 one
    holds no 100 000): each one built alone and read back equal, of the same kind."""
    kept = []
    for value in values:
        try:
            got = back(build([value]))[0]
        except (OverflowError, ValueError, TypeError, pl.exceptions.PolarsError, Exception):  # noqa: B014
            continue
        if value is None:
            if (
                got is None
                or got is pd.NA
                or got is pd.NaT
                or (isinstance(got, float) and got != got)
            ):
                kept.append(value)
            continue
        if isinstance(value, float) and value == 0 and str(value) != str(float(got)):
            continue  # -0.0 read back as 0.0
        if isinstance(value, datetime):
            try:  # a zone ahead of UTC takes 9999-12-31T23:59Z past year 9999
                moment = pd.Timestamp(got).to_pydatetime() if got is not None else None
            except (ValueError, OverflowError):
                continue
            if moment is not None and moment.tzinfo is None:
                moment = moment.replace(tzinfo=UTC)
            if moment == value:
                kept.append(value)
            continue
        if got == value and type(got) is not bool or (type(value) is bool and got == value):
            kept.append(value)
    return kept


def _pandas_series(cell: Cell) -> tuple[Callable[[list[Any]], Any], Callable[[Any], list[Any]]]:
    shape = cell.shape
    back = lambda s: s.astype(object).where(s.notna(), None).tolist()  # noqa: E731
    if shape in ARROW_TYPES:
        arrow = ARROW_TYPES[shape]
        return (lambda vs: pd.Series(pd.arrays.ArrowExtensionArray(pa.array(vs, arrow)))), (
            _arrow_back
        )
    if cell.field_type == "datetime":

        def build(values: list[Any]) -> Any:
            column = pd.Series(pd.to_datetime(values, utc=True), dtype="datetime64[us, UTC]")
            if shape == "timestamp[us, tz=UTC][pyarrow]":
                return column.astype(shape)
            unit, _, zone = shape.removeprefix("datetime64[").rstrip("]").partition(", ")
            column = column.astype(f"datetime64[{unit}, UTC]")
            return column.dt.tz_convert(zone) if zone else column.dt.tz_convert(None)

        return build, back
    if cell.field_type == "json":
        text = shape != "object of dicts"
        prefix = shape.removesuffix(" of JSON text")
        dtype: Any = pd.ArrowDtype(ARROW_TYPES[prefix]) if prefix in ARROW_TYPES else object
        dtype = "string[pyarrow]" if prefix == "string[pyarrow]" else dtype
        if prefix in ARROW_TYPES:
            back = _arrow_back
        return (
            lambda vs: pd.Series(
                [json.dumps(v) if text and v is not None else v for v in vs], dtype=dtype
            )
        ), (_parsed(back) if text else back)
    dtype = object if shape.startswith("object") else shape
    return (lambda vs: pd.Series(vs, dtype=dtype)), back


def _arrow_back(column: Any) -> list[Any]:
    """An `ArrowDtype` column's values (a `string_view` one has no `astype(object)`)."""
    values: list[Any] = column.array.__arrow_array__().to_pylist()
    return values


def _decimals(values: list[Any]) -> list[Any]:
    """Numbers as `Decimal`s as written (a Decimal column takes no mix of ints and floats)."""
    return [None if v is None else Decimal(repr(v) if isinstance(v, float) else v) for v in values]


def _polars_series(cell: Cell) -> tuple[Callable[[list[Any]], Any], Callable[[Any], list[Any]]]:
    shape = cell.shape
    back = lambda s: s.to_list()  # noqa: E731
    simple = {
        "String": pl.String,
        "Categorical": pl.Categorical,
        "Boolean": pl.Boolean,
        "Date": pl.Date,
        "List(String)": pl.List(pl.String),
        "List(Int64)": pl.List(pl.Int64),
        "List(Float64)": pl.List(pl.Float64),
        "List(Boolean)": pl.List(pl.Boolean),
        "List(Datetime(us, UTC))": pl.List(pl.Datetime("us", "UTC")),
        "List(Date)": pl.List(pl.Date),
        "Int128": pl.Int128,
        "Float32": pl.Float32,
        "Float64": pl.Float64,
        "Decimal(38, 0)": pl.Decimal(38, 0),
        "Decimal(20, 4)": pl.Decimal(20, 4),
        "Decimal(38, 30)": pl.Decimal(38, 30),
        "Object of decoded values": pl.Object,
    }
    simple |= {
        name: getattr(pl, name)
        for name in ("Int8", "Int16", "Int32", "Int64", "UInt8", "UInt16", "UInt32", "UInt64")
    }
    if shape == "Date" and cell.field_type == "datetime":  # midnight UTC, as a record's date
        instants = pl.Datetime("us", "UTC")
        return (lambda vs: pl.Series("c", vs, dtype=instants).cast(pl.Date)), back
    if shape.startswith("Decimal("):
        decimal = simple[shape]
        return (lambda vs: pl.Series("c", _decimals(vs), dtype=decimal, strict=True)), back
    if shape in simple:
        return (lambda vs: pl.Series("c", vs, dtype=simple[shape], strict=True)), back
    if shape == "Enum":
        return (
            lambda vs: pl.Series(
                "c", vs, dtype=pl.Enum(sorted({v for v in _pool("string") if v is not None}))
            )
        ), back
    if shape.startswith("Datetime"):
        unit, _, zone = shape.removeprefix("Datetime(").rstrip(")").partition(", ")

        def build(values: list[Any]) -> Any:
            column = pl.Series("c", values, dtype=pl.Datetime("us", "UTC"))
            if zone:
                return column.dt.convert_time_zone(zone).cast(pl.Datetime(unit, zone), strict=True)
            return column.dt.replace_time_zone(None).cast(pl.Datetime(unit), strict=True)

        return build, back
    return (
        lambda vs: pl.Series(
            "c", [None if v is None else json.dumps(v) for v in vs], dtype=pl.String
        )
    ), _parsed(back)


def _parsed(back: Callable[[Any], list[Any]]) -> Callable[[Any], list[Any]]:
    """`back` of a column of JSON text: each text read as the JSON value it holds."""
    return lambda column: [v if not isinstance(v, str) else json.loads(v) for v in back(column)]


_BAD: dict[str, Any] = {
    "a dict's repr (to_csv)": "{'plan': 'pro'}",
    "text that is no JSON": "not json",
    "empty text": "",
    KEY_TWICE: '{"plan": "pro", "plan": "free"}',
    KEYS_ALIKE: {"1": "pro", 1: "free"},
}


@cache
def _frame(cell: Cell) -> tuple[Any, tuple[dict[str, Any], ...]]:
    """The cell's frame and the records the oracle reads, row by row."""
    name = FIELD.get(cell.field_type, "f")
    if cell.shape == NULLS[cell.backend]:
        return _null_frame(cell, name), ({name: None},) * 3
    if cell.shape == MIXED_OBJECT:
        return pd.DataFrame({name: pd.Series([1, 2**53 + 1, 0.5], dtype=object)}), ()
    if cell.outcome == "refused":
        column = ['{"a": 1}', _BAD[cell.shape]]
        frame = (
            pl.DataFrame({name: column})
            if cell.backend == "polars"
            else pd.DataFrame({name: column})
        )
        return frame, ()
    if cell.shape == "Struct (read_ndjson)":
        lines = "\n".join(json.dumps({name: v}) for v in _STRUCT_VALUES)
        return pl.read_ndjson(io.StringIO(lines)), tuple({name: v} for v in _STRUCT_VALUES)
    build, back = (_polars_series if cell.backend == "polars" else _pandas_series)(cell)
    values = _JSON_VALUES if cell.field_type == "json" else _held(cell)
    kept = _kept(values, build, back)
    assert len(kept) >= (2 if cell.field_type == "boolean" else 3), (cell, kept)
    column = build(kept)
    if cell.backend == "polars":
        frame: Any = pl.DataFrame([column.alias(name)])
    else:
        frame = pd.DataFrame({name: column})
    return frame, tuple({name: v} for v in kept)


def _null_frame(cell: Cell, name: str) -> Any:
    """Three nulls in the back-end's column of nulls only (pl.Null, Arrow's null type)."""
    if cell.backend == "polars":
        return pl.DataFrame({name: pl.Series([None] * 3, dtype=pl.Null)})
    return pd.DataFrame({name: pd.Series(pd.arrays.ArrowExtensionArray(pa.nulls(3)))})


def _held(cell: Cell) -> list[Any]:
    """The pool of the cell's type, of the kind an object column of numbers holds."""
    pool = _pool(cell.field_type)
    if OBJECT_NUMBERS.get(cell.shape) == "integers":
        return [v for v in pool if not isinstance(v, float)]
    if cell.shape == "object of lists" and cell.field_type == "number[]":
        # One list of fractions beside 2^53 + 1 is refused (no one item type holds both)
        return [v for v in pool if not any(isinstance(i, float) for i in v or [])]
    if OBJECT_NUMBERS.get(cell.shape) == "doubles":
        return [v for v in pool if not isinstance(v, int) or abs(v) <= 2**53]
    return pool


def _assert_refused(cell: Cell, flt: af.Filter, frame: Any) -> None:
    """The refusal names the column and the fix: the bad JSON text, or the one dtype to give."""
    with pytest.raises(af.FrameError) as caught:
        _answers(flt, frame)
    message = str(caught.value)
    if cell.shape == MIXED_OBJECT:
        assert "column(s) f" in message and "one type" in message, message
        return
    assert 'field "data"' in message and repr(_BAD[cell.shape]) in message, message
    assert "json.dumps" in message, message
    if cell.shape in (KEY_TWICE, KEYS_ALIKE):
        assert cell.note in message and ("twice" in message or "all written" in message)


@cache
def _conditions(field_type: str) -> tuple[dict[str, Any], ...]:
    schema = _schema(field_type)
    wheres = [where for _, _, where in every_condition(schema)]
    wheres += [where for _, _, where in edge_conditions(schema, NOW)]
    return tuple(wheres)


@cache
def _schema(field_type: str) -> af.Schema:
    return af.Schema.from_mapping({FIELD.get(field_type, "f"): field_type}, name="frame")


@cache
def _filters(field_type: str) -> tuple[af.Filter, ...]:
    """The conditions read once for every cell of the field type."""
    return tuple(af.parse(where, _schema(field_type)) for where in _conditions(field_type))


_oracle: dict[tuple[str, str], list[list[bool]]] = {}


def _expected(field_type: str, records: list[dict[str, Any]]) -> list[list[bool]]:
    """The oracle's answer to each condition on each record, worked out once for the cells
    that hold the same records."""
    key = (field_type, repr(records))
    if key not in _oracle:
        _oracle[key] = [
            [flt.matches(record, now=NOW) for record in records] for flt in _filters(field_type)
        ]
    return _oracle[key]


def _answers(flt: af.Filter, frame: Any) -> list[bool]:
    if isinstance(frame, pl.DataFrame):
        marked = frame.with_row_index("_row")
        kept = set(flt.select_frame(marked, now=NOW)["_row"].to_list())
        return [row in kept for row in range(frame.height)]
    return [bool(v) for v in flt.frame_mask(frame, now=NOW).tolist()]


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.id)
def test_a_frame_cell_gives_the_oracles_answer_or_is_refused(cell: Cell) -> None:
    frame, records = _frame(cell)
    wrong = []
    flts = _filters(cell.field_type)
    oracle = _expected(cell.field_type, records) if cell.outcome != "refused" else []
    for n, (where, flt) in enumerate(zip(_conditions(cell.field_type), flts, strict=True)):
        if cell.outcome == "refused":
            if not any(name in ("data", "f") for name in json.dumps(where).split('"')):
                continue
            _assert_refused(cell, flt, frame)
            continue
        expected = oracle[n]
        try:
            got = _answers(flt, frame)
        except af.FrameError as error:
            wrong.append((where, f"FrameError: {error}"))
            continue
        if got != expected:
            pairs = enumerate(zip(got, expected, strict=True))
            rows = [records[i] for i, (g, e) in pairs if g != e]
            wrong.append((where, rows[:3]))
    TALLY.note(cell, len(_conditions(cell.field_type)), max(len(records), 2), len(wrong))
    assert wrong == [], (
        f"{len(wrong)} of {len(_conditions(cell.field_type))} conditions: {wrong[:5]}"
    )


def test_every_field_type_has_conditions() -> None:
    for field_type in {cell.field_type for cell in CELLS}:
        assert len(_conditions(field_type)) >= 5, field_type


def test_decimal_columns_compare_with_each_other_exactly_or_are_refused_by_name() -> None:
    """Two Decimal(10, 2) columns compare in their units; a Decimal beside a Float64 is
    refused naming both columns and the cast, not by a wrong answer or a polars error."""
    from decimal import Decimal

    schema = af.Schema.from_mapping({"a": "number", "b": "number"}, name="pair")
    cents = pl.Decimal(10, 2)
    frame = pl.DataFrame(
        {
            "a": pl.Series([Decimal("0.10"), Decimal("0.30"), None, Decimal("-1.00")], dtype=cents),
            "b": pl.Series([Decimal("0.10"), Decimal("0.20"), Decimal("1"), None], dtype=cents),
        }
    ).with_row_index("_row")
    for op in ("equals", "gt", "lte", "not"):
        flt = af.parse({"a": {op: {"_ref": "b"}}}, schema)
        records = [{"a": r["a"], "b": r["b"]} for r in frame.iter_rows(named=True)]
        expected = [i for i, r in enumerate(records) if flt.matches(r, now=NOW)]
        assert flt.select_frame(frame, now=NOW)["_row"].to_list() == expected, op
    mixed = frame.with_columns(pl.col("b").cast(pl.Float64))
    with pytest.raises(af.FrameError, match=r'fields "a" .* and "b" .*cast'):
        af.parse({"a": {"gt": {"_ref": "b"}}}, schema).select_frame(mixed, now=NOW)
