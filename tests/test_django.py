"""`Filter.to_django` on the models of a typical Django service: snake_case attributes, actions
through a reverse foreign key, `data` a `JSONField`, on Django's SQLite and PostgreSQL.

The conformance suite runs every case on both (tests/django_engines.py); these tests hold what
it cannot: the `Q` combined with Django's own operators (`~`, `&`, a subquery), the model
naming rule and its errors, and the refusal on SQLite outside UTC.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("django")

from django.db import connections, models  # noqa: E402
from django.db.models import Exists, OuterRef  # noqa: E402
from django.test.utils import override_settings  # noqa: E402

import audiencefilter as af  # noqa: E402
from tests.django_engines import postgresql_store, sqlite_store  # noqa: E402  (configures Django)

NOW = datetime(2026, 3, 1, 12, tzinfo=UTC)


class Subscriber(models.Model):
    """A contact as a service names it: snake_case, and no `company`, `country` or `city`."""

    id: models.CharField[Any, Any] = models.CharField(max_length=64, primary_key=True)
    email: models.CharField[Any, Any] = models.CharField(max_length=255, null=True)
    first_name: models.CharField[Any, Any] = models.CharField(max_length=255, null=True)
    points: models.BigIntegerField[Any, Any] = models.BigIntegerField(null=True)
    is_verified: models.BooleanField[Any, Any] = models.BooleanField(null=True)
    created_at: models.DateTimeField[Any, Any] = models.DateTimeField(null=True)
    data: models.JSONField[Any, Any] = models.JSONField(null=True)

    class Meta:
        app_label = "tests"
        db_table = "service_subscribers"


class Event(models.Model):
    """An action row; the relation is the reverse foreign key `actions`."""

    subscriber: models.ForeignKey[Any, Any] = models.ForeignKey(
        Subscriber, models.CASCADE, related_name="actions"
    )
    name: models.CharField[Any, Any] = models.CharField(max_length=255)
    increase: models.BigIntegerField[Any, Any] = models.BigIntegerField(null=True)
    created_at: models.DateTimeField[Any, Any] = models.DateTimeField()

    class Meta:
        app_label = "tests"
        db_table = "service_events"


def _at(day: int) -> datetime:
    return datetime(2026, 2, day, 9, tzinfo=UTC)


RECORDS: list[dict[str, Any]] = [
    {
        "id": "ann",
        "email": "ann@example.com",
        "firstName": "Élodie",
        "points": 40,
        "isVerified": True,
        "createdAt": _at(1),
        "data": {"plan": "pro", "seats": 3},
        "actions": [
            {"name": "share", "increase": 10, "createdAt": _at(20)},
            {"name": "share", "increase": 5, "createdAt": _at(25)},
        ],
    },
    {
        "id": "bob",
        "email": None,
        "firstName": "ÉLODIE",
        "points": None,
        "isVerified": None,
        "createdAt": None,
        "data": {"plan": None},
        "actions": [{"name": "open", "increase": None, "createdAt": _at(2)}],
    },
    {
        "id": "cy",
        "email": "cy@example.org",
        "firstName": None,
        "points": 5,
        "isVerified": False,
        "createdAt": _at(27),
        "data": None,
        "actions": [],
    },
    {
        "id": "dee",
        "email": "dee@example.com",
        "firstName": "Dee",
        "points": 12,
        "isVerified": True,
        "createdAt": _at(28),
        "data": {"plan": ["a", "b"], "tags": ["x", "a"]},
        "actions": [],
    },
]

WHERES: list[dict[str, Any]] = [
    {"NOT": {"points": {"gt": 10}}},
    {"NOT": {"email": {"endsWith": ".com"}}},
    {"firstName": {"equals": "élodie", "mode": "insensitive"}},
    {"isVerified": {"not": True}},
    {"data": {"path": ["plan"], "equals": "pro"}},
    {"NOT": {"data": {"path": ["plan"], "equals": "pro"}}},
    {"createdAt": {"gte": {"ago": "P30D"}}},
    {"actions": {"some": {"name": "share", "createdAt": {"gte": {"ago": "P7D"}}}}},
    {"actions": {"none": {"increase": {"gt": 0}}}},
    {"actions": {"every": {"increase": {"gt": 0}}}},
    {"actions": {"count": {"gte": 2}}},
    {"actions": {"sum": {"increase": {"gt": 12}}}},
    {"OR": [{"points": {"lt": 10}}, {"actions": {"where": {"name": "open"}, "count": {"gte": 1}}}]},
]

STORES = [
    pytest.param("sqlite", id="sqlite"),
    pytest.param("postgresql", id="postgresql", marks=pytest.mark.postgres),
]


@pytest.fixture
def alias(request: pytest.FixtureRequest) -> str:
    """The database alias of the store asked for, with the service's tables filled once."""
    vendor = request.param
    if vendor == "postgresql":
        store = postgresql_store(request.getfixturevalue("pg_database"))
    else:
        store = sqlite_store()
    connection = connections[store.alias]
    if Subscriber._meta.db_table not in connection.introspection.table_names():
        with connection.schema_editor() as editor:
            editor.create_model(Subscriber)
            editor.create_model(Event)
        for record in RECORDS:
            fields = {k: v for k, v in record.items() if k != "actions"}
            subscriber = Subscriber.objects.using(store.alias).create(
                id=fields["id"],
                email=fields["email"],
                first_name=fields["firstName"],
                points=fields["points"],
                is_verified=fields["isVerified"],
                created_at=fields["createdAt"],
                data=fields["data"],
            )
            for action in record["actions"]:
                Event.objects.using(store.alias).create(
                    subscriber=subscriber,
                    name=action["name"],
                    increase=action["increase"],
                    created_at=action["createdAt"],
                )
    return store.alias


