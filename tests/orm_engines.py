"""ORM engines: `to_sqlalchemy` over SQLAlchemy ORM models named as services name them.

The conformance and differential suites load each record set into the tables of
`tests/sql_engines.py`; this module maps an ORM class onto each of them whose attributes are
the snake_case names of the fields (`created_at`, `is_verified`; the columns' own names do not
matter to the ORM), and a class per related table reached by a `relationship()` named like the
relation. A query is `select(Model.id).where(flt.to_sqlalchemy(Model, naming="snake_case"))`
run by an ORM `Session`: no `columns=`, no `relations=`, no Core table with `key=`.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import Table, select
from sqlalchemy.orm import Session, foreign, registry, relationship

import audiencefilter as af
from audiencefilter.backends.sql.attributes import snake_case
from tests.engine_kinds import Engine as SuiteEngine
from tests.sql_engines import DATABASES, MARKS, Database

_models: dict[tuple[int, str], Any] = {}


def _class(name: str) -> type:
    return type(name, (), {"__doc__": "A mapped class of the ORM engines."})


def model_for(db: Database, table: Table, schema: af.Schema) -> Any:
    """The ORM class of `table` (built once): snake_case attributes, one relationship per
    relation whose rows were loaded."""
    key = (id(db), table.name)
    if key in _models:
        return _models[key]
    mapper_registry = registry()
    properties: dict[str, Any] = {"id": table.c.id}
    properties.update({snake_case(f.name): table.c[f.name] for f in schema.fields})
    for name, related_table in db.related.get(table.name, {}).items():
        relation = next(r for r in schema.relations if r.name == name)
        related = _class(f"{snake_case(name).title()}Row")
        related_properties: dict[str, Any] = {"row_id": related_table.c.row_id}
        related_properties.update(
            {snake_case(f.name): related_table.c[f.name] for f in relation.schema.fields}
        )
        related_properties[relation.foreign_key] = related_table.c[relation.foreign_key]
        mapper_registry.map_imperatively(related, related_table, properties=related_properties)
        join = table.c.id == foreign(related_table.c[relation.foreign_key])
        properties[snake_case(name)] = relationship(related, primaryjoin=join, viewonly=True)
    model = _class("Subscriber")
    mapper_registry.map_imperatively(model, table, properties=properties)
    _models[key] = model
    return model


def select_orm(db: Database, flt: af.Filter, table: Table, now: datetime | None) -> set[str]:
    model = model_for(db, table, flt.schema)
    statement = select(model.id).where(flt.to_sqlalchemy(model, now=now, naming="snake_case"))
    with Session(db.engine) as session:
        return set(session.scalars(statement))


def _engine(database: str) -> SuiteEngine:
    server_fixture, opener = DATABASES[database]

    def select_ids(*args: Any) -> set[str]:
        *resource, flt, records, now = args
        db = opener(*resource)
        return select_orm(db, flt, db.table_for(records, flt.schema), now)

    return SuiteEngine(f"orm-{database}", select_ids, server_fixture, MARKS.get(database, ()))


ORM_ENGINES: list[SuiteEngine] = [_engine("sqlite"), _engine("postgresql")]
