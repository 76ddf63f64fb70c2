"""Relation shapes (tests/shapes/relations.py) against the oracle on their real engines.

Every cell's shape holds the world of `tests/shapes/relation_worlds.py`; every where clause
the registries give for its relation (each related field's operations and each aggregate's,
under every quantifier and NOT, nested relations inside) must select on the engine the ids
the oracle selects from the same world as records.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Engine, create_engine, select
from sqlalchemy import case as sql_case
from sqlalchemy.orm import Session, aliased
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from tests.shapes import TALLY, Cell
from tests.shapes.relation_models import Models, load, models
from tests.shapes.relation_worlds import FIELDS, ROW, WORLD, Select, disagreements, records
from tests.shapes.relations import CELLS, SETUPS


@dataclass(frozen=True)
class Setup:
    """One cell made runnable: the schema its filters are read with, the oracle's records and
    the engine's selector."""

    schema: af.Schema
    rows: list[dict[str, Any]]
    run: Select


RELATIONS: dict[str, tuple[af.Relation, str]] = {
    "rows": (af.Relation("rows", ROW), "items"),
    "owner": (af.Relation("owner", ROW, many=False), "owner"),
    "audiences": (af.Relation("audiences", ROW), "items"),
    "memberships": (
        af.Relation("memberships", ROW.with_relations(af.Relation("audience", ROW, many=False))),
        "memberships",
    ),
    "referred": (af.Relation("referred", ROW), "referred"),
    "referrer": (af.Relation("referrer", ROW, many=False), "referrer"),
    "friends": (af.Relation("friends", ROW), "friends"),
    "buys": (af.Relation("buys", ROW), "items"),
    "sales": (af.Relation("sales", ROW), "items"),
    "sized": (af.Relation("sized", ROW), "sized"),
}
"""Each relation asked: as the schema declares it, and how the oracle's records hold it."""


def _schema(relation: af.Relation) -> af.Schema:
    return ROW.with_relations(relation)


def _records(name: str) -> list[dict[str, Any]]:
    return records(WORLD, name, RELATIONS[name][1])


# ---- SQLAlchemy ---------------------------------------------------------------------------------

_databases: dict[str, tuple[Engine, Models]] = {}


def _database(engine_name: str, request: pytest.FixtureRequest) -> tuple[Engine, Models]:
    """The world stored in every SQLAlchemy shape on `engine_name`, once per session."""
    if engine_name not in _databases:
        if engine_name == "SQLite":
            engine = create_engine("sqlite://", poolclass=StaticPool)
            af.register_sqlite_functions(engine)
        else:
            engine = create_engine(request.getfixturevalue("pg_database")())
        found = models()
        load(engine, found, WORLD)
        _databases[engine_name] = (engine, found)
    return _databases[engine_name]


def _selector(
    engine: Engine,
    key: Any,
    build: Callable[[af.Filter], Any],
    joined: Callable[[Any], Any] = lambda statement: statement,
) -> Select:
    """Many filters in one query: a `CASE` column per filter beside the row's key."""

    def run(filters: Sequence[af.Filter]) -> list[set[str]]:
        flags = [sql_case((build(flt), 1), else_=0) for flt in filters]
        statement = joined(select(*key, *flags))
        with Session(engine) as session:
            rows = session.execute(statement).all()
        width = len(key)
        return [
            {">".join(str(v) for v in row[:width]) for row in rows if row[width + n] == 1}
            for n in range(len(filters))
        ]

    return run


def _sqlalchemy(setup: str, engine: Engine, found: Models) -> Setup:
    person = found.person
    name = setup.split()[-1]
    if setup == "self-join":
        # each person beside their referrer, the filter asked of the referrer (the alias)
        referrer = aliased(person)
        relation = RELATIONS["referred"][0]
        by_id = {r["id"]: r for r in _records("referred")}
        rows = [
            {**by_id[f"p{r}"], "id": f"p{n}>p{r}"}
            for n, r in enumerate(WORLD.referrer)
            if r is not None
        ]
        run = _selector(
            engine,
            (person.id, referrer.id),
            lambda flt: flt.to_sqlalchemy(referrer, now=None),
            lambda statement: statement.select_from(person).join(
                referrer, referrer.id == person.referrer_id
            ),
        )
        return Setup(_schema(relation), rows, run)
    if setup.startswith("core"):
        return _core(setup, engine, found)
    relation = RELATIONS[name][0]
    target = aliased(person) if setup.startswith("aliased") else person
    run = _selector(engine, (target.id,), lambda flt: flt.to_sqlalchemy(target, now=None))
    return Setup(_schema(relation), _records(name), run)


