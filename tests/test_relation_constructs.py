"""ORM relation constructs beside the shapes of `tests/shapes/relations.py`: a relationship to
a concrete-inheritance class answers as SQLAlchemy's own `any()` does, and an association
proxy named like a relation is refused when the filter is built, naming the relationship it
goes through."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import Column, ForeignKey, Integer, create_engine, select
from sqlalchemy.ext.associationproxy import association_proxy
from sqlalchemy.ext.declarative import ConcreteBase
from sqlalchemy.orm import DeclarativeBase, Session, relationship

import audiencefilter as af


class Base(DeclarativeBase):
    pass


class Person(Base):
    __tablename__ = "construct_person"
    id = Column(Integer, primary_key=True)
    events = relationship("Event", viewonly=True)
    refunds = relationship("Refund", viewonly=True)
    amounts = association_proxy("refunds", "amount")


class Event(ConcreteBase, Base):
    __tablename__ = "construct_event"
    id = Column(Integer, primary_key=True)
    person_id = Column(ForeignKey("construct_person.id"))
    amount = Column(Integer)
    __mapper_args__ = {"polymorphic_identity": "event", "concrete": True}


class Refund(Event):
    __tablename__ = "construct_refund"
    id = Column(Integer, primary_key=True)
    person_id = Column(ForeignKey("construct_person.id"))
    amount = Column(Integer)
    __mapper_args__ = {"polymorphic_identity": "refund", "concrete": True}


def _schema(relation: str) -> af.Schema:
    related = af.Schema.from_mapping({"amount": "number"})
    return af.Schema.from_mapping({"id": "number"}).with_relations(af.Relation(relation, related))


@pytest.fixture(scope="module")
def session() -> Any:
    engine = create_engine("sqlite://")
    Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Person(id=n) for n in (1, 2, 3)])
        session.add_all([Event(id=1, person_id=1, amount=5), Refund(id=2, person_id=2, amount=3)])
        session.commit()
        yield session


@pytest.mark.parametrize("relation", ["events", "refunds"])
def test_a_concrete_inheritance_relationship_reads_the_rows_any_reads(
    session: Session, relation: str
) -> None:
    """A relationship to the concrete base reads every subclass's table (its polymorphic
    union), one to a concrete subclass its own table: as `relationship.any()` does."""
    flt = af.parse({relation: {"some": {}}}, _schema(relation))
    found = session.scalars(select(Person.id).where(flt.to_sqlalchemy(Person))).all()
    wanted = session.scalars(select(Person.id).where(getattr(Person, relation).any())).all()
    assert sorted(found) == sorted(wanted) == ([1, 2] if relation == "events" else [2])


def test_an_association_proxy_is_refused_naming_its_relationship() -> None:
    flt = af.parse({"amounts": {"some": {"amount": {"gt": 1}}}}, _schema("amounts"))
    with pytest.raises(ValueError, match=r"association proxy.*Person\.refunds"):
        flt.to_sqlalchemy(Person)
    assert flt.to_sqlalchemy(Person, columns={"amounts": Person.refunds}) is not None


def test_a_django_multi_table_child_relation_is_refused_naming_the_parents_table() -> None:
    """A relation to a multi-table-inheritance child whose field lives in the parent's table
    is refused when the filter is built, naming both models."""
    from django.db import models

    import tests.django_engines  # noqa: F401  (configures Django)

    def model(title: str, bases: tuple[type, ...] = (models.Model,), **body: Any) -> Any:
        meta = type("Meta", (), {"app_label": "tests", "db_table": f"construct_{title.lower()}"})
        return type(title, bases, {"__module__": __name__, "Meta": meta, **body})

    person = model("ConstructPerson", id=models.CharField(max_length=20, primary_key=True))
    action = model("ConstructAction", name=models.CharField(max_length=20, null=True))
    model(
        "ConstructSale",
        (action,),
        buyer=models.ForeignKey(person, models.DO_NOTHING, related_name="sales"),
    )
    related = af.Schema.from_mapping({"name": "string"})
    schema = af.Schema.from_mapping({"id": "string"}).with_relations(af.Relation("sales", related))
    flt = af.parse({"sales": {"some": {"name": "x"}}}, schema)
    with pytest.raises(ValueError, match=r"ConstructSale\.name .* ConstructAction's table"):
        flt.to_django(person)