def _memory(where: dict[str, Any]) -> set[str]:
    return {r["id"] for r in af.parse(where).select(RECORDS, now=NOW)}


def _ids(query: Any) -> set[str]:
    return set(query.values_list("id", flat=True))


@pytest.mark.parametrize("alias", STORES, indirect=True)
@pytest.mark.parametrize("where", WHERES, ids=lambda w: af.parse(w).to_text())
def test_a_service_model_selects_as_memory(alias: str, where: dict[str, Any]) -> None:
    q = af.parse(where).to_django(Subscriber, now=NOW)
    assert _ids(Subscriber.objects.using(alias).filter(q)) == _memory(where)


@pytest.mark.parametrize("alias", STORES, indirect=True)
@pytest.mark.parametrize("where", WHERES, ids=lambda w: af.parse(w).to_text())
def test_djangos_negation_of_the_q_is_the_filters_not(alias: str, where: dict[str, Any]) -> None:
    """`~q` is SQL's NOT of one boolean expression: UNKNOWN stays out, as `{"NOT": ...}`."""
    q = af.parse(where).to_django(Subscriber, now=NOW)
    assert _ids(Subscriber.objects.using(alias).filter(~q)) == _memory({"NOT": where})


@pytest.mark.parametrize("alias", STORES, indirect=True)
def test_the_q_combines_with_djangos_lookups(alias: str) -> None:
    q = af.parse({"firstName": {"contains": "lod", "mode": "insensitive"}}).to_django(Subscriber)
    query = Subscriber.objects.using(alias).filter(q & ~models.Q(id="bob"))
    assert _ids(query) == {"ann"}


@pytest.mark.parametrize("alias", STORES, indirect=True)
def test_the_condition_follows_its_table_into_a_subquery(alias: str) -> None:
    """Inside `Exists` and `__in` Django renames the model's table (`U0`): the condition
    names the alias it is given, not the table."""
    where = {"actions": {"some": {"name": "share"}}}
    q = af.parse(where).to_django(Subscriber)
    inner = Subscriber.objects.using(alias).filter(q, pk=OuterRef("subscriber_id"))
    events = Event.objects.using(alias).filter(Exists(inner))
    assert set(events.values_list("subscriber_id", flat=True)) == {"ann"}
    members = Subscriber.objects.using(alias).filter(q).values("pk")
    events = Event.objects.using(alias).filter(subscriber__in=members)
    assert set(events.values_list("subscriber_id", flat=True)) == {"ann"}


def test_a_missing_attribute_is_named_with_the_fix() -> None:
    with pytest.raises(ValueError, match=r"no column for field 'city' \(tried city\).*columns="):
        af.parse({"city": "Paris"}).to_django(Subscriber)
    q = af.parse({"city": "Paris"}).to_django(Subscriber, columns={"city": "email"})
    assert q is not None


