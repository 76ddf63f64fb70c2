"""`to_sqlalchemy` on the models of a typical FastAPI + SQLAlchemy service, as they are.

The models are declarative and snake_case (`Subscriber.created_at`), the actions table holds
`sub_id`, a foreign key reached through `relationship()`: the filter finds everything with
`naming="snake_case"` alone. Over every conformance case of the contact schema the members
are the expected ones (those memory selects), on SQLite and PostgreSQL, in sync code and with
an `AsyncSession` (psycopg's async driver). Errors name the missing attribute and the fix.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Iterator
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Engine,
    ForeignKey,
    String,
    Table,
    create_engine,
    delete,
    select,
)
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.ext.hybrid import hybrid_property
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship
from sqlalchemy.pool import StaticPool
from sqlalchemy.sql.elements import ColumnElement

import audiencefilter as af
from audiencefilter.language.values import parse_datetime, record_datetime

CONFORMANCE = Path(__file__).parent / "conformance"
JSON_TYPE = JSON(none_as_null=True).with_variant(JSONB(none_as_null=True), "postgresql")
STAMP = DateTime(timezone=True)


class Base(DeclarativeBase):
    pass


class Subscriber(Base):
    """A service's contact model: snake_case columns, relations by foreign key."""

    __tablename__ = "subscribers"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    email: Mapped[str | None] = mapped_column(String(255))
    first_name: Mapped[str | None] = mapped_column(String(255))
    last_name: Mapped[str | None] = mapped_column(String(255))
    company: Mapped[str | None] = mapped_column(String(255))
    country: Mapped[str | None] = mapped_column(String(255))
    city: Mapped[str | None] = mapped_column(String(255))
    points: Mapped[int | None] = mapped_column(BigInteger)
    referrals: Mapped[int | None] = mapped_column(BigInteger)
    is_verified: Mapped[bool | None] = mapped_column(Boolean)
    unsubscribed: Mapped[bool | None] = mapped_column(Boolean)
    created_at: Mapped[datetime | None] = mapped_column(STAMP)
    data: Mapped[Any] = mapped_column(JSON_TYPE, nullable=True)
    actions: Mapped[list[Action]] = relationship(back_populates="subscriber")
    audiences: Mapped[list[Membership]] = relationship()


class Action(Base):
    __tablename__ = "actions"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    sub_id: Mapped[str] = mapped_column(ForeignKey("subscribers.id"))
    name: Mapped[str | None] = mapped_column(String(255))
    increase: Mapped[int | None] = mapped_column(BigInteger)
    created_at: Mapped[datetime | None] = mapped_column(STAMP)
    subscriber: Mapped[Subscriber] = relationship(back_populates="actions")


class Membership(Base):
    __tablename__ = "subscriber_audiences"
    pk: Mapped[int] = mapped_column(primary_key=True)
    subscriber_id: Mapped[str] = mapped_column(ForeignKey("subscribers.id"))
    id: Mapped[str | None] = mapped_column(String(64))
    name: Mapped[str | None] = mapped_column(String(255))
    mode: Mapped[str | None] = mapped_column(String(32))


def _stamp(value: Any) -> datetime | None:
    return None if value is None else record_datetime(value)


def _rows(records: list[dict[str, Any]]) -> list[Base]:
    """The ORM objects of conformance records (contact schema)."""
    rows: list[Base] = []
    for record in records:
        subscriber = Subscriber(
            id=record["id"],
            **{
                af.snake_case(name): record.get(name)
                for name in ("email", "firstName", "lastName", "company", "country", "city")
                + ("points", "referrals", "isVerified", "unsubscribed", "data")
            },
            created_at=_stamp(record.get("createdAt")),
        )
        for action in record.get("actions") or ():
            subscriber.actions.append(
                Action(
                    id=action["id"],
                    name=action.get("name"),
                    increase=action.get("increase"),
                    created_at=_stamp(action.get("createdAt")),
                )
            )
        for audience in record.get("audiences") or ():
            subscriber.audiences.append(Membership(**audience))
        rows.append(subscriber)
    return rows


def _contact_suites() -> list[dict[str, Any]]:
    suites = [json.loads(p.read_text("utf-8")) for p in sorted(CONFORMANCE.glob("*.json"))]
    return [s for s in suites if "schema" not in s]


def _refused(suite: dict[str, Any], case: dict[str, Any], database: str) -> bool:
    return database in suite.get("refused", []) + case.get("refused", [])


def _load(engine: Engine, records: list[dict[str, Any]]) -> None:
    with Session(engine) as session, session.begin():
        for model in (Action, Membership, Subscriber):
            session.execute(delete(model))
        session.add_all(_rows(records))


