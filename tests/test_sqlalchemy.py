"""Unit tests of the SQLAlchemy back-end: targets (table, ORM class, alias, mapping), composition
with other clauses, statement caching, rendering on other dialects, and the SQLite `lower()`
helper. Agreement with memory on real engines is the job of the conformance suite."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Engine,
    MetaData,
    String,
    Table,
    create_engine,
    select,
)
from sqlalchemy.dialects import mssql, postgresql, sqlite
from sqlalchemy.engine.default import CacheStats
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, aliased, mapped_column
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from audiencefilter.backends.sql.sqlalchemy import ExpressionBuilder
from audiencefilter.backends.sql.sqlite_functions import (
    register_unicode_lower,
    unicode_lower,
)
from audiencefilter.language.visitor import missing_handlers


class Base(DeclarativeBase):
    pass


class Contact(Base):
    __tablename__ = "contacts"

    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    listId: Mapped[str] = mapped_column("list_id", String(16))
    email: Mapped[str | None] = mapped_column(String(255))
    firstName: Mapped[str | None] = mapped_column("first_name", String(255))
    points: Mapped[int | None] = mapped_column(BigInteger)
    createdAt: Mapped[datetime | None] = mapped_column("created_at", DateTime(timezone=True))


ROWS = [
    dict(id="c1", listId="l1", email="ann@acme.com", firstName="Élodie", points=10),
    dict(id="c2", listId="l1", email="bob@ACME.com", firstName="élodie", points=30),
    dict(id="c3", listId="l1", email="cy@other.org", firstName=None, points=20),
    dict(id="c4", listId="l2", email="dee@acme.com", firstName="ÉLODIE", points=40),
]


@pytest.fixture(scope="module")
def engine() -> Iterator[Engine]:
    engine = create_engine("sqlite://", poolclass=StaticPool)
    af.register_sqlite_functions(engine)
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Contact(**row) for row in ROWS])
        session.commit()
    yield engine
    engine.dispose()


def _ids(engine: Engine, statement: Any) -> list[str]:
    with Session(engine) as session:
        return [row.id for row in session.execute(statement)]


def test_expression_builder_covers_every_node_kind() -> None:
    assert missing_handlers(ExpressionBuilder) == []


def test_orm_class_composes_with_other_conditions_order_and_limit(engine: Engine) -> None:
    flt = af.parse({"email": {"contains": "ACME"}})
    statement = (
        select(Contact.id)
        .where(Contact.listId == "l1", flt.to_sqlalchemy(Contact))
        .order_by(Contact.points.desc())
        .limit(1)
    )
    assert _ids(engine, statement) == ["c2"]


def test_aliased_entity_and_mapping_targets(engine: Engine) -> None:
    flt = af.parse({"firstName": {"equals": "élodie", "mode": "insensitive"}, "points": {"lt": 35}})
    alias = aliased(Contact)
    assert sorted(_ids(engine, select(alias.id).where(flt.to_sqlalchemy(alias)))) == ["c1", "c2"]
    table = Contact.__table__
    mapping = {"firstName": table.c.first_name, "points": table.c.points}
    statement = select(table.c.id).where(flt.to_sqlalchemy(mapping))
    assert sorted(_ids(engine, statement)) == ["c1", "c2"]


def test_table_columns_are_found_by_key() -> None:
    table = Table("t", MetaData(), Column("created_at", DateTime(timezone=True), key="createdAt"))
    sql = str(af.parse({"createdAt": None}).to_sqlalchemy(table).compile())
    assert sql == "t.created_at IS NULL"


def test_a_missing_column_is_named() -> None:
    table = Table("t", MetaData(), Column("email", String))
    with pytest.raises(ValueError, match="has no column for field 'points'"):
        af.parse({"points": 1}).to_sqlalchemy(table)
    with pytest.raises(ValueError, match="has no column for field 'city'"):
        af.parse({"city": "x"}).to_sqlalchemy(Contact)


def test_statements_are_cached_and_rebound(engine: Engine) -> None:
    """Same shape, other values: the cached SQL is reused with the new values."""
    cases = [
        ({"email": {"endsWith": ".com"}, "points": {"gte": 20}}, ["c2", "c4"]),
        ({"email": {"endsWith": ".org"}, "points": {"gte": 10}}, ["c3"]),
        ({"email": {"endsWith": "e.com"}, "points": {"gte": 0}}, ["c1", "c4"]),
    ]
    hits = []
    with engine.connect() as connection:
        for where, expected in cases:
            statement = select(Contact.id).where(af.parse(where).to_sqlalchemy(Contact))
            result = connection.execute(statement.order_by(Contact.id))
            assert [row.id for row in result] == expected
            hits.append(result.context.cache_hit)
    # The second has the same shape as the first (".com" and ".org" are 4 bytes); the third's
    # suffix is longer, which changes the SQL on SQLite, so it is compiled anew.
    assert hits == [CacheStats.CACHE_MISS, CacheStats.CACHE_HIT, CacheStats.CACHE_MISS]


def test_naive_datetime_columns_receive_naive_utc() -> None:
    table = Table("events", MetaData(), Column("id", String), Column("at", DateTime()))
    engine = create_engine("sqlite://", poolclass=StaticPool)
    table.metadata.create_all(engine)
    with engine.begin() as connection:
        connection.execute(table.insert(), [{"id": "e1", "at": datetime(2025, 1, 1, 12)}])
    flt = af.parse({"at": {"gte": "2025-01-01T13:00:00+01:00"}}, af.Schema.of(at="datetime"))
    with engine.connect() as connection:
        assert connection.scalars(select(table.c.id).where(flt.to_sqlalchemy(table))).all() == [
            "e1"
        ]
    engine.dispose()


def test_literal_binds_render_a_readable_statement() -> None:
    flt = af.parse({"email": {"startsWith": "a_"}, "points": {"lt": 2.5}})
    expression = flt.to_sqlalchemy(Contact)
    rendered = str(
        expression.compile(dialect=postgresql.dialect(), compile_kwargs={"literal_binds": True})
    )
    # SQLAlchemy doubles `%` for the driver's paramstyle and groups the custom construct.
    assert rendered == (
        "(contacts.email COLLATE \"default\" LIKE 'a!_%%' ESCAPE '!') AND contacts.points < 2.5"
    )
    rendered = str(
        expression.compile(dialect=sqlite.dialect(), compile_kwargs={"literal_binds": True})
    )
    assert rendered == "(contacts.email GLOB 'a_*') AND contacts.points < 2.5"


def test_other_sqlalchemy_dialects_get_standard_sql() -> None:
    flt = af.parse({"email": {"contains": "X"}})
    sql = str(flt.to_sqlalchemy(Contact).compile(dialect=mssql.dialect()))
    assert sql == "lower(contacts.email) LIKE :param_1 ESCAPE '!'"


def test_negated_patterns_are_parenthesized() -> None:
    flt = af.parse({"email": {"not": {"endsWith": "x"}}})
    sql = str(flt.to_sqlalchemy(Contact).compile(dialect=sqlite.dialect()))
    assert sql.startswith("NOT (substr(") and sql.endswith(")")


def test_empty_lists_are_constants() -> None:
    table = Contact.__table__
    assert str(af.parse({"points": {"in": []}}).to_sqlalchemy(table).compile()) == "false"
    assert str(af.parse({"points": {"notIn": []}}).to_sqlalchemy(table).compile()) == "true"


def test_unicode_lower_on_a_sqlite3_connection() -> None:
    connection = sqlite3.connect(":memory:")
    # SQLite's own lower() folds ASCII only.
    assert connection.execute("SELECT lower('ÉLODIE')").fetchone() == ("Élodie",)
    af.register_sqlite_functions(connection)
    folded = connection.execute("SELECT lower('ÉLODIE'), lower('İ'), lower(NULL), lower(5)")
    assert folded.fetchone() == ("élodie", "i\u0307", None, 5)
    connection.close()


def test_unicode_lower_refuses_other_targets() -> None:
    with pytest.raises(TypeError, match="sqlite3 connection or a SQLAlchemy engine"):
        af.register_sqlite_functions("sqlite://")
    duck = create_engine("duckdb:///:memory:")
    with pytest.raises(TypeError, match="on SQLite, not on duckdb"):
        af.register_sqlite_functions(duck)
    duck.dispose()
    assert unicode_lower(b"AB") == b"AB"


def test_engine_created_at_is_compared_as_utc_text(engine: Engine) -> None:
    with Session(engine) as session:
        session.get(Contact, "c1").createdAt = datetime(2025, 1, 1, tzinfo=UTC)  # type: ignore[union-attr]
        session.commit()
    flt = af.parse({"createdAt": {"gte": "2025-01-01T01:00:00+01:00", "lt": "2025-01-01T00:00:01"}})
    assert _ids(engine, select(Contact.id).where(flt.to_sqlalchemy(Contact))) == ["c1"]


def test_the_former_name_still_registers_with_a_deprecation_warning() -> None:
    connection = sqlite3.connect(":memory:")
    with pytest.warns(DeprecationWarning, match="register_sqlite_functions"):
        register_unicode_lower(connection)
    assert connection.execute("SELECT lower('ÉLODIE')").fetchone() == ("élodie",)
    connection.close()


def test_an_expression_is_built_once_per_target_and_instant(engine: Engine) -> None:
    """A service judging the same filters on every write asks for the same expression again:
    it is kept per target, relations and the instants of the filter's relative values, so a
    later `now` that moves a duration gets a new expression, with the new answer."""
    plain = af.parse({"points": {"gte": 20}})
    assert plain.to_sqlalchemy(Contact) is plain.to_sqlalchemy(Contact)
    assert plain.to_sqlalchemy(Contact) is not plain.to_sqlalchemy(Contact.__table__)
    with Session(engine) as session:
        session.query(Contact).filter(Contact.id == "c1").update(
            {"createdAt": datetime(2025, 1, 1, tzinfo=UTC)}
        )
        session.commit()
    recent = af.parse({"createdAt": {"gte": {"ago": "P1D"}}})
    before, after = datetime(2025, 1, 1, 12, tzinfo=UTC), datetime(2025, 1, 3, tzinfo=UTC)
    first = recent.to_sqlalchemy(Contact, now=before)
    assert recent.to_sqlalchemy(Contact, now=before) is first
    later = recent.to_sqlalchemy(Contact, now=after)
    assert later is not first
    assert _ids(engine, select(Contact.id).where(first)) == ["c1"]
    assert _ids(engine, select(Contact.id).where(later)) == []
    assert _ids(engine, select(Contact.id).where(recent.to_sqlalchemy(Contact, now=before))) == [
        "c1"
    ]
    with Session(engine) as session:
        session.query(Contact).filter(Contact.id == "c1").update({"createdAt": None})
        session.commit()
