"""Django back-end: a filter as a `Q` object over a Django model (`Filter.to_django`).

    Contact.objects.filter(flt.to_django(Contact))

Design choices:
- No Django lookup decides a rule. `~Q(...)` is not SQL's `NOT` (Django adds `IS NOT NULL`
  guards and `OR ... IS NULL` so that a negated lookup is two-valued), `__iexact` folds case
  per vendor, and `JSONField` key lookups read JSON null, missing keys and types per vendor:
  each would answer some filters differently from memory. The condition is instead one boolean
  expression (`FilterCondition`) written by the SQL text writer (`sql/text.py`) for the
  dialect of the connection that compiles the query, so Django's SQLite and PostgreSQL
  back-ends answer exactly as `to_sql_params` does on those engines, three-valued logic,
  case folding, lists, zones, anniversaries and relations included.
- The dialect is chosen when the query is compiled, not when the `Q` is built: one `Q` runs on
  any database alias (`.using("replica")`). A refusal (a construct an engine cannot answer
  faithfully) raises `FilterError` then.
- The model gives the names, found as `to_sqlalchemy` finds them (`sql/attributes.py`: the
  attribute `columns` names, else the field's name, else the naming convention's, snake_case by
  default: `createdAt` -> `created_at`); the condition uses the attribute's database column.
  A relation is a reverse foreign key of the model (`ForeignKey(Contact,
  related_name="actions")` on the related model; a reverse one-to-one for a to-one relation),
  found by its accessor the same way; its fields are the related model's attributes.
- The contact row is named by the alias Django gives the model's table in the query
  (`resolve_expression`), and follows Django's relabelling (`relabeled_clone`), so the
  condition stays correct inside a subquery (`Exists`, `__in`).
- Parameters: the writer's placeholders become Django's `%s` (Django converts them for
  SQLite) and every other `%` is doubled, as Django expects of raw SQL.
- Storage as Django keeps it: PostgreSQL's `timestamptz`, `jsonb` and arrays are what the
  PostgreSQL dialect reads. On SQLite, Django writes a date-time as naive UTC text without
  trailing zero microseconds (`2024-05-01 12:00:00`), which orders as instants, so the
  SQLite dialect's instants are written in that form (`DjangoSQLite`); this needs
  `USE_TZ = True` and the connection in UTC (Django's default), and is refused otherwise.
  The SQLite functions the dialect calls (`lower` folding Unicode as Python does, the
  anniversaries' month-day) are registered on the connection when a query is compiled.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any

try:
    from django.conf import settings
    from django.core.exceptions import FieldDoesNotExist
    from django.db.backends.base.base import BaseDatabaseWrapper
    from django.db.models import BooleanField, Expression, Field, ForeignObjectRel, Model, Q
    from django.db.models.sql.compiler import SQLCompiler
    from django.db.models.sql.query import Query
except ImportError as exc:  # pragma: no cover - depends on the installed extras
    raise ImportError(
        "the Django back-end needs Django: pip install Django, or from a clone of the "
        "repository pip install './audiencefilter[django]'"
    ) from exc

from ...errors import FilterError, Issue
from ...language.fields import FieldType, Relation, Schema
from ...language.nodes import Aggregated, And, Node, Not, Or, Quantified, fields_used
from ..naming import DEFAULT_NAMING, Naming, naming_function
from ..sql.attributes import Attributes
from ..sql.dialects import Dialect, PostgreSQL, SQLite
from ..sql.sqlite_functions import register_sqlite_functions
from ..sql.text import SqlWriter
from .fields import check_field

__all__ = ["FilterCondition", "model_column", "to_django"]

PLACEHOLDER = "\x00audiencefilter-parameter\x00"
"""What the dialects below write for a parameter: no `%`, and no text the writer inlines can
hold it unnoticed (the count is checked against the parameters)."""


class DjangoPostgreSQL(PostgreSQL):
    """The PostgreSQL dialect with a placeholder Django's raw SQL can take."""

    placeholder = PLACEHOLDER


class DjangoSQLite(SQLite):
    """The SQLite dialect as Django stores SQLite date-times (naive UTC text, microseconds
    only when not zero), with a placeholder Django's raw SQL can take."""

    placeholder = PLACEHOLDER

    def instant(self, value: datetime) -> str:
        return self.text(django_sqlite_text(value))

    def bind_instant(self, value: datetime) -> object:
        return django_sqlite_text(value)


def django_sqlite_text(value: datetime) -> str:
    """The text Django's SQLite back-end stores for the aware date-time `value` under
    `USE_TZ` (`str` of the naive UTC value). It orders as the instants do: a value without
    microseconds is a prefix of the same second with them, and sorts first."""
    return str(value.astimezone(UTC).replace(tzinfo=None))