def _run_suites(engine: Engine, database: str) -> tuple[int, int, list[str]]:
    """Every contact conformance case through the ORM model: (answered, refused, mismatches)."""
    answered, refused, wrong = 0, 0, []
    for suite in _contact_suites():
        _load(engine, suite["given"])
        for case in (c for c in suite["cases"] if "matches" in c):
            flt = af.parse(case.get("where_json", case.get("where")))
            when = case.get("now", suite.get("now"))
            now = parse_datetime(when) if when else None
            try:
                expression = flt.to_sqlalchemy(Subscriber, now=now, naming="snake_case")
                with Session(engine) as session:
                    ids = set(session.scalars(select(Subscriber.id).where(expression)))
            except af.FilterError:
                if _refused(suite, case, database):
                    refused += 1
                    continue
                raise
            answered += 1
            if _refused(suite, case, database) or ids != set(case["matches"]):
                wrong.append(f"{case.get('name')}: {sorted(ids)} != {sorted(case['matches'])}")
    return answered, refused, wrong


@pytest.fixture(scope="module")
def sqlite_engine() -> Iterator[Engine]:
    engine = create_engine("sqlite://", poolclass=StaticPool)
    af.register_sqlite_functions(engine)
    Base.metadata.create_all(engine)
    yield engine
    engine.dispose()


@pytest.fixture(scope="module")
def pg_engine(pg_database: Callable[[], str]) -> Iterator[Engine]:
    engine = create_engine(pg_database())
    Base.metadata.create_all(engine)
    yield engine
    engine.dispose()


def test_service_models_select_the_conformance_members_on_sqlite(sqlite_engine: Engine) -> None:
    answered, _, wrong = _run_suites(sqlite_engine, "sqlite")
    assert answered > 300 and wrong == []


@pytest.mark.postgres
def test_service_models_select_the_conformance_members_on_postgresql(pg_engine: Engine) -> None:
    answered, _, wrong = _run_suites(pg_engine, "postgresql")
    assert answered > 300 and wrong == []


RECORDS: list[dict[str, Any]] = [
    {
        "id": "c1",
        "createdAt": "2026-01-05T10:00:00Z",
        "actions": [
            {"id": "a1", "name": "purchase", "increase": 5, "createdAt": "2026-01-10T00:00:00Z"},
            {"id": "a2", "name": "purchase", "increase": 7, "createdAt": "2026-01-11T00:00:00Z"},
        ],
    },
    {"id": "c2", "createdAt": "2025-06-01T00:00:00Z", "actions": []},
]
PURCHASED = af.parse_text('createdAt >= 2026-01-01 and count(actions where name = "purchase") >= 2')


@pytest.mark.postgres
def test_async_session_selects_through_the_models(pg_database: Callable[[], str]) -> None:
    from sqlalchemy.ext.asyncio import AsyncSession, create_async_engine

    url = pg_database().replace("postgresql+psycopg://", "postgresql+psycopg_async://")

    async def members() -> set[str]:
        engine = create_async_engine(url)
        try:
            async with engine.begin() as connection:
                await connection.run_sync(Base.metadata.create_all)
            async with AsyncSession(engine) as session, session.begin():
                session.add_all(_rows(RECORDS))
            statement = select(Subscriber.id).where(
                PURCHASED.to_sqlalchemy(Subscriber, naming="snake_case")
            )
            async with AsyncSession(engine) as session:
                return set((await session.scalars(statement)).all())
        finally:
            await engine.dispose()

    assert asyncio.run(members()) == {"c1"}


def test_a_missing_field_names_the_closest_attribute_and_the_fix() -> None:
    with pytest.raises(ValueError) as caught:
        PURCHASED.to_sqlalchemy(Subscriber, naming=None)
    message = str(caught.value)
    assert "Subscriber has no column for field 'createdAt' (tried ['createdAt'])" in message
    assert "did you mean 'created_at'" in message
    assert "columns={'createdAt': 'created_at'}" in message
    assert 'naming="snake_case"' in message


def test_a_missing_related_field_is_keyed_by_its_path() -> None:
    flt = af.parse_text("actions some (increase > 1)")
    with pytest.raises(ValueError, match=r"Action\)? has no column for field 'actions.increase'"):
        flt.to_sqlalchemy(Subscriber, columns={"actions.increase": "amount"})


def test_columns_name_attributes_and_take_expressions(sqlite_engine: Engine) -> None:
    _load(sqlite_engine, RECORDS)
    columns = {"createdAt": "created_at", "actions.name": Action.name}
    expression = PURCHASED.to_sqlalchemy(Subscriber, columns=columns, naming=str.lower)
    with Session(sqlite_engine) as session:
        assert set(session.scalars(select(Subscriber.id).where(expression))) == {"c1"}


