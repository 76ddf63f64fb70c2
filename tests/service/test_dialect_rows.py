"""`db/dialects`' set parameters give back exactly the rows and texts they were handed, on
SQLite and PostgreSQL: a table of rows from one parameter per column (`unpacked_rows_named`,
each column's texts joined by a separator on PostgreSQL), ids with their places (`unpacked`),
and a text picked by its place from texts bound once (`picked_text`, the payloads of a write's
events: one JSON array on SQLite, the texts joined by the separator on PostgreSQL, split once per
statement). Payloads hold what a text array would have had to escape: quotes,
backslashes, braces, commas, newlines, the separator itself and text outside ASCII."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path

import pytest
from sqlalchemy import bindparam, select

from audiencefilter.service.db import dialects
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.models import Contact

from .conftest import settings_on, url_settings

PAYLOADS = [
    json.dumps({"audience": {"id": "aud_1", "name": 'say "hi", {then} \\ go'}}),
    json.dumps({"audience": {"name": "Ünïcödé \u2603 \x1f and\nnewline"}}, ensure_ascii=False),
    "[]",
    '"a lone string, with a comma"',
]
ROWS: list[tuple[str, str, str | None, str]] = [
    ("audience.entered", "con_a", "aud_1", "0"),
    ("audience.left", "con_b", "aud_2", "3"),
    ("audience.entered", "con_c", "aud_1", "1"),
    ("audience.entered", "con_a", "aud_3", "2"),
    ("audience.entered", "con_d", "aud_1", "0"),
    ("contact.updated", "con_e", None, "2"),  # a contact's own event: no audience, a NULL cell
]
NAMES = ("type", "contact_id", "audience_id", "payload_at")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def database(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    engine = make_engine(settings_on(request, tmp_path / "rows.db"))
    try:
        yield Database(engine)
    finally:
        engine.dispose()


def test_rows_and_picked_texts_come_back_as_they_were_sent(database: Database) -> None:
    dialect = database.engine.dialect.name
    table = dialects.unpacked_rows_named(dialect, NAMES, "t")
    picked = dialects.picked_text(dialect, "texts", table.c.payload_at)
    statement = select(*(table.c[name] for name in NAMES[:3]), picked, table.c.ordinal)
    parameters = dialects.rows_parameters(dialect, NAMES, ROWS, "t")
    parameters["texts"] = dialects.texts_parameter(dialect, PAYLOADS)
    with database.engine.connect() as connection:
        found = connection.execute(statement.order_by(table.c.ordinal), parameters).all()
    expected = [(t, c, a, PAYLOADS[int(at)], n) for n, (t, c, a, at) in enumerate(ROWS, 1)]
    assert [tuple(row) for row in found] == expected


@pytest.mark.parametrize("ids", [[], ["con_only"], [f"con_{n}" for n in range(2500)]])
def test_ids_come_back_with_their_places(database: Database, ids: list[str]) -> None:
    table = dialects.unpacked(database.engine.dialect.name, ids)
    with database.engine.connect() as connection:
        found = connection.execute(select(table.c.value, table.c.ordinal)).all()
    assert sorted(found, key=lambda row: row[1]) == [(v, n) for n, v in enumerate(ids, 1)]


@pytest.mark.parametrize("texts", [["con_a", "con\x1fb"], ["con_a", ""], ["con_a", "con\x1e"]])
def test_a_text_the_separator_could_not_carry_is_refused_before_any_statement(
    texts: list[str],
) -> None:
    """The separator would split a text, an empty text would vanish, and the mark of a NULL
    cell (None, which is carried) would read back as NULL: each is refused on PostgreSQL."""
    rows = [(text,) for text in texts]
    with pytest.raises((ValueError, TypeError)):
        dialects.rows_parameters("postgresql", ("value",), rows, "k")


@pytest.mark.parametrize("texts", [['{"a": "x\x1fy"}'], [""]])
def test_a_picked_text_the_separator_could_not_carry_is_refused(texts: list[str]) -> None:
    with pytest.raises(ValueError):
        dialects.texts_parameter("postgresql", texts)
    assert json.loads(dialects.texts_parameter("sqlite", texts)) == texts


@pytest.mark.postgres
def test_the_picked_texts_are_split_once_per_statement_not_per_row(
    pg_database: Callable[[], str],
) -> None:
    """PostgreSQL parsed a JSON array of payloads again for every row that picked one (`->>`
    on `json`); the texts are now split by an init plan, run once before the rows."""
    engine = make_engine(url_settings(pg_database()))
    try:
        table = dialects.unpacked_rows_named("postgresql", NAMES, "t")
        picked = dialects.picked_text("postgresql", "texts", table.c.payload_at)
        parameters = dialects.rows_parameters("postgresql", NAMES, ROWS, "t")
        parameters["texts"] = dialects.texts_parameter("postgresql", PAYLOADS)
        statement = select(picked).compile(engine)
        with engine.connect() as connection:
            bound = {**statement.params, **parameters}
            plan = connection.exec_driver_sql(f"EXPLAIN {statement}", bound).scalars().all()
    finally:
        engine.dispose()
    assert any("InitPlan" in line for line in plan), plan


@pytest.mark.parametrize(
    ("instant", "expected"),
    [
        ("2025-01-01T00:00:00", False),  # the first itself
        ("2025-01-05T23:59:59", False),  # a second before the middle
        ("2025-01-06T00:00:01", True),  # a second after it
        ("2025-01-11T00:00:00", True),  # the last itself
        ("2026-01-01T00:00:00", True),  # beyond the last
    ],
)
def test_past_middle_tells_the_later_half_of_two_instants(
    database: Database, instant: str, expected: bool
) -> None:
    """`past_middle`, which chooses the side a position's ties are counted from
    (`db/queries.ranked_beyond`), on date-times as each database stores them: text on SQLite,
    `timestamptz` on PostgreSQL. Only the cost depends on it, so it is checked here alone."""
    dialect = database.engine.dialect.name
    column = Contact.__table__.c.created_at
    first, middle_side, last = (
        bindparam(name, datetime.fromisoformat(value + "+00:00"), type_=column.type)
        for name, value in (("first", "2025-01-01T00:00:00"), ("at", instant),
                            ("last", "2025-01-11T00:00:00"))
    )  # fmt: skip
    with database.engine.connect() as connection:
        found = connection.execute(
            select(dialects.past_middle(dialect, middle_side, first, last))
        ).scalar_one()
    assert bool(found) is expected
