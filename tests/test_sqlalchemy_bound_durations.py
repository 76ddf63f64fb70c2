"""`to_sqlalchemy(bind_durations=True)`: durations bound as named parameters at execution.

The service judges the same filters on every write; a filter with a duration (`ago`) used to
be built anew for every instant. Bound, the expression is one object whatever the instant, and
its answers must be those of the expression built at that instant, on every database, for a
duration at a column, inside a relation, under an aggregate, beside a calendar value, at a JSON
and on a date field or a date inside JSON (a local date, written at `now`, not bound).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import Column, DateTime, Integer, MetaData, String, Table, create_engine, select
from sqlalchemy.exc import StatementError

import audiencefilter as af
from tests.sql_engines import _column_type, database_params, open_database

NOW = datetime(2025, 3, 31, 12, 0, tzinfo=UTC)
NOWS = [NOW + timedelta(days=d, hours=h) for d in (-40, -3, 0, 1, 29) for h in (0, 13)]

CONTACT_FILTERS: list[dict[str, Any]] = [
    {"createdAt": {"gte": {"ago": "P30D"}}},
    {"createdAt": {"lt": {"ago": "P1M"}}},
    {"NOT": {"createdAt": {"gte": {"ago": "PT36H"}}}},
    {"OR": [{"createdAt": {"gte": {"ago": "P7D"}}}, {"points": {"gt": 50}}]},
    {"AND": [{"createdAt": {"gte": {"ago": "P30D"}}}, {"createdAt": {"lt": {"ago": "P2D"}}}]},
    {"actions": {"some": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}}}},
    {"actions": {"none": {"createdAt": {"gte": {"ago": "P10D"}}}}},
    {"actions": {"count": {"gte": 2}, "where": {"createdAt": {"gte": {"ago": "P60D"}}}}},
    {"actions": {"max": {"createdAt": {"gte": {"ago": "P20D"}}}}},
    {"actions": {"sum": {"increase": {"gte": 3}}, "where": {"createdAt": {"lt": {"ago": "P5D"}}}}},
    {
        "AND": [
            {"createdAt": {"gte": {"ago": "P90D"}}},
            {"createdAt": {"within": {"this": "month"}}},
        ]
    },
    {"createdAt": {"gte": {"startOf": "week"}}},
    {"points": {"gte": 10}},
]

DECLARED = af.Schema.from_mapping(
    {
        "createdAt": "datetime",
        "birthday": "date",
        "data": "json",
        "day": ("date", ("data", "day")),
    },
    name="declared",
)
DECLARED_FILTERS: list[dict[str, Any]] = [
    {"day": {"gte": {"ago": "P30D"}}},
    {"AND": [{"day": {"gte": {"ago": "P30D"}}}, {"createdAt": {"gte": {"ago": "P30D"}}}]},
    {"OR": [{"day": {"lt": {"ago": "P3D"}}}, {"createdAt": {"lt": {"ago": "P20D"}}}]},
    {"birthday": {"gte": {"ago": "P30D"}}},
    {"AND": [{"birthday": {"lt": {"ago": "P1Y"}}}, {"createdAt": {"gte": {"ago": "P1Y"}}}]},
]


def _contacts() -> list[dict[str, Any]]:
    """Contacts and actions spread around each boundary the filters above draw."""
    records: list[dict[str, Any]] = []
    for index in range(40):
        created = NOW - timedelta(days=index * 3 - 20, hours=index % 7 * 5)
        actions = [
            {
                "id": f"a{index}-{k}",
                "name": ["share", "like", "visit"][(index + k) % 3],
                "increase": (index * 3 + k) % 5,
                "createdAt": NOW - timedelta(days=(index * 7 + k * 11) % 80 - 10, hours=k * 9),
            }
            for k in range(index % 4)
        ]
        records.append(
            {"id": f"c{index}", "createdAt": created, "points": index * 5 % 97, "actions": actions}
        )
    return records


def _declared() -> list[dict[str, Any]]:
    return [
        {
            "id": f"d{index}",
            "createdAt": NOW - timedelta(days=index * 4 - 30, hours=index % 5 * 7),
            "birthday": (NOW - timedelta(days=index * 11 - 40)).date(),
            "data": {"day": (NOW - timedelta(days=index * 2 - 5, hours=index)).date().isoformat()},
        }
        for index in range(40)
    ]


@pytest.mark.parametrize("database", database_params())
@pytest.mark.parametrize(
    ("schema", "where"),
    [(af.CONTACT, w) for w in CONTACT_FILTERS] + [(DECLARED, w) for w in DECLARED_FILTERS],
)
def test_bound_durations_select_what_the_instants_select(
    database: str, schema: af.Schema, where: dict[str, Any], request: pytest.FixtureRequest
) -> None:
    db = open_database(database, request)
    flt = af.parse(where, schema)
    records = _contacts() if schema == af.CONTACT else _declared()
    table = db.table_for(records, schema)
    relations = db.related.get(table.name)
    with db.engine.connect() as connection:
        for now in NOWS:
            built = select(table.c.id).where(flt.to_sqlalchemy(table, now=now, relations=relations))
            wanted = set(connection.scalars(built))
            statement = select(table.c.id).where(
                flt.to_sqlalchemy(table, now=now, relations=relations, bind_durations=True)
            )
            got = set(connection.scalars(statement, flt.sqlalchemy_parameters(now)))
            assert got == wanted, (now, where)
            assert got == {r["id"] for r in flt.select(records, now=now)}, (now, where)


def test_a_filter_of_durations_alone_is_one_expression_at_every_instant() -> None:
    """What the service relies on: the same object, so SQLAlchemy's statement cache hits."""
    table = _table()
    flt = af.parse(
        {
            "AND": [
                {"createdAt": {"gte": {"ago": "P30D"}}},
                {"actions": {"some": {"createdAt": {"gte": {"ago": "P2D"}}}}},
            ]
        }
    )
    relations = {"actions": _actions()}
    first = flt.to_sqlalchemy(table, now=NOW, relations=relations, bind_durations=True)
    for now in NOWS:
        assert flt.to_sqlalchemy(table, now=now, relations=relations, bind_durations=True) is first
    unbound = flt.to_sqlalchemy(table, now=NOW, relations=relations)
    assert unbound is not first
    assert flt.to_sqlalchemy(table, now=NOW + timedelta(seconds=1), relations=relations) is not (
        unbound
    )


