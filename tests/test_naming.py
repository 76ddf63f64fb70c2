"""One naming rule on every back-end that reads storage it did not build (`backends/naming.py`).

A service's storage names `createdAt` `created_at`: SQLAlchemy models, Django models, polars,
pandas and Spark frames all try `columns=`, the field's name, then the naming convention,
snake_case by default. Before, `to_sqlalchemy` tried no convention unless asked, frames took no
`naming` at all, and a frame missing a column failed when the query ran (polars'
`ColumnNotFoundError`, pandas without the closest column): a filter that found its columns
on one back-end did not on another.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pandas as pd
import polars as pl
import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

import audiencefilter as af

AT = datetime(2026, 1, 1, tzinfo=UTC)
ROWS = [
    {"id": 1, "first_name": "Ann", "created_at": datetime(2026, 2, 1, tzinfo=UTC)},
    {"id": 2, "first_name": "Bob", "created_at": datetime(2026, 2, 1, tzinfo=UTC)},
    {"id": 3, "first_name": "Ann", "created_at": datetime(2025, 2, 1, tzinfo=UTC)},
]
WHERE = {"firstName": "Ann", "createdAt": {"gte": AT.isoformat()}}
MATCHED = [1]


class _Base(DeclarativeBase):
    pass


class Person(_Base):
    __tablename__ = "people"
    id: Mapped[int] = mapped_column(primary_key=True)
    first_name: Mapped[str]
    created_at: Mapped[datetime] = mapped_column(DateTime(timezone=True))


_CORE = Table(
    "people",
    MetaData(),
    Column("id", Integer, primary_key=True),
    Column("first_name", String),
    Column("created_at", DateTime(timezone=True)),
)


def _sqlalchemy(target: Any, **options: Any) -> list[int]:
    engine = create_engine("sqlite://")
    _CORE.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(_CORE.insert(), ROWS)
        column = target.id if hasattr(target, "id") else target.c.id
        expression = af.parse(WHERE).to_sqlalchemy(target, **options)
        found = connection.execute(select(column).where(expression).order_by(column))
        return [row[0] for row in found]


def _polars(**options: Any) -> list[int]:
    frame = pl.DataFrame(ROWS)
    return list(af.parse(WHERE).select_frame(frame, **options)["id"])


def _polars_lazy(**options: Any) -> list[int]:
    frame = pl.DataFrame(ROWS).lazy()
    return list(af.parse(WHERE).select_frame(frame, **options).collect()["id"])


def _pandas(**options: Any) -> list[int]:
    frame = pd.DataFrame(ROWS)
    return list(af.parse(WHERE).select_frame(frame, **options)["id"])


def _pandas_mask(**options: Any) -> list[int]:
    frame = pd.DataFrame(ROWS)
    return list(frame[af.parse(WHERE).frame_mask(frame, **options)]["id"])


WAYS = {
    "to_sqlalchemy(ORM class)": lambda **o: _sqlalchemy(Person, **o),
    "to_sqlalchemy(Core table)": lambda **o: _sqlalchemy(_CORE, **o),
    "polars select_frame": _polars,
    "polars LazyFrame select_frame": _polars_lazy,
    "pandas select_frame": _pandas,
    "pandas frame_mask": _pandas_mask,
}


@pytest.mark.parametrize("way", WAYS)
def test_snake_case_columns_are_found_by_default(way: str) -> None:
    assert WAYS[way]() == MATCHED


@pytest.mark.parametrize("way", WAYS)
def test_a_callable_convention_is_taken(way: str) -> None:
    assert WAYS[way](naming=af.snake_case) == MATCHED


@pytest.mark.parametrize("way", WAYS)
def test_without_a_convention_the_error_names_the_closest_column_and_both_fixes(way: str) -> None:
    with pytest.raises((ValueError, af.FrameError)) as caught:
        WAYS[way](naming=None)
    message = str(caught.value)
    pairs = (("createdAt", "created_at"), ("firstName", "first_name"))
    field, column = next((f, c) for f, c in pairs if f in message)
    assert f"{field!r} (tried [{field!r}])" in message
    assert f"did you mean {column!r}? Pass columns={{{field!r}: {column!r}}}" in message
    assert 'naming="snake_case"' in message


@pytest.mark.parametrize("way", WAYS)
def test_a_column_spelled_out_is_the_only_one_tried(way: str) -> None:
    """`columns=` names the column; no convention stands in for a name given wrong."""
    assert WAYS[way](columns={"createdAt": "created_at"}) == MATCHED
    with pytest.raises((ValueError, af.FrameError)) as caught:
        WAYS[way](columns={"createdAt": "createdOn"})
    assert "'createdAt' (tried ['createdOn'])" in str(caught.value)


@pytest.mark.parametrize(
    "frame", [pl.DataFrame(ROWS), pd.DataFrame(ROWS)], ids=["polars", "pandas"]
)
def test_a_frame_missing_a_column_is_refused_before_the_query_runs(frame: Any) -> None:
    """No column is close: the error lists the frame's columns and the `columns=` to write."""
    flt = af.parse({"points": {"gt": 1}})
    with pytest.raises(af.FrameError) as caught:
        flt.select_frame(frame)
    message = str(caught.value)
    assert "'points' (tried ['points'])" in message
    assert "it has ['created_at', 'first_name', 'id']; pass columns={'points': <column>}" in message


def test_an_unknown_convention_is_named() -> None:
    with pytest.raises(ValueError, match="unknown naming 'kebab'"):
        _polars(naming="kebab")