DIALECTS: dict[str, Dialect] = {"postgresql": DjangoPostgreSQL(), "sqlite": DjangoSQLite()}
"""The dialect of each Django `connection.vendor` the back-end answers for."""


def _dialect(connection: BaseDatabaseWrapper) -> Dialect:
    """The dialect of `connection`, or a `FilterError` saying why there is none."""
    dialect = DIALECTS.get(connection.vendor)
    if dialect is None:
        raise FilterError(
            [
                Issue(
                    path="",
                    message=f"the Django back-end answers on SQLite and PostgreSQL, not on "
                    f"{connection.display_name}",
                    suggestion="select the members with Filter.to_sql_params on that database",
                )
            ]
        )
    if connection.vendor == "sqlite":
        zone = connection.timezone_name if settings.USE_TZ else None
        if zone != "UTC":
            raise FilterError(
                [
                    Issue(
                        path="",
                        message="on SQLite, date-times compare as Django stores them only "
                        "with USE_TZ = True and the database in UTC",
                        suggestion="set USE_TZ = True and leave the database's TIME_ZONE unset",
                    )
                ]
            )
        connection.ensure_connection()
        register_sqlite_functions(connection.connection)
    return dialect


def model_column(
    model: type[Model],
    names: Attributes,
    key: str,
    name: str,
    what: str,
    kind: FieldType | None = None,
) -> str:
    """The column of the model attribute for the filter field `name` (`key`: its dotted path):
    the names `sql/attributes.py` tries (`columns[key]` alone, else the name, else the naming
    convention's). Raises `ValueError` naming what was tried, the closest attribute and the fix;
    `FilterError` when the attribute is not a field of type `kind` (`fields.py`)."""
    tried = names.names(key, name)
    for attribute in tried:
        try:
            found = model._meta.get_field(attribute)
        except FieldDoesNotExist:
            continue
        if isinstance(found, Field) and found.concrete and found.column:
            if found.model._meta.db_table != model._meta.db_table:
                raise ValueError(
                    f"{model.__name__}.{attribute} ({what} {key!r}) is stored in "
                    f"{found.model.__name__}'s table; a filter reads one table per model"
                )
            if kind is not None:
                check_field(model, key, found, kind)
            return found.column
    concrete = [f.name for f in model._meta.concrete_fields]
    raise ValueError(_missing(model, key, what, tried, concrete))


def _missing(model: type[Model], key: str, what: str, tried: list[str], known: list[str]) -> str:
    """The message for a field or relation found under none of `tried`: the closest name the
    model has, and the `columns` line to write."""
    message = f"{model.__name__} has no {what} {key!r} (tried {', '.join(tried)})"
    lookup = next((name for name in tried if "__" in name.strip("_")), None)
    if lookup is not None:
        return message + _across(lookup)
    close = difflib.get_close_matches(tried[-1], known) if tried else []
    if close:
        return message + f"; did you mean {close[0]!r}? Pass columns={{{key!r}: {close[0]!r}}}"
    return message + f"; pass columns={{{key!r}: '<attribute>'}}"


def _across(lookup: str) -> str:
    """Why a Django lookup across a relation (`company__country`) names no column, and the
    relation to declare instead: a filter reads each model's own columns, and another model's
    rows through a relation of the schema."""
    head, _, rest = lookup.strip("_").partition("__")
    field = rest.replace("__", ".")
    return (
        f"; {lookup!r} is a Django lookup through {head!r}, and a filter reads each model's own "
        f"columns: declare {head!r} a relation of the schema, e.g. "
        f"Relation({head!r}, Schema.of({field.split('.')[0]}=...), many=False) for a foreign "
        f'key, and filter on its rows: {{"{head}": {{"is": {{"{field}": ...}}}}}} '
        f"({head} is ({field} = ...) in the text syntax)"
    )