def test_parameters_are_named_per_duration_and_shared_between_filters() -> None:
    one = af.parse({"createdAt": {"gte": {"ago": "P30D"}}})
    other = af.parse({"actions": {"some": {"createdAt": {"gte": {"ago": "P4W2D"}}}}})
    assert one.sqlalchemy_parameters(NOW) == other.sqlalchemy_parameters(NOW)
    assert one.sqlalchemy_parameters(NOW) == {
        "af_ago_0_2592000000000": datetime(2025, 3, 1, 12, tzinfo=UTC),
        "af_ago_0_2592000000000_naive": datetime(2025, 3, 1, 12),
    }
    assert af.parse({"points": {"gt": 1}}).sqlalchemy_parameters(NOW) == {}
    calendar = af.parse({"createdAt": {"gte": {"startOf": "day"}}})
    assert calendar.sqlalchemy_parameters(NOW) == {}


def test_a_duration_on_a_date_is_written_as_its_day_not_bound() -> None:
    """A date compares with the local day a duration falls on: one expression per day."""
    flt = af.parse({"day": {"gte": {"ago": "P30D"}}}, DECLARED)
    assert flt.sqlalchemy_parameters(NOW) == {}
    table = _table(DECLARED)
    first = flt.to_sqlalchemy(table, now=NOW, bind_durations=True)
    assert flt.to_sqlalchemy(table, now=NOW + timedelta(hours=1), bind_durations=True) is first
    assert flt.to_sqlalchemy(table, now=NOW + timedelta(days=1), bind_durations=True) is not first


def test_executing_without_the_parameters_is_an_error_not_null() -> None:
    table = _table()
    engine = create_engine("sqlite://")
    table.metadata.create_all(engine)
    flt = af.parse({"createdAt": {"gte": {"ago": "P30D"}}})
    statement = select(table.c.id).where(flt.to_sqlalchemy(table, bind_durations=True))
    with engine.connect() as connection, pytest.raises(StatementError, match="af_ago_"):
        connection.execute(statement)
    engine.dispose()


def _table(schema: af.Schema = af.CONTACT) -> Table:
    """A contacts table of `schema`'s columns (typed as the suite's SQLite tables)."""
    engine = create_engine("sqlite://")
    columns = [Column(f.name, _column_type(f.type, engine)) for f in schema.fields]
    engine.dispose()
    return Table("contacts", MetaData(), Column("id", String, primary_key=True), *columns)


def _actions() -> Table:
    return Table(
        "actions",
        MetaData(),
        Column("id", String, primary_key=True),
        Column("sub_id", String),
        Column("name", String),
        Column("increase", Integer),
        Column("created_at", DateTime(timezone=True), key="createdAt"),
    )
