"""Relation conditions on the SQL back-ends, beyond the default schema's `actions`.

Inside a relation every field name reads the related row (docs/semantics-relations.md, "Relations"):
field references, list fields, data paths, JSON arrays and JSON-declared fields included; a
relation nested inside a relation is one more correlated subquery. Each filter runs on every
SQL engine (SQL text, SQL with parameters, SQLAlchemy Core) and must select what memory
selects. The contact table has columns named like the related ones, holding other values,
so reading the wrong row gives another answer.
"""

from __future__ import annotations

import sqlite3
from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import (
    Column,
    ForeignKey,
    Integer,
    String,
    Table,
    create_engine,
    inspect,
    select,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

import audiencefilter as af
from audiencefilter.backends.sql.text import to_sql
from audiencefilter.language.anniversary import MonthDays
from audiencefilter.language.nodes import Aggregated, Quantified
from audiencefilter.language.relations import Aggregate, Quantifier, Relation
from tests.sql_engines import Database, _column_type, _row, database_params, open_database

NOW = datetime(2026, 1, 1, tzinfo=UTC)
LINES = af.Schema.of("line", sku="string", quantity="number", lim="number")
ORDERS = af.Schema.of(
    "order",
    total="number",
    lim="number",
    tags="string[]",
    data="json",
    plan=("string", ("data", "plan")),
).with_relations(Relation("lines", LINES, table="lines", foreign_key="order_id"))
CUSTOMERS = af.Schema.of("customer", email="string", total="number", lim="number", data="json")
SCHEMA = CUSTOMERS.with_relations(
    Relation("orders", ORDERS, table="orders", foreign_key="customer_id")
)

LINE_ROWS = [
    {"id": "l1", "order_id": "o1", "sku": "X", "quantity": 5, "lim": 3},
    {"id": "l2", "order_id": "o1", "sku": "Y", "quantity": 1, "lim": 3},
    {"id": "l3", "order_id": "o2", "sku": "X", "quantity": 1, "lim": 9},
    {"id": "l4", "order_id": "o4", "sku": "Z", "quantity": 7, "lim": 7},
]
ORDER_ROWS = [
    {
        "id": "o1",
        "customer_id": "c1",
        "total": 30,
        "lim": 10,
        "tags": ["gift"],
        "data": {"plan": "pro", "tags": ["a", "b"]},
    },
    {
        "id": "o2",
        "customer_id": "c1",
        "total": 5,
        "lim": 10,
        "tags": ["rush", "gift"],
        "data": {"plan": "free"},
    },
    {"id": "o3", "customer_id": "c2", "total": 8, "lim": 2, "tags": [], "data": {"tags": ["b"]}},
    {"id": "o4", "customer_id": "c3", "total": 1, "lim": 1, "tags": None, "data": None},
]
CUSTOMER_ROWS = [
    {"id": "c1", "email": "a@x.io", "total": 0, "lim": 100, "data": {"plan": "free"}},
    {"id": "c2", "email": "b@x.io", "total": 100, "lim": 0, "data": {"plan": "pro", "tags": ["a"]}},
    {"id": "c3", "email": "c@x.io", "total": 50, "lim": 0, "data": None},
    {"id": "c4", "email": "d@x.io", "total": 9, "lim": 1, "data": {"plan": "pro"}},
]

WHERES: list[dict[str, Any]] = [
    {"orders": {"some": {"total": {"gt": {"_ref": "lim"}}}}},
    {"orders": {"every": {"total": {"gte": {"_ref": "lim"}}}}},
    {"orders": {"where": {"total": {"lt": {"_ref": "lim"}}}, "count": {"gte": 1}}},
    {"orders": {"some": {"tags": {"has": "gift"}}}},
    {"orders": {"none": {"tags": {"isEmpty": True}}}},
    {"orders": {"some": {"data": {"path": ["plan"], "equals": "pro"}}}},
    {"orders": {"some": {"data": {"path": ["tags"], "array_contains": "b"}}}},
    {"orders": {"some": {"plan": "free"}}},
    {"orders": {"some": {"lines": {"some": {"sku": "X"}}}}},
    {"orders": {"some": {"lines": {"some": {"quantity": {"gt": {"_ref": "lim"}}}}}}},
    {"orders": {"every": {"lines": {"none": {"sku": "Y"}}}}},
    {"orders": {"where": {"lines": {"some": {"sku": "X"}}}, "sum": {"total": {"gte": 35}}}},
    {"orders": {"some": {"lines": {"sum": {"quantity": {"gte": 6}}}}}},
]


def _records() -> list[dict[str, Any]]:
    """The customers with their orders and the orders' lines, as memory reads them."""
    records = []
    for customer in CUSTOMER_ROWS:
        orders = []
        for order in ORDER_ROWS:
            if order["customer_id"] == customer["id"]:
                lines = [line for line in LINE_ROWS if line["order_id"] == order["id"]]
                orders.append({**order, "lines": lines})
        records.append({**customer, "orders": orders})
    return records


def _table(database: Database, name: str, schema: af.Schema, rows: list[Any], key: str) -> Table:
    """A table of `schema`'s stored fields, with the foreign key `key` (typed as the contact
    ids are) when given."""
    fields = af.Schema(tuple(f for f in schema.fields if not f.source))
    columns = [Column("id", String(64), primary_key=True)]
    columns += [Column(key, String(64))] if key else []
    columns += [Column(f.name, _column_type(f.type, database.engine)) for f in fields]
    table = Table(name, database.metadata, *columns)
    with database.engine.begin() as connection:
        if inspect(connection).has_table(name):
            table.drop(connection)
        table.create(connection)
    native = database.dialect in ("postgresql", "duckdb")
    stored = [{**_row(r, fields, native), **({key: r[key]} if key else {})} for r in rows]
    with database.engine.begin() as connection:
        connection.execute(table.insert(), stored)
    return table


def _tables(database: Database) -> dict[str, Table]:
    found = {}
    for name, schema, rows, key in (
        ("customers", CUSTOMERS, CUSTOMER_ROWS, ""),
        ("orders", ORDERS, ORDER_ROWS, "customer_id"),
        ("lines", LINES, LINE_ROWS, "order_id"),
    ):
        table_name = f"af_rel_{name}"
        if table_name not in database.tables:
            database.tables[table_name] = _table(database, table_name, schema, rows, key)
        found[name] = database.tables[table_name]
    return found


@pytest.mark.parametrize("where", WHERES, ids=[str(i) for i in range(len(WHERES))])
@pytest.mark.parametrize("name", database_params())
def test_inside_a_relation_fields_read_the_related_row(
    name: str, where: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    database = open_database(name, request)
    tables = _tables(database)
    flt = af.parse(where, SCHEMA)
    expected = {r["id"] for r in _records() if flt.matches(r)}
    names = {"orders": tables["orders"].name, "lines": tables["lines"].name}
    customers = tables["customers"]
    for way in ("sql", "params"):
        written = flt.to_sql_params if way == "params" else flt.to_sql
        result = written(database.dialect, table=customers.name, tables=names)
        sql, params = result if isinstance(result, tuple) else (result, None)
        assert database.ids(database.query(customers, sql), params) == expected, (way, sql)
    core = {"orders": tables["orders"], "orders.lines": tables["lines"]}
    statement = select(customers.c.id).where(flt.to_sqlalchemy(customers, relations=core))
    with database.engine.connect() as connection:
        assert set(connection.scalars(statement)) == expected, "sqlalchemy"


class _Base(DeclarativeBase):
    pass


class Customer(_Base):
    __tablename__ = "customers"
    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    orders: Mapped[list[Order]] = relationship()


class Order(_Base):
    __tablename__ = "orders"
    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    customer_id: Mapped[str] = mapped_column(ForeignKey("customers.id"))
    total: Mapped[int] = mapped_column(Integer)
    lim: Mapped[int] = mapped_column(Integer)
    lines: Mapped[list[Line]] = relationship()


class Line(_Base):
    __tablename__ = "lines"
    id: Mapped[str] = mapped_column(String(8), primary_key=True)
    order_id: Mapped[str] = mapped_column(ForeignKey("orders.id"))
    sku: Mapped[str] = mapped_column(String(8))
    quantity: Mapped[int] = mapped_column(Integer)
    lim: Mapped[int] = mapped_column(Integer)


ORM_WHERES = [w for w in WHERES if "lines" in str(w) and "tags" not in str(w)]


@pytest.mark.parametrize("where", ORM_WHERES, ids=[str(i) for i in range(len(ORM_WHERES))])
def test_sqlalchemy_orm_follows_nested_relationships(where: dict[str, Any]) -> None:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    plain = [
        ({k: v for k, v in row.items() if k in ("id", "customer_id", "total", "lim")}, Order)
        for row in ORDER_ROWS
    ]
    with Session(engine) as session:
        session.add_all([Customer(id=row["id"]) for row in CUSTOMER_ROWS])
        session.add_all([kind(**row) for row, kind in plain])
        session.add_all([Line(**row) for row in LINE_ROWS])
        session.commit()
        flt = af.parse(where, SCHEMA)
        expected = {r["id"] for r in _records() if flt.matches(r)}
        query = select(Customer.id).where(flt.to_sqlalchemy(Customer))
        assert set(session.scalars(query)) == expected


# Index advice (docs/backends-sql-rules.md, "Relations"): with the advised indexes every relation
# subquery on SQLite reads one contact's rows through an index instead of scanning the table.

ADVISED_INDEXES = (
    "CREATE INDEX actions_sub_name_created ON actions (sub_id, name, created_at)",
    "CREATE INDEX actions_sub_created ON actions (sub_id, created_at)",
)
BEHAVIOURS: list[dict[str, Any]] = [
    {"actions": {"some": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}}}},
    {"actions": {"where": {"name": "share"}, "count": {"gte": 3}}},
    {"actions": {"max": {"createdAt": {"gte": {"ago": "P7D"}}}}},
    {"actions": {"none": {}}},
    {"actions": {"sum": {"increase": {"gte": 10}}}},
    {"actions": {"every": {"increase": {"gt": 0}}}},
]