def _core(setup: str, engine: Engine, found: Models) -> Setup:
    person = found.person.__table__
    if setup == "core rows":
        relation = af.Relation("rows", ROW, foreign_key="holder_code", key="code")
        given: dict[str, Any] = {"rows": found.row.__table__}
        target = person
    elif setup == "core audiences":
        membership, item = found.membership.__table__, found.item.__table__
        linked = select(membership.c.person_id, *item.c).join_from(membership, item)
        relation = af.Relation("audiences", ROW, foreign_key="person_id", key="id")
        given, target = {"audiences": linked.subquery()}, person
    elif setup == "core buys":
        relation = af.Relation("buys", ROW, foreign_key="person_id", key="id")
        given, target = {"buys": found.buy}, person
    else:
        relation = af.Relation("referred", ROW, foreign_key="referrer_id", key="id")
        given = {"referred": person}
        target = person.alias("buddy") if "aliased" in setup else person
    run = _selector(
        engine, (target.c.id,), lambda flt: flt.to_sqlalchemy(target, relations=given, now=None)
    )
    return Setup(_schema(relation), _records(relation.name), run)


# ---- Django ------------------------------------------------------------------------------------

DJANGO_RELATIONS: dict[str, tuple[af.Relation, str]] = {
    "django rows": RELATIONS["rows"],
    "django owner": RELATIONS["owner"],
    "django audiences": RELATIONS["audiences"],
    "django through": (af.Relation("linked", ROW), "items"),
    "django referred": RELATIONS["referred"],
    "django referrer": RELATIONS["referrer"],
    "django friends": RELATIONS["friends"],
}

_django_models: dict[str, Any] = {}
_django_loaded: set[str] = set()


def _django_world() -> dict[str, Any]:
    """The world's Django models (once per process): a person with a reverse foreign key to
    rows keyed by its `code`, a forward foreign key to an item, a many-to-many to items
    without and with `through=`, a foreign key to itself, a many-to-many to itself."""
    if _django_models:
        return _django_models
    from django.db import models

    import tests.django_engines  # noqa: F401  (configures Django)

    def fields() -> dict[str, Any]:
        return {
            "name": models.CharField(max_length=255, null=True),
            "size": models.BigIntegerField(null=True),
            "at": models.DateTimeField(null=True),
            "flag": models.BooleanField(null=True),
        }

    def model(title: str, /, **body: Any) -> Any:
        meta = type("Meta", (), {"app_label": "tests", "db_table": f"shape_dj_{title.lower()}"})
        return type(title, (models.Model,), {"__module__": __name__, "Meta": meta, **body})

    item = model("ShapeItem", id=models.CharField(max_length=20, primary_key=True), **fields())
    person = model(
        "ShapePerson",
        id=models.CharField(max_length=20, primary_key=True),
        code=models.CharField(max_length=20, unique=True),
        owner=models.ForeignKey(item, models.DO_NOTHING, null=True, related_name="owners"),
        referrer=models.ForeignKey("self", models.DO_NOTHING, null=True, related_name="referred"),
        audiences=models.ManyToManyField(item, related_name="audience_of"),
        friends=models.ManyToManyField("self", symmetrical=False),
        **fields(),
    )
    link = model(
        "ShapeLink",
        person=models.ForeignKey(person, models.DO_NOTHING),
        item=models.ForeignKey(item, models.DO_NOTHING),
    )
    person.add_to_class(
        "linked", models.ManyToManyField(item, through=link, related_name="linked_by")
    )
    row = model(
        "ShapeRow",
        holder=models.ForeignKey(person, models.DO_NOTHING, to_field="code", related_name="rows"),
        **fields(),
    )
    _django_models.update(item=item, person=person, link=link, row=row)
    return _django_models


