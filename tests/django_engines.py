"""Django engines: `Filter.to_django` on Django's own SQLite and PostgreSQL back-ends, for the
conformance and differential suites.

Django is configured once per process (`settings.configure`): a SQLite file as the `default`
database, and the session's PostgreSQL database (the `pg_database` fixture) added as the
`postgresql` alias when first asked for. Each distinct record set becomes a model of its own
(a contact model and one model per relation, created with Django's schema editor and filled
with `bulk_create`), named as a typical Django project names them, not as the filter does:
snake_case attributes (`created_at`, `is_verified`), the city in an attribute called `town`
(named through `columns=`), the relations' rows keyed by a foreign key called `subscriber`
(column `subscriber_id`, not the schema's `sub_id`) with `related_name` the relation's name,
and their `id` field in an attribute called `ident`. List fields are `ArrayField`s on
PostgreSQL and `JSONField`s on SQLite, `data` a `JSONField`.
"""

from __future__ import annotations

import atexit
import hashlib
import json
from collections.abc import Callable
from datetime import datetime
from typing import Any

import django
from django.conf import settings
from sqlalchemy.engine import make_url

import audiencefilter as af
from audiencefilter.backends.sql.attributes import snake_case
from tests import scratch
from tests.engine_kinds import Engine as SuiteEngine
from tests.engine_kinds import Records, built_once
from tests.sql_engines import MARKS, _row

_FOLDER = scratch.folder("af-django-")

if not settings.configured:
    settings.configure(
        DATABASES={
            "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": str(_FOLDER / "db.sqlite3")}
        },
        USE_TZ=True,
        INSTALLED_APPS=["tests"],  # the models below, so that reverse relations are found
        DEFAULT_AUTO_FIELD="django.db.models.BigAutoField",
    )
    django.setup()

from django.db import connections, models  # noqa: E402  (after settings.configure)

APP = "tests"
ALIASES = {"sqlite": "default", "postgresql": "postgresql"}
COLUMNS = {"city": "town", "actions.id": "ident", "audiences.id": "ident"}
"""The attributes the naming rule (the name, or its snake_case) does not find."""


class Numeric(models.DecimalField):  # type: ignore[type-arg]
    """PostgreSQL's unconstrained `numeric`: the exact numbers of a number list. A
    `DecimalField` (the number field `to_django` compares) whose values are bound as given,
    so a float is the number it is, not rounded to a decimal context."""

    def db_type(self, connection: Any) -> str:
        return "numeric"

    def get_db_prep_value(self, value: Any, connection: Any, prepared: bool = False) -> Any:
        return value


def _attribute(field: str) -> str:
    return COLUMNS.get(field, snake_case(field))


def _model_field(kind: af.FieldType, native_lists: bool) -> models.Field[Any, Any]:
    if kind.element is not None:
        if not native_lists:
            return models.JSONField(null=True)
        from django.contrib.postgres.fields import ArrayField

        items: dict[af.FieldType, models.Field[Any, Any]] = {
            af.FieldType.STRING: models.TextField(),
            af.FieldType.NUMBER: Numeric(),
            af.FieldType.BOOLEAN: models.BooleanField(),
            af.FieldType.DATETIME: models.DateTimeField(),
            af.FieldType.DATE: models.DateField(),
        }
        return ArrayField(items[kind.element], null=True)
    simple: dict[af.FieldType, Callable[[], models.Field[Any, Any]]] = {
        af.FieldType.STRING: lambda: models.CharField(max_length=255, null=True),
        af.FieldType.NUMBER: lambda: models.BigIntegerField(null=True),
        af.FieldType.BOOLEAN: lambda: models.BooleanField(null=True),
        af.FieldType.DATETIME: lambda: models.DateTimeField(null=True),
        af.FieldType.DATE: lambda: models.DateField(null=True),
        af.FieldType.JSON: lambda: models.JSONField(null=True),
    }
    return simple[kind]()


def _model(
    name: str, schema: af.Schema, native_lists: bool, attrs: dict[str, Any]
) -> type[models.Model]:
    body: dict[str, Any] = {
        "__module__": __name__,
        "Meta": type("Meta", (), {"app_label": APP, "db_table": name}),
        **attrs,
    }
    for f in schema.fields:
        if f.source:  # a field inside `data`
            continue
        attribute = "ident" if f.name == "id" else _attribute(f.name)
        body[attribute] = _model_field(f.type, native_lists)
    return type(name, (models.Model,), body)


