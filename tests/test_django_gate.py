"""The Django field gate (`backends/django/fields.py`): every field class Django offers has a
rule, and a model field outside the proven ones is refused when `to_django` builds its `Q`.

Why: `to_django` writes SQL text that reads each column as its field type says; a `uuid`
column compared with text fails in PostgreSQL, a duration or file field is compared as
something it is not. The catalogue is Django's own (`django.db.models`,
`django.contrib.postgres.fields`), so a field class a new Django adds fails here until it is
given a rule.
"""

from __future__ import annotations

import inspect
from typing import Any

import pytest

pytest.importorskip("django")

from django.conf import settings

if not settings.configured:  # pragma: no cover - tests/conftest.py configures Django
    settings.configure()
    import django

    django.setup()

from django.contrib.postgres import fields as postgres
from django.db import models

import audiencefilter as af
from audiencefilter.backends.django.fields import READ_THROUGH, RULES, refusal
from audiencefilter.language.fields import FieldType


def _field_classes() -> list[type[Any]]:
    found = {
        value
        for module in (models, postgres)
        for name, value in vars(module).items()
        if inspect.isclass(value) and issubclass(value, models.Field) and name[0] != "_"
    }
    return sorted(found, key=lambda cls: (cls.__module__, cls.__name__))


@pytest.mark.parametrize("cls", _field_classes(), ids=lambda cls: cls.__name__)
def test_every_django_field_class_has_a_rule(cls: type[Any]) -> None:
    assert cls.__name__ in RULES or cls.__name__ in READ_THROUGH, (
        f"{cls.__module__}.{cls.__name__} has no rule in backends/django/fields.py"
    )


@pytest.mark.parametrize(
    ("field", "kind", "exact"),
    [
        (models.CharField(max_length=5), FieldType.STRING, True),
        (models.EmailField(), FieldType.STRING, True),
        (models.UUIDField(), FieldType.STRING, False),
        (models.GenericIPAddressField(), FieldType.STRING, False),
        (models.DurationField(), FieldType.NUMBER, False),
        (models.BigIntegerField(), FieldType.NUMBER, True),
        (models.DecimalField(max_digits=9, decimal_places=2), FieldType.NUMBER, True),
        (models.BigIntegerField(), FieldType.STRING, False),
        (models.DateTimeField(), FieldType.DATETIME, True),
        (models.DateTimeField(), FieldType.DATE, False),
        (models.DateField(), FieldType.DATE, True),
        (models.JSONField(), FieldType.STRING_LIST, True),
        (postgres.ArrayField(models.TextField()), FieldType.STRING_LIST, True),
        (postgres.ArrayField(models.UUIDField()), FieldType.STRING_LIST, False),
        (models.TextField(), FieldType.STRING_LIST, False),
    ],
    ids=lambda v: type(v).__name__ if isinstance(v, models.Field) else str(v),
)
def test_the_gate_reads_each_field(field: Any, kind: FieldType, exact: bool) -> None:
    assert (refusal(field, kind) is None) is exact


class Ticket(models.Model):
    token = models.UUIDField(null=True)
    label = models.CharField(max_length=20, null=True)
    wait = models.DurationField(null=True)

    class Meta:
        app_label = "gate_tickets"


def test_a_uuid_field_is_refused_when_the_q_is_built() -> None:
    """A UUIDField compared with a text literal failed in PostgreSQL (`uuid = text`), and on
    SQLite read 32 hex digits where the record holds the hyphenated form."""
    schema = af.Schema.from_mapping({"token": "string", "label": "string", "wait": "number"})
    assert af.parse_text('label = "x"', schema).to_django(Ticket) is not None
    for where, named in (('token starts with "a0"', "UUIDField"), ("wait > 3", "DurationField")):
        with pytest.raises(af.FilterError) as caught:
            af.parse_text(where, schema).to_django(Ticket)
        message = str(caught.value)
        assert named in message and "Ticket." in message, message