def _plan(indexes: tuple[str, ...], where: dict[str, Any]) -> list[str]:
    connection = sqlite3.connect(":memory:")
    af.register_sqlite_functions(connection)
    connection.execute("CREATE TABLE contacts (id TEXT PRIMARY KEY, email TEXT)")
    connection.execute(
        "CREATE TABLE actions (id TEXT PRIMARY KEY, sub_id TEXT, name TEXT, increase INTEGER, "
        "created_at TEXT)"
    )
    for index in indexes:
        connection.execute(index)
    sql = af.parse(where).to_sql("sqlite", now=NOW)
    rows = connection.execute(f"EXPLAIN QUERY PLAN SELECT id FROM contacts WHERE {sql}")
    plan = [row[3] for row in rows]
    connection.close()
    return [step for step in plan if " r1" in step]


@pytest.mark.parametrize("where", BEHAVIOURS, ids=[str(i) for i in range(len(BEHAVIOURS))])
def test_the_advised_indexes_serve_every_relation_subquery(where: dict[str, Any]) -> None:
    steps = _plan(ADVISED_INDEXES, where)
    assert steps and all(_indexed(step) for step in steps), steps
    assert not all(_indexed(step) for step in _plan((), where)), "without them"


def _indexed(step: str) -> bool:
    """A step reading one contact's related rows through an advised index."""
    return (
        step.startswith("SEARCH r1 USING") and "INDEX actions_sub" in step and "(sub_id=?" in step
    )


