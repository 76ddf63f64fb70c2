"""Values of NumPy and pandas in records: each reads as the plain value it stands for.

`DataFrame.to_dict("records")` hands the evaluator NumPy scalars, `nan` for a missing number,
`pd.NA` and `pd.NaT`, NumPy arrays for list cells. docs/semantics.md ("Values from NumPy and
pandas") says how each is read: a missing value is null, a scalar its Python value, an array
the list of its items. Every condition of the generated space on a column (`every_condition`,
`edge_conditions(every=True)`) is asked of a record holding the foreign value and of the same
record holding the plain one: the answers must be the same `bool`. Before, a NumPy integer was
a RecordError, and `nan`, `NA` and `NaT` gave answers a null would not (`{"points": null}`
FALSE for `nan`, `NOT createdAt > t` TRUE for `NaT`).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, date, datetime
from typing import Any

import numpy as np
import pandas as pd
import pytest

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.testing.space import SPACE, Placement, Slot, edge_conditions, every_condition
from tests.shapes import TALLY
from tests.shapes.values import RECORD_CELLS


class Name(str):
    """A `str` subclass, as ORMs and enums hand out."""


AT = datetime(2021, 3, 1, 12, 0, tzinfo=UTC)
SCALARS: dict[FieldType, list[tuple[str, Any, Any]]] = {
    FieldType.NUMBER: [
        ("NumPy integer (int32, int64, uint64)", np.int64(5), 5),
        ("NumPy integer (int32, int64, uint64)", np.int32(-1), -1),
        ("NumPy integer (int32, int64, uint64)", np.uint64(2**63), 2**63),
        ("NumPy integer (int32, int64, uint64)", np.int64(2**53 + 1), 2**53 + 1),
        ("NumPy float (float32, float64)", np.float64(0.5), 0.5),
        ("NumPy float (float32, float64)", np.float32(0.5), 0.5),
        ("nan", np.float64("nan"), None),
        ("nan", float("nan"), None),
        ("pd.NA", pd.NA, None),
    ],
    FieldType.STRING: [
        ("numpy.str_", np.str_("alice@example.com"), "alice@example.com"),
        ("str subclass", Name("Zoë"), "Zoë"),
        ("pd.NA", pd.NA, None),
        ("nan", float("nan"), None),
    ],
    FieldType.BOOLEAN: [
        ("numpy.bool_", np.bool_(True), True),
        ("numpy.bool_", np.bool_(False), False),
        ("pd.NA", pd.NA, None),
    ],
    FieldType.DATETIME: [
        ("pd.Timestamp", pd.Timestamp(AT), AT),
        ("pd.Timestamp", pd.Timestamp("2021-03-01T12:00:00"), AT),
        ("numpy.datetime64", np.datetime64("2021-03-01T12:00:00"), AT),
        (
            "numpy.datetime64",
            np.datetime64("2021-03-01T12:00:00.000001234"),
            AT.replace(microsecond=1),
        ),
        ("pd.NaT", pd.NaT, None),
        ("numpy.datetime64 NaT", np.datetime64("NaT"), None),
        ("nan", float("nan"), None),
    ],
    FieldType.DATE: [
        ("numpy.datetime64[D]", np.datetime64("2021-03-01"), date(2021, 3, 1)),
        ("pd.NaT", pd.NaT, None),
        ("numpy.datetime64 NaT", np.datetime64("NaT", "D"), None),
        ("pd.NA", pd.NA, None),
    ],
}
"""Per scalar type: (its shape in tests/shapes/values.py, a value of NumPy or pandas, the
plain value it stands for)."""

PLAIN: dict[FieldType, Any] = {
    FieldType.STRING: "bob@example.com",
    FieldType.NUMBER: 2,
    FieldType.BOOLEAN: False,
    FieldType.DATETIME: datetime(2020, 1, 1, tzinfo=UTC),
    FieldType.DATE: date(2020, 1, 1),
}


def pairs(kind: FieldType) -> list[tuple[str, Any, Any]]:
    """The (shape, foreign, plain) values of a field of `kind`: a list field's as NumPy
    arrays, lists of foreign items, pandas' missing value for the whole list."""
    element = kind.element
    if element is None:
        return SCALARS.get(kind, [])
    items = [(f, p) for _, f, p in SCALARS[element] if p is not None]
    foreign = [f for f, _ in items]
    plain = [p for _, p in items]
    return [
        ("NumPy array", np.array(plain, dtype=object), plain),
        ("NumPy array", np.array(plain[:1]), plain[:1]),
        ("list of NumPy scalars", foreign, plain),
        ("list of NumPy scalars", [foreign[0], pd.NA], [plain[0], None]),
        ("pd.NA", pd.NA, None),
    ]