def _django_load(alias: str) -> None:
    """The world stored in the Django models on the database `alias`, once."""
    if alias in _django_loaded:
        return
    from django.db import connections

    found = _django_world()
    item, person, link, row = found["item"], found["person"], found["link"], found["row"]
    with connections[alias].schema_editor() as editor:
        for model in (item, person, link, row):
            editor.create_model(model)
    item.objects.using(alias).bulk_create(
        [item(id=i["id"], **{k: i[k] for k in FIELDS}) for i in WORLD.items]
    )
    person.objects.using(alias).bulk_create(
        [
            person(
                id=p["id"],
                code=f"c{n}",
                owner_id=None if WORLD.owner[n] is None else f"a{WORLD.owner[n]}",
                referrer_id=None if WORLD.referrer[n] is None else f"p{WORLD.referrer[n]}",
                **{k: p[k] for k in FIELDS},
            )
            for n, p in enumerate(WORLD.people)
        ]
    )
    pairs = [(f"p{p}", f"a{k}") for p, k in WORLD.links]
    row.objects.using(alias).bulk_create(
        [row(holder_id=f"c{p}", **{k: WORLD.items[i][k] for k in FIELDS}) for p, i in WORLD.links]
    )
    link.objects.using(alias).bulk_create([link(person_id=p, item_id=i) for p, i in pairs])
    audiences = person.audiences.through
    audiences.objects.using(alias).bulk_create(
        [audiences(shapeperson_id=p, shapeitem_id=i) for p, i in pairs]
    )
    friends = person.friends.through
    friends.objects.using(alias).bulk_create(
        [friends(from_shapeperson_id=f"p{p}", to_shapeperson_id=f"p{f}") for p, f in WORLD.friends]
    )
    _django_loaded.add(alias)


def _django(setup: str, engine_name: str, request: pytest.FixtureRequest) -> Setup:
    from django.db.models import Case as When_case
    from django.db.models import IntegerField, Value, When

    from tests.django_engines import postgresql_store, sqlite_store

    if engine_name == "SQLite":
        alias = sqlite_store().alias
    else:
        alias = postgresql_store(request.getfixturevalue("pg_database")).alias
    _django_load(alias)
    person = _django_world()["person"]
    relation, kind = DJANGO_RELATIONS[setup]

    def run(filters: Sequence[af.Filter]) -> list[set[str]]:
        flags = {
            f"f{n}": When_case(
                When(flt.to_django(person), then=Value(1)),
                default=Value(0),
                output_field=IntegerField(),
            )
            for n, flt in enumerate(filters)
        }
        rows = list(person.objects.using(alias).annotate(**flags).values_list("id", *flags))
        return [{row[0] for row in rows if row[n + 1] == 1} for n in range(len(filters))]

    return Setup(_schema(relation), records(WORLD, relation.name, kind), run)


# ---- the cells ---------------------------------------------------------------------------------


def _setup(cell: Cell, request: pytest.FixtureRequest) -> Setup:
    engine_name = cell.backend.split("(")[-1].rstrip(")")
    setup = SETUPS[cell.shape]
    if cell.backend.startswith("SQLAlchemy"):
        return _sqlalchemy(setup, *_database(engine_name, request))
    return _django(setup, engine_name, request)


@pytest.mark.parametrize("cell", CELLS, ids=lambda c: c.id)
def test_relation_shape_gives_the_oracles_answer(
    cell: Cell, request: pytest.FixtureRequest
) -> None:
    setup = _setup(cell, request)
    asked, wrong, first = disagreements(setup.run, setup.schema, setup.rows)
    TALLY.note(cell, asked, len(setup.rows), wrong)
    assert asked > 100
    assert not wrong, f"{wrong} of {asked} filters differ on {cell.id}:\n" + "\n".join(first)
