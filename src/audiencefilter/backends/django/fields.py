"""The Django model field classes `to_django` answers exactly, and the refusal of every other.

Why: `to_django` writes its condition as SQL text for the connection's engine, reading each
column as the field type says (`sql/text.py`); it casts nothing. A column Django stores
otherwise than the text writer reads it (a PostgreSQL `uuid`, `inet`, an interval, a file's
name behind a `FieldFile`) would be compared as something it is not, or fail in the database.
So each Django field class has a rule here, as `sql/column_shapes.py` has for SQLAlchemy
types: the field types it holds, or why it is refused and the fix. A subclass takes its
nearest listed ancestor's rule; a field that points at another (`ForeignKey`) holds what its
target holds, and a `GeneratedField` what its `output_field` holds. tests/test_django_gate.py
holds every field class of `django.db.models` and `django.contrib.postgres.fields` listed.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, cast

from django.db import models

from ...errors import FilterError, Issue
from ...language.fields import FieldType
from ..sql.column_shapes import Rule

try:  # the PostgreSQL fields need psycopg; without it, no model has them
    from django.contrib.postgres import fields as postgres
except ImportError:  # pragma: no cover - depends on the installed drivers
    postgres = None  # type: ignore[assignment]

STRING, NUMBER, BOOLEAN = FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN


def _holds(*kinds: FieldType) -> Rule:
    return Rule(frozenset(kinds))


def _refused(reason: str, fix: str) -> Rule:
    return Rule(frozenset(), reason=reason, fix=fix)


_AS_TEXT_FIX = (
    "store the text in a CharField, or annotate the queryset with Cast(field, TextField()) "
    "and filter a model that reads it"
)

_RULES: tuple[tuple[Rule, tuple[str, ...]], ...] = (
    (_holds(STRING), ("CharField", "TextField", "EmailField", "SlugField", "URLField")),
    (_holds(STRING), ("FilePathField",)),
    (
        _holds(NUMBER),
        (
            "IntegerField",
            "BigIntegerField",
            "SmallIntegerField",
            "PositiveIntegerField",
            "PositiveSmallIntegerField",
            "PositiveBigIntegerField",
            "AutoField",
            "BigAutoField",
            "SmallAutoField",
            "DecimalField",
            "FloatField",
            "OrderWrt",
        ),
    ),
    (_holds(BOOLEAN), ("BooleanField",)),
    (_holds(FieldType.DATETIME), ("DateTimeField",)),
    (_holds(FieldType.DATE), ("DateField",)),
    (_holds(FieldType.JSON), ("JSONField",)),
    (
        _refused(
            "a UUIDField is PostgreSQL's uuid (compared with text it fails) and 32 hex "
            "digits elsewhere",
            _AS_TEXT_FIX,
        ),
        ("UUIDField",),
    ),
    (
        _refused("an IP address field is PostgreSQL's inet", _AS_TEXT_FIX),
        ("GenericIPAddressField", "IPAddressField"),
    ),
    (
        _refused(
            "a file field's value is a FieldFile, its column the file's name",
            "map the field to a CharField holding the name",
        ),
        ("FileField", "ImageField"),
    ),
    (
        _refused(
            "a binary, duration or time-of-day field holds no field type",
            "store a field type, or leave the field out of the schema",
        ),
        ("BinaryField", "DurationField", "TimeField"),
    ),
    (
        _refused(
            "a field class Django has removed or that holds no column of its own",
            "declare a CharField (with db_collation for a case-insensitive column)",
        ),
        (
            "NullBooleanField",
            "CommaSeparatedIntegerField",
            "CICharField",
            "CIEmailField",
            "CITextField",
            "CompositePrimaryKey",
            "ForeignObject",
            "ManyToManyField",
        ),
    ),
    (
        _refused(
            "a PostgreSQL hstore or range field holds no field type",
            "map the field to a model field of a field type",
        ),
        (
            "HStoreField",
            "RangeField",
            "IntegerRangeField",
            "BigIntegerRangeField",
            "DecimalRangeField",
            "DateTimeRangeField",
            "DateRangeField",
        ),
    ),
    (
        _refused(
            "a custom field's column is whatever its db_type says, which the library cannot read",
            "subclass the Django field of the type it stores (DecimalField for numeric, "
            "TextField for text)",
        ),
        ("Field",),
    ),
)

RULES: Mapping[str, Rule] = {name: rule for rule, names in _RULES for name in names}
"""The rule of each Django field class, by class name (a class of `django.db.models` or
`django.contrib.postgres.fields`); `ArrayField`, `ForeignKey`, `OneToOneField` and
`GeneratedField` are read through (`verdict`)."""

READ_THROUGH = ("ArrayField", "ForeignKey", "OneToOneField", "GeneratedField")
"""Field classes whose rule is another field's: the items', the target's, the output's."""

_DJANGO_MODULES = ("django.db.models", "django.contrib.postgres")


def rule_of(field: models.Field[Any, Any]) -> Rule:
    """The rule of a field's class, or of its nearest listed Django ancestor."""
    for cls in type(field).__mro__:
        if cls.__module__.startswith(_DJANGO_MODULES) and cls.__name__ in RULES:
            return RULES[cls.__name__]
    return RULES["Field"]


def _through(field: models.Field[Any, Any]) -> models.Field[Any, Any] | None:
    """The field whose rule a read-through field takes (None: not one)."""
    if isinstance(field, models.ForeignKey):
        target: models.Field[Any, Any] = field.target_field
        return target
    if isinstance(field, models.GeneratedField):
        output: Any = field.output_field
        return cast(models.Field[Any, Any], output)
    return None


def refusal(field: models.Field[Any, Any], kind: FieldType) -> tuple[str, str] | None:
    """Why a model field cannot be compared as field type `kind`, and the fix; None when it
    answers exactly."""
    target = _through(field)
    if target is not None:
        return refusal(target, kind)
    element = kind.element
    base = getattr(field, "base_field", None)
    if element is not None and postgres is not None and isinstance(field, postgres.ArrayField):
        return refusal(base, element) if base is not None else None
    if element is not None:
        if isinstance(field, models.JSONField):
            return None
        return (f"a {kind.value} field is held by an ArrayField or a JSONField", "")
    rule = rule_of(field)
    if kind in rule.holds:
        return None
    if rule.holds:
        held = " or ".join(sorted(k.value for k in rule.holds))
        return (f"it holds {held}, not {kind.value}", f"declare the field as {held}")
    return rule.reason, rule.fix


def check_field(model: type[models.Model], name: str, field: Any, kind: FieldType) -> None:
    """Nothing for a model field `to_django` compares exactly as `kind`; else a `FilterError`
    naming the filter field, the model field, its class and the fix."""
    found = refusal(field, kind)
    if found is None:
        return
    reason, fix = found
    message = (
        f"the {kind.value} field's column {model.__name__}.{field.name} is "
        f"{type(field).__name__}, which the library does not compare exactly: {reason}"
    )
    raise FilterError([Issue(path=name, message=message, suggestion=fix or None)])