def _own_column(slot: Slot) -> bool:
    return slot.relation is None and slot.placement is Placement.COLUMN


def column_conditions() -> list[tuple[Slot, dict[str, Any]]]:
    """Every condition of the space on a column of the contact's own (no relation, no path):
    only those slots swept (the whole space's sweep, relations included, took seconds of every
    worker's collection)."""
    found = []
    for source in (
        every_condition(SPACE, of=_own_column),
        edge_conditions(SPACE, every=True, of=_own_column),
    ):
        found.extend((slot, where) for slot, _, where in source)
    return found


CONDITIONS = column_conditions()
BASE: dict[str, Any] = {
    slot.field: [PLAIN[slot.type.element]] if slot.type.element else PLAIN[slot.type]
    for slot, _ in CONDITIONS
}
"""A plain value in every column, so a reference's peer is there."""


def by_field() -> Iterator[tuple[str, FieldType]]:
    seen = {slot.field: slot.type for slot, _ in CONDITIONS}
    yield from sorted(seen.items())


@pytest.mark.parametrize(("field", "kind"), list(by_field()))
def test_foreign_values_answer_as_their_plain_values(field: str, kind: FieldType) -> None:
    filters = [(where, af.parse(where, SPACE)) for slot, where in CONDITIONS if slot.field == field]
    assert filters and pairs(kind), field
    wrong = []
    cells = {(c.field_type, c.shape): c for c in RECORD_CELLS}
    name = "list" if kind.element else kind.value
    for shape, foreign, plain in pairs(kind):
        TALLY.note(cells[(name, shape)], len(filters), 2, 0)
        for where, f in filters:
            for base in (BASE, {}):
                expected = f.matches({**base, field: plain})
                got = f.matches({**base, field: foreign})
                if got is not expected:
                    wrong.append(f"{where} on {foreign!r}: {got!r}, as {plain!r}: {expected!r}")
    assert not wrong, f"{len(wrong)} wrong, first: " + "; ".join(wrong[:5])


@pytest.mark.parametrize(("field", "kind"), list(by_field()))
def test_a_set_and_its_trackers_read_foreign_values_as_each_filter(
    field: str, kind: FieldType
) -> None:
    """`FilterSet.matching` and `track(...)` on every foreign value of the field: the positions
    `Filter.matches` gives, each filter alone (before, `nan`, `NA` and `NaT` were present to
    the set's null tests)."""
    filters = [af.parse(where, SPACE) for slot, where in CONDITIONS if slot.field == field]
    together = af.FilterSet(filters)
    for _, foreign, plain in pairs(kind):
        for base in (BASE, {}):
            record = {**base, field: foreign}
            alone = [i for i, f in enumerate(filters) if f.matches(record)]
            assert together.matching(record) == alone, (field, foreign)
            assert together.track(record).matching == alone, (field, foreign)
            tracked = together.track({**base, field: plain})
            tracked.update(record)
            assert tracked.matching == alone, (field, foreign)


def test_a_value_of_no_type_a_field_takes_is_still_refused() -> None:
    f = af.parse({"points": {"gt": 1}})
    with pytest.raises(af.RecordError, match="points"):
        f.matches({"points": np.str_("5")})
    with pytest.raises(af.RecordError, match="points"):
        f.matches({"points": np.array([1, 2])})


def test_a_frame_to_dict_reads_as_the_frame() -> None:
    frame = pd.DataFrame(
        {
            "points": [1.0, np.nan, 7.0],
            "email": ["a@x.io", None, "c@x.io"],
            "createdAt": pd.to_datetime(["2021-01-01", None, "2022-01-01"], utc=True),
        }
    )
    for where in (
        {"points": None},
        {"NOT": {"points": {"gt": 1}}},
        {"email": None},
        {"NOT": {"createdAt": {"gt": "2021-06-01T00:00:00Z"}}},
    ):
        f = af.parse(where)
        in_memory = [f.matches(r) for r in frame.to_dict("records")]
        assert in_memory == list(f.frame_mask(frame)), where


def test_every_record_shape_of_the_support_matrix_is_run() -> None:
    run = {
        (("list" if kind.element else kind.value), shape)
        for kind in FieldType
        for shape, _, _ in pairs(kind)
    }
    assert run == {(cell.field_type, cell.shape) for cell in RECORD_CELLS}