def test_an_anniversary_outside_utc_inside_a_relation_is_refused_on_mysql() -> None:
    """As at top level: MySQL/MariaDB cannot take a local date in a named zone."""
    paris = MonthDays(zone="Europe/Paris", ranges=((101, 101),))
    inner = af.Comparison("createdAt", af.Op.ANNIVERSARY, paris)
    for node in (
        Quantified("actions", Quantifier.SOME, inner),
        Aggregated("actions", Aggregate.MAX, "createdAt", inner, af.TRUE),
    ):
        with pytest.raises(af.FilterError, match="Europe/Paris"):
            to_sql(node, af.CONTACT, "mysql")
        assert "Europe/Paris" in to_sql(node, af.CONTACT, "postgresql")


@pytest.mark.parametrize("dialect", ["postgresql", "duckdb"])
def test_a_count_is_answered_over_groups_where_the_planner_needs_it(dialect: str) -> None:
    at_least = af.parse({"actions": {"count": {"gte": 3}}}).to_sql(dialect)
    assert "GROUP BY" in at_least and " IN (SELECT" in at_least
    below = af.parse({"actions": {"count": {"lt": 3}}}).to_sql(dialect)
    assert " NOT IN (SELECT" in below and "HAVING NOT (" in below
    assert "GROUP BY" not in af.parse({"actions": {"max": {"increase": 3}}}).to_sql(dialect)


def test_over_no_rows_reads_the_test_at_zero() -> None:
    from audiencefilter.language.aggregates import over_no_rows
    from audiencefilter.language.nodes import Aggregated
    from audiencefilter.language.relations import Aggregate

    def test(where: dict[str, Any]) -> Any:
        node = af.parse({"actions": where}).lowered
        assert isinstance(node, Aggregated)
        return over_no_rows(node.function, node.test)

    assert test({"count": {"gte": 1}}) is False
    assert test({"count": {"lte": 2}}) is True
    assert test({"sum": {"increase": {"in": [0, 5]}}}) is True
    assert test({"min": {"increase": 0}}) is None
    assert over_no_rows(Aggregate.MAX, af.parse({"points": 1}).root) is None