def test_a_missing_relation_is_named_with_the_fix() -> None:
    with pytest.raises(ValueError, match="has no relation 'audiences'.*related_name='audiences'"):
        af.parse({"audiences": {"some": {"name": "vip"}}}).to_django(Subscriber)


def test_a_related_field_missing_on_the_related_model_is_named() -> None:
    flt = af.parse({"actions": {"some": {"name": "share"}}})
    with pytest.raises(
        ValueError, match=r"Event has no column for field 'actions.name' \(tried label\)"
    ):
        flt.to_django(Subscriber, columns={"actions.name": "label"})


@pytest.mark.parametrize(
    ("lookup", "head", "field"),
    [
        ("subscriber__email", "subscriber", "email"),
        ("subscriber__data__plan", "subscriber", "data.plan"),
    ],
)
def test_a_django_lookup_through_a_relation_is_told_the_relation_to_declare(
    lookup: str, head: str, field: str
) -> None:
    """A column named by a lookup across a foreign key (`company__country`) is no column of
    the model: the fix is a relation of the schema, not the foreign key's own column."""
    schema = af.Schema.of(name="string", subscriberEmail="string")
    flt = af.parse({"subscriberEmail": "ann@example.com"}, schema)
    with pytest.raises(ValueError) as raised:
        flt.to_django(Event, columns={"subscriberEmail": lookup})
    message = str(raised.value)
    assert f"{lookup!r} is a Django lookup through {head!r}" in message, message
    assert f'{{"{head}": {{"is": {{"{field}": ...}}}}}}' in message, message
    assert "Pass columns=" not in message, message
    related = af.Schema.of(name="string").with_relations(
        af.Relation("subscriber", af.Schema.of(email="string"), many=False)
    )
    fixed = af.parse({"subscriber": {"is": {"email": "ann@example.com"}}}, related)
    assert fixed.to_django(Event) is not None


def test_a_q_made_for_one_model_refuses_another() -> None:
    q = af.parse({"email": "a"}).to_django(Subscriber)
    with pytest.raises(ValueError, match="made for Subscriber cannot filter Event"):
        list(Event.objects.filter(q))


@pytest.mark.parametrize("alias", STORES[:1], indirect=True)
def test_sqlite_outside_utc_is_refused(alias: str) -> None:
    q = af.parse({"points": {"gt": 1}}).to_django(Subscriber)
    with override_settings(USE_TZ=False), pytest.raises(af.FilterError, match="USE_TZ"):
        list(Subscriber.objects.using(alias).filter(q))


def test_the_django_page_examples_run() -> None:
    """docs/django.md configures Django itself, so its examples run in a process of their own
    (this one is configured by tests/django_engines.py)."""
    page = Path(__file__).parent.parent / "docs" / "django.md"
    script = (
        "import doctest, sys\n"
        f"result = doctest.testfile({str(page)!r}, module_relative=False,"
        " optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)\n"
        "print(result.attempted, result.failed)\n"
        "sys.exit(1 if result.failed or not result.attempted else 0)\n"
    )
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True)
    assert done.returncode == 0, done.stdout + done.stderr


class Order(models.Model):
    """A related row with rows of its own: `orders` whose `lines` are a nested relation."""

    customer: models.ForeignKey[Any, Any] = models.ForeignKey(
        Subscriber, models.CASCADE, related_name="orders"
    )
    total: models.BigIntegerField[Any, Any] = models.BigIntegerField(null=True)

    class Meta:
        app_label = "tests"
        db_table = "service_orders"


class OrderLine(models.Model):
    order: models.ForeignKey[Any, Any] = models.ForeignKey(
        Order, models.CASCADE, related_name="lines"
    )
    sku: models.CharField[Any, Any] = models.CharField(max_length=64, null=True)

    class Meta:
        app_label = "tests"
        db_table = "service_order_lines"