class Store:
    """The models loaded so far on one Django database."""

    def __init__(self, vendor: str) -> None:
        self.vendor = vendor
        self.alias = ALIASES[vendor]
        self.models: dict[str, type[models.Model]] = {}

    def model_for(self, records: Records, schema: af.Schema) -> type[models.Model]:
        """The model of a table holding exactly `records`, loaded on first use."""
        kind = f"django-{self.vendor}"
        return built_once(kind, records, schema, lambda: self._model_for(records, schema))

    def _model_for(self, records: Records, schema: af.Schema) -> type[models.Model]:
        text = json.dumps(records, sort_keys=True, ensure_ascii=False, default=str)
        text += repr(schema)
        name = f"af_{self.vendor[:2]}_" + hashlib.sha256(text.encode()).hexdigest()[:12]
        if name not in self.models:
            self.models[name] = self._load(name, records, schema)
        return self.models[name]

    def _load(self, name: str, records: Records, schema: af.Schema) -> type[models.Model]:
        native = self.vendor == "postgresql"
        contact = _model(
            name, schema, native, {"id": models.CharField(max_length=64, primary_key=True)}
        )
        related: list[tuple[type[models.Model], list[models.Model]]] = []
        for relation in schema.relations:
            # A to-many relation is a reverse foreign key, a to-one a reverse one-to-one.
            kind = models.ForeignKey if relation.many else models.OneToOneField
            key: models.ForeignKey[Any, Any] = kind(
                contact,
                on_delete=models.DO_NOTHING,
                related_name=relation.name,
                db_constraint=False,
            )
            rows_model = _model(
                f"{name}_{relation.name}", relation.schema, native, {"subscriber": key}
            )
            rows = [
                rows_model(subscriber_id=record["id"], **self._values(row, relation.schema))
                for record in records
                for row in _rows(record.get(relation.name))
            ]
            related.append((rows_model, rows))
        connection = connections[self.alias]
        with connection.schema_editor() as editor:
            editor.create_model(contact)
            for model, _ in related:
                editor.create_model(model)
        contacts = [contact(id=r["id"], **self._values(r, schema)) for r in records]
        contact.objects.using(self.alias).bulk_create(contacts)
        for model, rows in related:
            model.objects.using(self.alias).bulk_create(rows)
        return contact

    def _values(self, record: dict[str, Any], schema: af.Schema) -> dict[str, Any]:
        row = _row({"id": None, **record}, schema, self.vendor == "postgresql")
        values = {}
        for f in schema.fields:
            if f.source:
                continue
            values["ident" if f.name == "id" else _attribute(f.name)] = row[f.name]
        return values

    def select(self, flt: af.Filter, records: Records, now: datetime | None) -> set[str]:
        return self.ids(self.model_for(records, flt.schema), flt, now)

    def ids(self, model: type[models.Model], flt: af.Filter, now: datetime | None) -> set[str]:
        """The ids of `model`'s rows that `flt` selects (its relations' `id` in `ident`)."""
        columns = {**COLUMNS, **{f"{r.name}.id": "ident" for r in flt.schema.relations}}
        condition = flt.to_django(model, columns=columns, now=now)
        query = model.objects.using(self.alias).filter(condition)
        return {str(i) for i in query.values_list("id", flat=True)}


def _rows(held: Any) -> list[dict[str, Any]]:
    """A relation's rows in a record: a list (to-many), one row (to-one), or none."""
    return [held] if isinstance(held, dict) else list(held or ())


_stores: dict[str, Store] = {}


def sqlite_store() -> Store:
    if "sqlite" not in _stores:
        _stores["sqlite"] = Store("sqlite")
    return _stores["sqlite"]


def postgresql_store(pg_database: Callable[[], str]) -> Store:
    """The session's PostgreSQL database of its own, added to Django's connections."""
    if "postgresql" not in _stores:
        url = make_url(pg_database())
        configured = connections.configure_settings(
            {
                "default": connections.settings["default"],
                "postgresql": {
                    "ENGINE": "django.db.backends.postgresql",
                    "NAME": url.database,
                    "USER": url.username or "",
                    "PASSWORD": url.password or "",
                    "HOST": url.host or "",
                    "PORT": str(url.port or ""),
                },
            }
        )
        connections.settings["postgresql"] = configured["postgresql"]
        _stores["postgresql"] = Store("postgresql")
    return _stores["postgresql"]


@atexit.register
def _close_all() -> None:
    connections.close_all()


def _engine(vendor: str) -> SuiteEngine:
    fixture = "pg_database" if vendor == "postgresql" else None

    def select_ids(*args: Any) -> set[str]:
        *resource, flt, records, now = args
        store = postgresql_store(*resource) if resource else sqlite_store()
        return store.select(flt, records, now)

    return SuiteEngine(f"django-{vendor}", select_ids, fixture, MARKS.get(vendor, ()))


DJANGO_ENGINES: list[SuiteEngine] = [_engine("sqlite"), _engine("postgresql")]
