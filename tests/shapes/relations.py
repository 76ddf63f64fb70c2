"""Relation shapes users bring: their cells for the support matrix (tests/shapes/__init__.py).

Each shape is run by `tests/test_shapes_relations.py` on the world of
`tests/shapes/relation_worlds.py` (the SQLAlchemy models in `relation_models.py`, the Django
models in the test), against the oracle, for every operation of every related field and
aggregate under every quantifier and `NOT`. `SETUPS` names, for each shape, how the test
builds it: the relation asked (`rows`, `referred`, ...) and the target it is asked on.
"""

from __future__ import annotations

from tests.shapes import Cell

ENGINES = ("SQLite", "PostgreSQL")

TO_MANY = "to-many"
TO_ONE = "to-one"
NESTED = "to-many, nested to-one"

Shape = tuple[str, str, str, str]
"""(setup, shape as the user writes it, field type, note)."""

SQLALCHEMY_ORM: tuple[Shape, ...] = (
    ("rows", "relationship(), foreign key to another column than id", TO_MANY, ""),
    ("owner", "relationship(), many-to-one", TO_ONE, ""),
    ("audiences", "relationship(secondary=table)", TO_MANY, "many-to-many"),
    (
        "memberships",
        "relationship() to an association object, its relationship() inside",
        NESTED,
        "",
    ),
    ("referred", "relationship('Self', foreign_keys=[referrer_id])", TO_MANY, "self one-to-many"),
    ("referrer", "relationship('Self', remote_side=[id])", TO_ONE, "self many-to-one"),
    ("friends", "relationship('Self', secondary=table)", TO_MANY, "self many-to-many"),
    (
        "buys",
        "relationship(Subclass), single-table inheritance",
        TO_MANY,
        "the subclass's rows only (its discriminator)",
    ),
    ("sales", "relationship(Subclass), joined-table inheritance", TO_MANY, ""),
    (
        "sized",
        "relationship(primaryjoin=and_(key == fk, extra condition), viewonly=True)",
        TO_MANY,
        "",
    ),
    ("aliased rows", "aliased(Model), relationship()", TO_MANY, ""),
    ("aliased referred", "aliased(Model), relationship('Self')", TO_MANY, ""),
    ("aliased audiences", "aliased(Model), relationship(secondary=table)", TO_MANY, ""),
    (
        "self-join",
        "aliased(Model) joined to Model, relationship('Self')",
        TO_MANY,
        "the alias's related rows",
    ),
)

SQLALCHEMY_CORE: tuple[Shape, ...] = (
    (
        "core rows",
        'relations={"rows": table}, foreign key to another column than id',
        TO_MANY,
        "",
    ),
    ("core referred", 'relations={"referred": the target table}', TO_MANY, "self one-to-many"),
    (
        "core audiences",
        'relations={"audiences": select(link.c.person_id, table).join(...).subquery()}',
        TO_MANY,
        "many-to-many",
    ),
    ("core aliased referred", 'table.alias(), relations={"referred": table}', TO_MANY, ""),
    (
        "core buys",
        'relations={"buys": Subclass}, single-table inheritance',
        TO_MANY,
        "the subclass's rows only (its discriminator)",
    ),
)

DJANGO: tuple[Shape, ...] = (
    ("django rows", "ForeignKey(Model, related_name=...) (reverse)", TO_MANY, ""),
    ("django owner", "ForeignKey(Model) (forward)", TO_ONE, "many-to-one"),
    ("django audiences", "ManyToManyField(Model)", TO_MANY, ""),
    ("django through", "ManyToManyField(Model, through=Link)", TO_MANY, ""),
    ("django referred", 'ForeignKey("self", related_name=...) (reverse)', TO_MANY, "self"),
    ("django referrer", 'ForeignKey("self") (forward)', TO_ONE, "self many-to-one"),
    ("django friends", 'ManyToManyField("self", symmetrical=False)', TO_MANY, "self"),
)

BACKENDS = (
    ("SQLAlchemy ORM", SQLALCHEMY_ORM),
    ("SQLAlchemy Core", SQLALCHEMY_CORE),
    ("Django", DJANGO),
)

SETUPS: dict[str, str] = {shape: setup for _b, shapes in BACKENDS for setup, shape, *_ in shapes}
"""The test's setup of each shape."""

CELLS: list[Cell] = [
    Cell("relations", f"{backend} ({engine})", shape, kind, "exact", note)
    for backend, shapes in BACKENDS
    for engine in ENGINES
    for _setup, shape, kind, note in shapes
]