def _followed(
    model: type[Model], relation: Relation, names: Attributes, key: str
) -> tuple[type[Model], dict[str, Any]]:
    """The model `relation` reaches from `model`, and how SQL joins its rows to the
    model's (the `Relation` fields `table`, `foreign_key`, `key` and, for many-to-many,
    `through`, `through_key`, `related_key`).

    A to-many relation follows a reverse foreign key (`ForeignKey(Contact,
    related_name="actions")` on the related model, itself included: `ForeignKey("self")`) or
    a many-to-many field of either side (its link table, `through=` or Django's own); a to-one
    relation a forward `ForeignKey`/`OneToOneField` or a reverse one-to-one. Each is found by
    its accessor, named as a field is."""
    tried = names.names(key, relation.name)
    for rel in model._meta.related_objects:
        if rel.get_accessor_name() in tried or rel.name in tried:
            return _reverse(model, relation, rel, key)
    for attribute in tried:
        try:
            found = model._meta.get_field(attribute)
        except FieldDoesNotExist:
            continue
        if isinstance(found, Field) and found.is_relation:
            return _forward(model, relation, found, key)
    accessors = [str(rel.get_accessor_name()) for rel in model._meta.related_objects]
    accessors += [
        f.name for f in model._meta.get_fields() if isinstance(f, Field) and f.is_relation
    ]
    message = _missing(model, key, "relation", tried, accessors)
    raise ValueError(
        message + f", or give the ForeignKey or ManyToManyField related_name={relation.name!r}"
    )


def _shape_refused(
    model: type[Model], accessor: str, key: str, found: str, many: bool
) -> ValueError:
    wanted = (
        "a reverse foreign key or a many-to-many field"
        if many
        else "a foreign key, a one-to-one field or a reverse one-to-one"
    )
    other = "to-one (Relation(..., many=False))" if many else "to-many (Relation(..., many=True))"
    return ValueError(
        f"{model.__name__}.{accessor} (relation {key!r}) is {found}, not {wanted}; "
        f"declare the relation {other}"
    )


def _reverse(
    model: type[Model], relation: Relation, rel: Any, key: str
) -> tuple[type[Model], dict[str, Any]]:
    """A relation followed from the other side's field: a reverse foreign key or one-to-one,
    or the reverse of a many-to-many field."""
    accessor = str(rel.get_accessor_name())
    related: type[Model] = rel.related_model
    if rel.many_to_many:
        if not relation.many:
            raise _shape_refused(model, accessor, key, "a reverse many-to-many", True)
        field = rel.field
        return related, _through(field, reverse=True)
    if not isinstance(rel, ForeignObjectRel) or not (
        rel.one_to_many if relation.many else rel.one_to_one
    ):
        found = "a reverse one-to-one" if rel.one_to_one else "a reverse foreign key"
        raise _shape_refused(model, accessor, key, found, not relation.many)
    return related, {
        "table": related._meta.db_table,
        "foreign_key": str(rel.field.column),
        "key": str(rel.field.target_field.column),
    }


def _forward(
    model: type[Model], relation: Relation, field: Any, key: str
) -> tuple[type[Model], dict[str, Any]]:
    """A relation followed from the model's own field: a foreign key or one-to-one (to-one),
    or a many-to-many field (to-many)."""
    related: type[Model] = field.related_model
    if field.many_to_many:
        if not relation.many:
            raise _shape_refused(model, field.name, key, "a many-to-many field", True)
        return related, _through(field, reverse=False)
    if relation.many:
        raise _shape_refused(model, field.name, key, "a foreign key to one row", False)
    return related, {
        "table": related._meta.db_table,
        "foreign_key": field.target_field.column,
        "key": field.column,
    }


def _through(field: Any, *, reverse: bool) -> dict[str, Any]:
    """The link table of the many-to-many `field` followed from its own model, or from the
    other (`reverse`): the link's column for each side, and the columns they refer to."""
    through = field.remote_field.through._meta
    own, other = field.m2m_column_name(), field.m2m_reverse_name()
    own_key = field.model._meta.get_field(field.m2m_target_field_name()).column
    other_key = field.related_model._meta.get_field(field.m2m_reverse_target_field_name()).column
    if reverse:
        own, other, own_key, other_key = other, own, other_key, own_key
    related = field.model if reverse else field.related_model
    return {
        "table": related._meta.db_table,
        "through": through.db_table,
        "foreign_key": own,
        "key": own_key,
        "through_key": other,
        "related_key": other_key,
    }