def test_a_model_without_the_relationship_says_what_to_give() -> None:
    class Plain(Base):
        __tablename__ = "plain_contacts"
        id: Mapped[str] = mapped_column(String(64), primary_key=True)
        created_at: Mapped[datetime | None] = mapped_column(STAMP)

    with pytest.raises(ValueError) as caught:
        PURCHASED.to_sqlalchemy(Plain, naming="snake_case")
    message = str(caught.value)
    assert "Plain has no relationship for relation 'actions'" in message
    assert "relations={'actions': table_or_model}" in message


def test_the_models_tables_and_a_model_given_as_relation(sqlite_engine: Engine) -> None:
    _load(sqlite_engine, RECORDS)
    table = Subscriber.__table__
    assert isinstance(table, Table)
    for related in (Action, Action.__table__):
        expression = PURCHASED.to_sqlalchemy(
            table, naming="snake_case", relations={"actions": related}
        )
        with Session(sqlite_engine) as session:
            assert set(session.scalars(select(table.c.id).where(expression))) == {"c1"}


def test_a_relation_on_a_bare_table_says_what_to_give() -> None:
    with pytest.raises(ValueError, match=r"relations=\{'actions': table_or_model\}"):
        PURCHASED.to_sqlalchemy(Subscriber.__table__, naming="snake_case")


def test_a_relation_given_as_something_else_is_named() -> None:
    with pytest.raises(ValueError, match="neither a table nor an ORM class"):
        PURCHASED.to_sqlalchemy(Subscriber, naming="snake_case", relations={"actions": "x"})


def test_an_unknown_naming_is_named() -> None:
    with pytest.raises(ValueError, match="unknown naming 'kebab'"):
        PURCHASED.to_sqlalchemy(Subscriber, naming="kebab")


@pytest.mark.parametrize(
    ("name", "snake"),
    [("createdAt", "created_at"), ("userID", "user_id"), ("HTTPCode", "http_code"), ("a", "a")],
)
def test_snake_case_splits_words(name: str, snake: str) -> None:
    assert af.snake_case(name) == snake


# A computed field: the schema's `fullName` and `score` are hybrid properties of the model.

PEOPLE = af.Schema.from_mapping({"fullName": "string", "score": "number"})


class Person(Base):
    __tablename__ = "people"
    id: Mapped[str] = mapped_column(String(64), primary_key=True)
    first_name: Mapped[str | None] = mapped_column(String(255))
    last_name: Mapped[str | None] = mapped_column(String(255))
    points: Mapped[int | None] = mapped_column(BigInteger)
    referrals: Mapped[int | None] = mapped_column(BigInteger)
    shown: Mapped[str | None] = mapped_column(String(255))

    @hybrid_property
    def full_name(self) -> str | None:
        if self.first_name is None or self.last_name is None:
            return None
        return f"{self.first_name} {self.last_name}"

    @full_name.inplace.expression
    @classmethod
    def _full_name(cls) -> ColumnElement[str | None]:
        return cls.first_name + " " + cls.last_name

    @hybrid_property
    def score(self) -> int | None:
        if self.points is None or self.referrals is None:
            return None
        return self.points + 10 * self.referrals

    @property
    def display(self) -> str:
        return self.shown or ""


PEOPLE_ROWS: list[dict[str, Any]] = [
    {"id": "p1", "first_name": "Ada", "last_name": "Lovelace", "points": 5, "referrals": 2},
    {"id": "p2", "first_name": "Alan", "last_name": "Turing", "points": 50, "referrals": 0},
    {"id": "p3", "first_name": "Grace", "last_name": None, "points": None, "referrals": 1},
]
PEOPLE_FILTERS = [
    'fullName starts with "A"',
    'fullName contains "ing" or score > 20',
    "score >= 25 and score <= 50",
    "fullName = null",
    'not (fullName ends with "lace")',
    "score in [25, 50]",
]


@pytest.mark.parametrize("text", PEOPLE_FILTERS)
def test_hybrid_properties_stand_for_computed_fields(sqlite_engine: Engine, text: str) -> None:
    Base.metadata.tables["people"].create(sqlite_engine, checkfirst=True)
    people = [Person(**row) for row in PEOPLE_ROWS]
    records = [{"id": p.id, "fullName": p.full_name, "score": p.score} for p in people]
    with Session(sqlite_engine) as session, session.begin():
        session.execute(delete(Person))
        session.add_all(people)
    flt = af.parse_text(text, PEOPLE)
    expected = {r["id"] for r in records if af.compile(flt)(r)}
    expression = flt.to_sqlalchemy(Person, naming="snake_case")
    with Session(sqlite_engine) as session:
        assert set(session.scalars(select(Person.id).where(expression))) == expected


def test_a_python_property_is_no_column() -> None:
    flt = af.parse_text('display = "x"', af.Schema.from_mapping({"display": "string"}))
    with pytest.raises(ValueError, match="Person.display is property.*hybrid_property"):
        flt.to_sqlalchemy(Person)
