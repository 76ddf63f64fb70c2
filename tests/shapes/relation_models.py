"""The world of `relation_worlds.py` as SQLAlchemy models: one `Person` mapped class with a
relationship per relation shape, and the Core tables under it.

    Person.rows        one-to-many to `Row`, by a foreign key to `person.code` (not `id`)
    Person.owner       many-to-one to `Item`
    Person.audiences   many-to-many to `Item` through `membership` (`secondary=`)
    Person.memberships one-to-many to the association object `Membership`, whose
                       `audience` is its item
    Person.referred    self one-to-many (`foreign_keys=[referrer_id]`)
    Person.referrer    self many-to-one (`remote_side=[id]`)
    Person.friends     self many-to-many through `friendship`
    Person.buys        one-to-many to `BuyAction`, a single-table subclass of `Action`
                       (discriminator `kind`; the table also holds other kinds' rows)
    Person.sales       one-to-many to `Sale`, a joined-table subclass of `Action`
    Person.sized       one-to-many to `Row`, `primaryjoin` with an extra condition
                       (`size > 0`)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    DateTime,
    Engine,
    ForeignKey,
    Integer,
    String,
    Table,
    and_,
    insert,
    select,
    update,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, relationship

from tests.shapes.relation_worlds import FIELDS, World


@dataclass(frozen=True)
class Models:
    """The mapped classes and tables of one database."""

    person: Any
    row: Any
    item: Any
    membership: Any
    friendship: Table
    buy: Any
    sale: Any


def _fields() -> list[Column[Any]]:
    return [
        Column("name", String(255)),
        Column("size", BigInteger),
        Column("at", DateTime(timezone=True)),
        Column("flag", Boolean),
    ]


def models() -> Models:
    """Fresh mapped classes (a registry of their own) for one database."""

    class Base(DeclarativeBase):
        pass

    item_table = Table(
        "shape_item", Base.metadata, Column("id", String(20), primary_key=True), *_fields()
    )
    person_table = Table(
        "shape_person",
        Base.metadata,
        Column("id", String(20), primary_key=True),
        Column("code", String(20), unique=True, nullable=False),
        Column("owner_id", String(20), ForeignKey("shape_item.id")),
        Column("referrer_id", String(20), ForeignKey("shape_person.id")),
        *_fields(),
    )
    row_table = Table(
        "shape_row",
        Base.metadata,
        Column("rid", Integer, primary_key=True),
        Column("holder_code", String(20), ForeignKey("shape_person.code")),
        *_fields(),
    )
    membership_table = Table(
        "shape_membership",
        Base.metadata,
        Column("mid", Integer, primary_key=True),
        Column("person_id", String(20), ForeignKey("shape_person.id")),
        Column("item_id", String(20), ForeignKey("shape_item.id")),
        *_fields(),
    )
    friendship = Table(
        "shape_friendship",
        Base.metadata,
        Column("person_id", String(20), ForeignKey("shape_person.id"), primary_key=True),
        Column("friend_id", String(20), ForeignKey("shape_person.id"), primary_key=True),
    )

    action_table = Table(
        "shape_action",
        Base.metadata,
        Column("aid", Integer, primary_key=True),
        Column("person_id", String(20), ForeignKey("shape_person.id")),
        Column("kind", String(10), nullable=False),
        *_fields(),
    )
    sale_table = Table(
        "shape_sale",
        Base.metadata,
        Column("aid", Integer, ForeignKey("shape_action.aid"), primary_key=True),
    )

    class Action(Base):
        __table__ = action_table
        __mapper_args__ = {"polymorphic_on": action_table.c.kind, "polymorphic_identity": "view"}

    class BuyAction(Action):
        __mapper_args__ = {"polymorphic_identity": "buy"}

    class Sale(Action):
        __table__ = sale_table
        __mapper_args__ = {"polymorphic_identity": "sale"}

    class Item(Base):
        __table__ = item_table

    class Row(Base):
        __table__ = row_table

    class Membership(Base):
        __table__ = membership_table
        audience = relationship(Item, viewonly=True)

    class Person(Base):
        __table__ = person_table
        id: Mapped[str]
        referrer_id: Mapped[str | None]
        rows = relationship(Row, viewonly=True)
        owner = relationship(Item, viewonly=True)
        audiences = relationship(Item, secondary=membership_table, viewonly=True)
        memberships = relationship(Membership, viewonly=True)
        referred = relationship("Person", foreign_keys=[person_table.c.referrer_id], viewonly=True)
        referrer = relationship(
            "Person",
            foreign_keys=[person_table.c.referrer_id],
            remote_side=[person_table.c.id],
            viewonly=True,
        )
        friends = relationship(
            "Person",
            secondary=friendship,
            primaryjoin=person_table.c.id == friendship.c.person_id,
            secondaryjoin=person_table.c.id == friendship.c.friend_id,
            viewonly=True,
        )
        buys = relationship(BuyAction, viewonly=True)
        sales = relationship(Sale, viewonly=True)
        sized = relationship(
            Row,
            primaryjoin=and_(person_table.c.code == row_table.c.holder_code, row_table.c.size > 0),
            viewonly=True,
        )

    return Models(Person, Row, Item, Membership, friendship, BuyAction, Sale)


def _stored(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in FIELDS}


def load(engine: Engine, found: Models, world: World) -> None:
    """Create the tables on `engine` and store `world` in every shape at once."""
    metadata = found.person.metadata
    metadata.create_all(engine)
    item, person, row = found.item.__table__, found.person.__table__, found.row.__table__
    membership = found.membership.__table__
    with engine.begin() as connection:
        connection.execute(insert(item), [{"id": i["id"], **_stored(i)} for i in world.items])
        people = [
            {
                "id": p["id"],
                "code": f"c{n}",
                "owner_id": None if world.owner[n] is None else world.items[world.owner[n]]["id"],
                "referrer_id": None,
                **_stored(p),
            }
            for n, p in enumerate(world.people)
        ]
        connection.execute(insert(person), people)
        for n, referrer in enumerate(world.referrer):
            if referrer is not None:
                connection.execute(
                    update(person).where(person.c.id == f"p{n}").values(referrer_id=f"p{referrer}")
                )
        connection.execute(
            insert(row),
            [{"holder_code": f"c{p}", **_stored(world.items[k])} for p, k in world.links],
        )
        connection.execute(
            insert(membership),
            [
                {"person_id": f"p{p}", "item_id": f"a{k}", **_stored(world.link_values(n))}
                for n, (p, k) in enumerate(world.links)
            ],
        )
        _load_actions(connection, found, world)
        connection.execute(
            insert(found.friendship),
            [{"person_id": f"p{p}", "friend_id": f"p{f}"} for p, f in world.friends],
        )


def _load_actions(connection: Any, found: Models, world: World) -> None:
    """Each link as a `buy` and as a `sale` action holding its item, and each person's one
    `view` action (another item), which no subclass's relationship may reach."""
    action, sale = found.buy.__table__, found.sale.__table__
    rows = [
        {"person_id": f"p{p}", "kind": kind, **_stored(world.items[k])}
        for kind in ("buy", "sale")
        for p, k in world.links
    ]
    rows += [
        {"person_id": f"p{n}", "kind": "view", **_stored(world.items[(n + 4) % len(world.items)])}
        for n in range(len(world.people))
    ]
    connection.execute(insert(action), rows)
    sold = connection.execute(select(action.c.aid).where(action.c.kind == "sale")).scalars()
    connection.execute(insert(sale), [{"aid": aid} for aid in sold])