def _direct(node: Node) -> Iterator[Quantified | Aggregated]:
    """The relation conditions of `node` itself, not those inside a related row's condition."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, Quantified | Aggregated):
            yield n
        elif isinstance(n, And | Or):
            stack.extend(n.items)
        elif isinstance(n, Not):
            stack.append(n.item)


def naming(
    nodes: Sequence[Node],
    schema: Schema,
    model: type[Model],
    names: Attributes,
    path: str = "",
) -> tuple[Schema, dict[str, str]]:
    """The schema with each relation `nodes` read named as the model's tables name it (its
    related rows' relations too), and the columns of the fields `nodes` read (`path`: the
    relations that lead to `model`, `"actions."`)."""
    used = set().union(*(fields_used(n) for n in nodes))
    what = "column for field"
    columns = {
        field: model_column(model, names, path + field, field, what, _kind(schema, field))
        for field in used
        if schema.relation(field) is None
    }
    relations = []
    for relation in schema.relations:
        if relation.name not in used:
            relations.append(relation)
            continue
        related, keys = _followed(model, relation, names, path + relation.name)
        inner_path = f"{path}{relation.name}."
        reads = [n for node in nodes for n in _direct(node) if n.relation == relation.name]
        inner_schema, inner_columns = naming(
            [n.where for n in reads], relation.schema, related, names, inner_path
        )
        for n in reads:
            if isinstance(n, Aggregated) and n.field != "count":
                inner_columns[n.field] = model_column(
                    related,
                    names,
                    inner_path + n.field,
                    n.field,
                    "column for field",
                )
        relations.append(
            replace(
                relation,
                schema=inner_schema,
                **keys,
                columns=tuple(sorted(inner_columns.items())),
            )
        )
    return replace(schema, relations=tuple(relations)), columns


def _kind(schema: Schema, field: str) -> FieldType | None:
    declared = schema.get(field)
    return declared.type if declared is not None else None


class FilterCondition(Expression):
    """A lowered filter as one boolean SQL expression over a model's row, written for the
    dialect of the connection that compiles it."""

    conditional = True

    def __init__(self, node: Node, schema: Schema, model: type[Model], columns: dict[str, str]):
        super().__init__(output_field=BooleanField())
        self.node = node
        self.schema = schema
        self.model = model
        self.columns = columns
        #: The model's table as the query names it (its alias), set by the first
        #: `resolve_expression`: a subquery's conditions are resolved again against the outer
        #: query (for `OuterRef`), which must not rename the row they read.
        self.alias: str | None = None

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.model.__name__})"

    def resolve_expression(
        self,
        query: Any = None,
        allow_joins: bool = True,
        reuse: Any = None,
        summarize: bool = False,
        for_save: bool = False,
    ) -> FilterCondition:
        clone = self.copy()
        clone.is_summary = summarize
        if isinstance(query, Query) and clone.alias is None:
            model = query.model
            if model is None or model._meta.concrete_model is not self.model._meta.concrete_model:
                name = "no model" if model is None else model.__name__
                raise ValueError(
                    f"a filter made for {self.model.__name__} cannot filter {name}; "
                    f"build it with to_django({name})"
                )
            clone.alias = query.get_initial_alias()
        return clone

    def relabeled_clone(self, change_map: Mapping[str, str]) -> FilterCondition:
        clone = self.copy()
        if self.alias is not None:
            clone.alias = change_map.get(self.alias, self.alias)
        return clone

    def get_group_by_cols(self) -> list[Any]:
        return [self]

    def as_sql(
        self, compiler: SQLCompiler, connection: BaseDatabaseWrapper
    ) -> tuple[str, tuple[Any, ...]]:
        dialect = _dialect(connection)
        params: list[Any] = []
        table = self.alias or self.model._meta.db_table
        if compiler.quote_name_unless_alias(table) == table:
            # An alias Django made (`U0`) is written unquoted, so the database folds it as it
            # folds names (PostgreSQL to lower case; SQLite ignores case): quoted, it would
            # name nothing on PostgreSQL.
            table = table.lower()
        writer = SqlWriter(dialect, self.schema, self.columns, params, table=table)
        writer.qualify = True
        parts = writer.visit(self.node).split(PLACEHOLDER)
        if len(parts) != len(params) + 1:
            raise ValueError("a text of the filter holds the back-end's parameter marker")
        return "(" + "%s".join(part.replace("%", "%%") for part in parts) + ")", tuple(params)


def to_django(
    node: Node,
    schema: Schema,
    model: type[Model],
    columns: Mapping[str, str] | None = None,
    naming_rule: Naming = DEFAULT_NAMING,
) -> Q:
    """A lowered filter as a `Q` over `model` (`Model.objects.filter(q)`).

    `columns` names the model attribute of a field (`{"createdAt": "joined"}`), of a relation's
    reverse accessor (`{"actions": "events"}`) and of a related field
    (`{"actions.createdAt": "at"}`); any other is the attribute named like the field, else the
    one `naming_rule` gives (`"snake_case"`: `createdAt` -> `created_at`; None: none).
    Raises `ValueError` for a field or relation the model lacks.
    """
    names = Attributes(dict(columns or {}), naming_function(naming_rule))
    named, column_names = naming([node], schema, model, names)
    return Q(FilterCondition(node, named, model, column_names))