LINES = af.Relation("lines", af.Schema.of(sku="string"))
ORDERS = af.Relation("orders", af.Schema.of(total="number").with_relations(LINES))
SHOP = af.Schema.of(email="string").with_relations(ORDERS)
ORDERED: dict[str, list[dict[str, Any]]] = {
    "ann": [{"total": 30, "lines": [{"sku": "A"}, {"sku": None}]}, {"total": 5, "lines": []}],
    "bob": [{"total": None, "lines": [{"sku": "B"}]}],
    "cy": [],
    "dee": [],
}
NESTED: list[dict[str, Any]] = [
    {"orders": {"some": {"lines": {"some": {"sku": "A"}}}}},
    {"orders": {"every": {"lines": {"none": {"sku": "B"}}}}},
    {"orders": {"some": {"total": {"gt": 1}, "lines": {"every": {"sku": {"not": "B"}}}}}},
    {"orders": {"where": {"lines": {"some": {}}}, "count": {"gte": 1}}},
    {"NOT": {"orders": {"some": {"lines": {"where": {"sku": "A"}, "count": {"gte": 1}}}}}},
]


@pytest.mark.parametrize("alias", STORES, indirect=True)
@pytest.mark.parametrize("where", NESTED, ids=lambda w: af.parse(w, SHOP).to_text())
def test_relations_inside_related_rows_follow_the_related_models_keys(
    alias: str, where: dict[str, Any]
) -> None:
    connection = connections[alias]
    if Order._meta.db_table not in connection.introspection.table_names():
        with connection.schema_editor() as editor:
            editor.create_model(Order)
            editor.create_model(OrderLine)
        for customer, orders in ORDERED.items():
            for order in orders:
                row = Order.objects.using(alias).create(customer_id=customer, total=order["total"])
                for line in order["lines"]:
                    OrderLine.objects.using(alias).create(order=row, sku=line["sku"])
    records = [
        {**{k: v for k, v in r.items() if k != "actions"}, "orders": ORDERED[r["id"]]}
        for r in RECORDS
    ]
    flt = af.parse(where, SHOP)
    expected = {r["id"] for r in flt.select(records)}
    assert _ids(Subscriber.objects.using(alias).filter(flt.to_django(Subscriber))) == expected


TAGGED = af.Schema.from_mapping(
    {
        "email": "string",
        "data": "json",
        "plan": ("string", ("data", "plan")),
        "tags": ("string[]", ("data", "tags")),
    }
)
NUL_TEXT: list[dict[str, Any]] = [
    {"plan": {"in": ["\x00", "pro"]}},
    {"data": {"path": ["plan"], "array_ends_with": "a\x00b"}},
    {"data": {"path": ["plan"], "string_contains": "p\x00"}},
    {"NOT": {"plan": {"equals": "pro\x00"}}},
    {"tags": {"hasSome": ["\x00", "true"]}},
    {"NOT": {"tags": {"has": "a\x00"}}},
    {"data": {"path": ["plan"], "array_contains": ["x\x00"], "mode": "insensitive"}},
]


@pytest.mark.parametrize("alias", STORES, indirect=True)
@pytest.mark.parametrize("where", NUL_TEXT, ids=lambda w: af.parse(w, TAGGED).to_text())
def test_text_holding_nul_answers_as_memory(alias: str, where: dict[str, Any]) -> None:
    """PostgreSQL text holds no NUL and its driver refuses such a parameter: the SQL back-end
    writes what such a value means instead of sending it."""
    records = [{"id": r["id"], "email": r["email"], "data": r["data"]} for r in RECORDS]
    for asked in (where, {"NOT": where}):  # FALSE and UNKNOWN apart
        flt = af.parse(asked, TAGGED)
        expected = {r["id"] for r in flt.select(records)}
        if connections[alias].vendor == "sqlite":
            # SQLite's JSON functions read text up to its NUL: refused before any SQL runs.
            with pytest.raises(af.FilterError, match="NUL"):
                _ids(Subscriber.objects.using(alias).filter(flt.to_django(Subscriber)))
            continue
        q = flt.to_django(Subscriber)
        assert _ids(Subscriber.objects.using(alias).filter(q)) == expected, asked


def test_the_naming_convention_is_the_sqlalchemy_back_ends() -> None:
    """`naming` is read as `to_sqlalchemy` reads it (`sql/attributes.py`); without one, the
    message names the closest attribute."""
    flt = af.parse({"createdAt": {"gte": "2026-01-01T00:00:00Z"}})
    with pytest.raises(ValueError, match=r"did you mean 'created_at'\? Pass columns="):
        flt.to_django(Subscriber, naming=None)
    assert flt.to_django(Subscriber, naming=lambda name: "created_at") is not None
    with pytest.raises(ValueError, match="unknown naming"):
        flt.to_django(Subscriber, naming="kebab")
