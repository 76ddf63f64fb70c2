"""What `to_sqlalchemy` is given is what it builds from: a `columns` or `relations` mapping, or
a mapping target, changed in place between two calls gives the expression of what it holds
now, not the one kept from before (`Filter._sqlalchemy_memo`); a relation's relationship given
in `columns` as the attribute itself (`{"actions": Person.events}`) is followed, as its name
is, which the error for a missing relationship asks for.
"""

from __future__ import annotations

from sqlalchemy import Column, ForeignKey, Integer, MetaData, String, Table
from sqlalchemy.dialects import sqlite
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship

import audiencefilter as af

SCHEMA = af.Schema.of(points="number", nick="string")
POINTS = af.parse({"points": {"gt": 1}}, SCHEMA)

TABLE = Table(
    "given_contacts",
    MetaData(),
    Column("id", String, primary_key=True),
    Column("score", Integer),
    Column("level", Integer),
)
ACTIONS = Table(
    "given_actions",
    TABLE.metadata,
    Column("id", String, primary_key=True),
    Column("contact_id", String),
    Column("name", String),
)
OTHER_ACTIONS = Table(
    "given_other_actions",
    TABLE.metadata,
    Column("id", String, primary_key=True),
    Column("contact_id", String),
    Column("name", String),
)


def _sql(expression: object) -> str:
    return str(expression.compile(dialect=sqlite.dialect()))  # type: ignore[attr-defined]


def test_a_columns_mapping_changed_in_place_is_read_again() -> None:
    columns = {"points": "score"}
    assert "score" in _sql(POINTS.to_sqlalchemy(TABLE, columns=columns))
    columns["points"] = "level"
    assert "level" in _sql(POINTS.to_sqlalchemy(TABLE, columns=columns))
    columns["points"] = TABLE.c.score  # an expression in place of a name
    assert "score" in _sql(POINTS.to_sqlalchemy(TABLE, columns=columns))


def test_a_mapping_target_changed_in_place_is_read_again() -> None:
    target = {"points": TABLE.c.score}
    assert "score" in _sql(POINTS.to_sqlalchemy(target))
    target["points"] = TABLE.c.level
    assert "level" in _sql(POINTS.to_sqlalchemy(target))


def test_a_relations_mapping_changed_in_place_is_read_again() -> None:
    schema = af.CONTACT
    flt = af.parse_text('actions some (name = "buy")')
    relations = {"actions": ACTIONS}
    columns = {"actions.sub_id": "contact_id"}
    first = _sql(flt.to_sqlalchemy(TABLE, relations=relations, columns=columns))
    assert "given_actions" in first
    relations["actions"] = OTHER_ACTIONS
    second = _sql(flt.to_sqlalchemy(TABLE, relations=relations, columns=columns))
    assert "given_other_actions" in second
    assert schema is flt.schema


class Base(DeclarativeBase):
    pass


class Person(Base):
    __tablename__ = "given_people"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    events: Mapped[list[Event]] = relationship()


class Event(Base):
    __tablename__ = "given_events"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    person_id: Mapped[str] = mapped_column(ForeignKey("given_people.id"))
    name: Mapped[str | None] = mapped_column(String(255))


def test_a_relationship_given_as_its_attribute_is_followed() -> None:
    flt = af.parse_text('actions some (name = "buy")')
    by_name = _sql(flt.to_sqlalchemy(Person, columns={"actions": "events"}))
    by_attribute = _sql(flt.to_sqlalchemy(Person, columns={"actions": Person.events}))
    assert "given_events" in by_attribute
    assert by_attribute == by_name
