"""The field catalogue: the fields a filter may name, their types, the operators of each type.

A `Schema` is plain data so that a service embedding the library can describe its own contact
model. The parser, every back-end and the text syntax read the same catalogue, which is how an
operator that is valid in JSON is valid everywhere else too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import date, datetime
from decimal import Decimal
from enum import StrEnum
from fractions import Fraction
from functools import cached_property
from typing import Literal


class FieldType(StrEnum):
    """The value types a filterable field can have.

    `JSON` is a column holding a JSON document (the contact's `data`): it is only compared
    through a `path`, and each comparison takes the type of its literal.
    """

    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATETIME = "datetime"
    DATE = "date"
    JSON = "json"
    STRING_LIST = "string[]"
    NUMBER_LIST = "number[]"
    BOOLEAN_LIST = "boolean[]"
    DATETIME_LIST = "datetime[]"
    DATE_LIST = "date[]"

    @property
    def element(self) -> FieldType | None:
        """The type of each item of a list type (`string[]` holds strings); None otherwise."""
        return LIST_ELEMENTS.get(self)

    @property
    def entry(self) -> TypeEntry:
        """This type's data in the field table (`TYPES`); a list type has the empty
        `LIST_ENTRY` (its items' data is its `element`'s entry)."""
        return TYPES.get(self, LIST_ENTRY)


class Op(StrEnum):
    """Comparison operators, spelled as in the where-clause JSON."""

    EQUALS = "equals"
    GT = "gt"
    GTE = "gte"
    LT = "lt"
    LTE = "lte"
    CONTAINS = "contains"
    STARTS_WITH = "startsWith"
    ENDS_WITH = "endsWith"
    IN = "in"
    NOT_IN = "notIn"
    WITHIN = "within"
    ANNIVERSARY = "anniversary"


class ListOp(StrEnum):
    """The operators of a list field (Prisma's scalar-list filters), spelled as in JSON.

    `equals` is the whole list, in order; the others test items (`language/lists.py`).
    """

    HAS = "has"
    HAS_SOME = "hasSome"
    HAS_EVERY = "hasEvery"
    IS_EMPTY = "isEmpty"
    EQUALS = "equals"
    # Prisma's filters of a JSON array at a data path (`data.tags`).
    ARRAY_CONTAINS = "array_contains"
    ARRAY_STARTS_WITH = "array_starts_with"
    ARRAY_ENDS_WITH = "array_ends_with"


#: The operators of a list field; the others test a JSON array at a data path.
LIST_FIELD_OPS = (ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY, ListOp.IS_EMPTY, ListOp.EQUALS)
ARRAY_OPS = (ListOp.ARRAY_CONTAINS, ListOp.ARRAY_STARTS_WITH, ListOp.ARRAY_ENDS_WITH)
#: The operators of a list declared inside JSON (docs/semantics-json.md, "Typed fields inside
#: JSON"): the item tests, case-sensitive, and `isEmpty` (an array with no items). `equals`
#: and `mode` are refused there, as no engine reads a JSON array's order and items alike.
JSON_LIST_OPS = (ListOp.HAS, ListOp.HAS_SOME, ListOp.HAS_EVERY, ListOp.IS_EMPTY)


FieldSpec = str | FieldType | tuple[str | FieldType, tuple[str, ...]]
"""A field's type name, or `(type name, source)` for a field stored inside a JSON column."""

BLANK = "blank"
"""The operator key of "null or the empty string" (`{"nickname": {"blank": true}}`), on string
fields and data paths; not an `Op`: it compares with no literal."""

JSON_STRING_ALIASES: Mapping[str, Op] = {
    "string_contains": Op.CONTAINS,
    "string_starts_with": Op.STARTS_WITH,
    "string_ends_with": Op.ENDS_WITH,
}
"""Prisma's names of the string filters on a JSON path, read as the operators they name."""

ORDERING_OPS = frozenset({Op.GT, Op.GTE, Op.LT, Op.LTE})
PATTERN_OPS = frozenset({Op.CONTAINS, Op.STARTS_WITH, Op.ENDS_WITH})
LIST_OPS = frozenset({Op.IN, Op.NOT_IN})
PERIOD_OPS = frozenset({Op.WITHIN, Op.ANNIVERSARY})
"""Operators whose operand is a calendar period (language/calendar.Period)."""
OPPOSITE_OPS: Mapping[Op, Op] = {Op.IN: Op.NOT_IN, Op.NOT_IN: Op.IN}
"""The operators that are each other's negation on a field's present value: `notIn` is
exactly "present and not `in`" (at a JSON path it is not: another JSON type is FALSE for both)."""
MIRRORED: Mapping[Op, Op] = {
    Op.EQUALS: Op.EQUALS,
    Op.GT: Op.LT,
    Op.GTE: Op.LTE,
    Op.LT: Op.GT,
    Op.LTE: Op.GTE,
}
"""Each comparison with its sides swapped: `5 < points` is `points > 5` (the formats that
read a literal on the left turn a comparison round with it)."""
COMPARISON_OPS = frozenset({Op.EQUALS}) | ORDERING_OPS
"""`equals` and the orderings: one value against one other. A field reference takes these
(language/conditions.REFERENCE_OPS), and an index seeks by them (language/cost.py)."""
SHORTHAND_OP = Op.EQUALS
"""The operator of a value written alone: `{"email": "a@b.c"}` is
`{"email": {"equals": "a@b.c"}}` and `{"not": "x"}` its `not`; with null either is the null
test, so this operator alone takes null besides `in` and `notIn`. The readers, the writers and
the JSON Schema read it here."""
ALWAYS_FOLDED = frozenset({Op.CONTAINS})
"""Operators that fold case whatever `mode` says: `contains` (docs/semantics.md#strings). A
writer never writes `mode` for them, and the messages never say "ignoring case"."""

#: Operators each type accepts, besides the field-level `not` (every type) and `mode` (strings).
OPERATORS: Mapping[FieldType, frozenset[Op]] = {
    FieldType.STRING: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | PATTERN_OPS | ORDERING_OPS,
    FieldType.NUMBER: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | ORDERING_OPS,
    FieldType.BOOLEAN: frozenset({Op.EQUALS}),
    FieldType.DATETIME: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN, Op.WITHIN, Op.ANNIVERSARY})
    | ORDERING_OPS,
    FieldType.DATE: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN, Op.WITHIN, Op.ANNIVERSARY})
    | ORDERING_OPS,
    FieldType.JSON: frozenset(Op) - {Op.WITHIN, Op.ANNIVERSARY},
    FieldType.STRING_LIST: frozenset(),
    FieldType.NUMBER_LIST: frozenset(),
    FieldType.BOOLEAN_LIST: frozenset(),
    FieldType.DATETIME_LIST: frozenset(),
    FieldType.DATE_LIST: frozenset(),
}
#: The item type of each list type; a list field takes the `ListOp`s, not the `Op`s.
LIST_ELEMENTS: Mapping[FieldType, FieldType] = {
    FieldType.STRING_LIST: FieldType.STRING,
    FieldType.NUMBER_LIST: FieldType.NUMBER,
    FieldType.BOOLEAN_LIST: FieldType.BOOLEAN,
    FieldType.DATETIME_LIST: FieldType.DATETIME,
    FieldType.DATE_LIST: FieldType.DATE,
}
Moment = Literal["", "instant", "day"]
"""What a calendar value is: an instant (a date-time, read as UTC), a day (a date, no zone),
or neither."""


@dataclass(frozen=True, slots=True)
class TypeEntry:
    """A scalar type's data, in one place: what the readers, the rewrites, the messages and the
    test generators once spelled type by type, so a new type is one entry here and the
    modules reading it follow.

    Attributes:
        literals: The Python classes of a literal of the type (`value_key` reads a value's
            class to give it a type; a subclass takes its base's).
        ordered: Whether `gt`, `gte`, `lt`, `lte` and `equals` compare the type's values by an
            order the rewrites may reason with (strings by code point, unless folded).
        moment: What a calendar value is (`Moment`): an instant or a day.
        document: A JSON document, compared only through a path, each comparison typed by
            its literal.
        records: The Python classes a record's value of the type may be (a calendar value's
            text is checked when read), and `refused` the subclasses among them it may not:
            a bool is not a number; a datetime is a date in Python, but which date depends on
            a zone.
        sample: A value of the type as JSON writes it, for examples and generated filters.
        json_schema: The JSON Schema of one value of the type (`where/json_schema.py`).
        noun, nouns: How a filter's messages name one literal of the type and several
            ("expected a number", "in takes a list of numbers").
        record_noun, record_nouns: How a record's check names one value and several
            (`language/value_checks.py`: "expected an ISO 8601 date (YYYY-MM-DD)").
    """

    literals: tuple[type, ...] = ()
    records: tuple[type, ...] = ()
    refused: tuple[type, ...] = ()
    ordered: bool = False
    moment: Moment = ""
    document: bool = False
    sample: object = None
    json_schema: Mapping[str, object] = field(default_factory=dict)
    noun: str = ""
    nouns: str = ""
    record_noun: str = ""
    record_nouns: str = ""


#: The field table: each scalar type's data (a list type's items read their type's, through
#: `FieldType.element`). The order of `literals` across entries is the order `value_key` tries
#: a subclass in: `bool` before `int`, `datetime` before `date`.
TYPES: Mapping[FieldType, TypeEntry] = {
    FieldType.BOOLEAN: TypeEntry(
        literals=(bool,),
        records=(bool,),
        sample=True,
        json_schema={"type": "boolean"},
        noun="true or false",
        nouns="booleans",
        record_noun="true or false",
        record_nouns="true or false values",
    ),
    FieldType.NUMBER: TypeEntry(
        literals=(int, float, Decimal, Fraction),
        records=(int, float, Decimal),
        refused=(bool,),
        ordered=True,
        sample=1,
        json_schema={"type": "number"},
        noun="a number",
        nouns="numbers",
        record_noun="a number",
        record_nouns="numbers",
    ),
    FieldType.STRING: TypeEntry(
        literals=(str,),
        records=(str,),
        ordered=True,
        sample="a",
        json_schema={"type": "string"},
        noun="a string",
        nouns="strings",
        record_noun="a string",
        record_nouns="strings",
    ),
    FieldType.DATETIME: TypeEntry(
        literals=(datetime,),
        records=(datetime, str),
        ordered=True,
        moment="instant",
        sample="2020-01-01T00:00:00Z",
        json_schema={
            "type": "string",
            "description": "ISO 8601 date or date-time; no offset means UTC",
            "examples": ["2025-01-31", "2025-01-31T09:30:00Z"],
        },
        noun="an ISO 8601 date-time",
        nouns="date-times",
        record_noun="an ISO 8601 date-time",
        record_nouns="ISO 8601 date-times",
    ),
    FieldType.DATE: TypeEntry(
        literals=(date,),
        records=(date, str),
        refused=(datetime,),
        ordered=True,
        moment="day",
        sample="2020-01-01",
        json_schema={
            "type": "string",
            "format": "date",
            "pattern": "^[0-9]{4}-[0-9]{2}-[0-9]{2}$",
            "description": "ISO 8601 calendar date: a day, no time, no zone",
            "examples": ["1990-11-23"],
        },
        noun="an ISO 8601 date",
        nouns="dates",
        record_noun="an ISO 8601 date (YYYY-MM-DD)",
        record_nouns="ISO 8601 dates",
    ),
    FieldType.JSON: TypeEntry(document=True, record_noun="a JSON value"),
}
#: A list type's entry: none of a scalar's facts (no literal class, no order, no calendar
#: moment); what its items are is `FieldType.element`'s entry.
LIST_ENTRY = TypeEntry()

#: The calendar types: a date-time is an instant, a date a day without a zone.
CALENDAR_TYPES = frozenset({FieldType.DATETIME, FieldType.DATE})
#: The types a value inside a JSON document can be compared as.
JSON_VALUE_TYPES = (FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN)
#: The types a field declared inside a JSON document may have (docs/semantics-json.md, "Typed
#: fields inside JSON"): a date is its ISO 8601 text, a list a JSON array.
JSON_SOURCE_TYPES = (
    *JSON_VALUE_TYPES,
    FieldType.DATE,
    FieldType.STRING_LIST,
    FieldType.NUMBER_LIST,
    FieldType.BOOLEAN_LIST,
)


@dataclass(frozen=True, slots=True)
class Field:
    """One filterable field: its name in filters and records, and its value type.

    `source` places a custom field inside a JSON column: `("data", "plan")` reads the key
    `plan` of the `data` column, so `{"plan": "pro"}` means what
    `{"data": {"path": ["plan"], "equals": "pro"}}` does, typed by the declaration.
    """

    name: str
    type: FieldType
    source: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if self.source and (
            len(self.source) < 2 or not all(isinstance(k, str) for k in self.source)
        ):
            raise ValueError(
                f"field {self.name!r}: source is a column then at least one key, "
                f"e.g. ('data', {self.name!r})"
            )
        if self.source and self.type not in JSON_SOURCE_TYPES:
            raise ValueError(
                f"field {self.name!r}: a field stored inside JSON is a string, number, boolean, "
                "date (ISO 8601 text, YYYY-MM-DD) or a list of strings, numbers or booleans; a "
                "date-time inside JSON text has no order every engine shares (offsets, "
                "precision): keep it in a column, or declare the day as a date"
            )

    def accepts(self, op: Op) -> bool:
        return op in OPERATORS[self.type]

    def read_at(self) -> tuple[str, tuple[str, ...]]:
        """The column a condition on this field reads and the path inside it: a field
        declared inside JSON is the JSON column at its keys (`plan` at `data.plan` is
        `("data", ("plan",))`), any other field its own column with no path. Lowering and
        the format writers place a declared field with this one rule."""
        if self.source:
            return self.source[0], self.source[1:]
        return self.name, ()

    @property
    def list_operators(self) -> tuple[ListOp, ...]:
        """The list operators this field takes: Prisma's scalar-list filters on a list field,
        only the item tests on a list kept inside JSON, the array tests on a JSON field
        (through a path), none on a scalar. The one rule the readers, lowering, the messages
        and a builder's catalogue read."""
        if self.type is FieldType.JSON:
            return ARRAY_OPS
        if self.type.element is None:
            return ()
        return JSON_LIST_OPS if self.source else LIST_FIELD_OPS

    @property
    def takes_mode(self) -> bool:
        """Whether `mode: "insensitive"` applies: strings, JSON values and lists of strings
        in a column (a list kept inside JSON is compared case-sensitively)."""
        if self.type in (FieldType.STRING, FieldType.JSON):
            return True
        return self.type is FieldType.STRING_LIST and not self.source

    @property
    def takes_blank(self) -> bool:
        """Whether `blank` (null or the empty string) applies: string fields and data paths."""
        return self.type in (FieldType.STRING, FieldType.JSON)

    @property
    def operators(self) -> tuple[str, ...]:
        """The operators of this field's condition, as JSON spells them, sorted: its type's
        comparisons or list tests, and `blank` where it applies. The null tests
        (`{"f": null}`, `not: null`) apply to every field and `not` negates any of these, so
        neither is listed; `mode` is `takes_mode`. This is what a builder offers."""
        names = [str(op) for op in OPERATORS[self.type]] + [str(op) for op in self.list_operators]
        return tuple(sorted(names + ([BLANK] if self.takes_blank else [])))

    @property
    def operator_names(self) -> tuple[str, ...]:
        """Every key valid inside this field's operator object, for messages and suggestions."""
        if self.type.element is not None:
            names = sorted(str(op) for op in self.list_operators) + ["not"]
            return (*names, "mode") if self.takes_mode else tuple(names)
        names = sorted(str(op) for op in OPERATORS[self.type]) + ["not"]
        if self.takes_mode:
            names.append("mode")
        if self.takes_blank:
            names.append(BLANK)
        if self.type is FieldType.JSON:
            names.append("path")
            names.extend(JSON_STRING_ALIASES)
        return tuple(names)


@dataclass(frozen=True)
class Schema:
    """The set of fields a filter may use. Hashable, so a `Filter` can be compared with another.

    Build one with `Schema.of(email="string", points="number")` or `Schema.from_mapping(...)`.
    A list field's type ends in `[]`: `Schema.of(tags="string[]", scores="number[]")`.
    """

    fields: tuple[Field, ...]
    name: str = "custom"
    relations: tuple[Relation, ...] = ()
    time_zone: str = "UTC"
    """The IANA zone of calendar values (`start of today`, `within this month`) that name
    none (language/calendar.py)."""
    _by_name: Mapping[str, Field] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_name = {f.name: f for f in self.fields}
        if len(by_name) != len(self.fields):
            raise ValueError("a schema names each field once")
        for name in by_name:
            if name in {"AND", "OR", "NOT"}:
                raise ValueError(f"{name!r} is reserved for logical groups and cannot be a field")
        object.__setattr__(self, "_by_name", by_name)
        relation_names = [r.name for r in self.relations]
        if len(set(relation_names)) != len(relation_names) or set(relation_names) & set(by_name):
            raise ValueError("a schema names each field and relation once")
        for name in relation_names:
            if name in {"AND", "OR", "NOT"}:
                raise ValueError(
                    f"{name!r} is reserved for logical groups and cannot be a relation"
                )
        if self.time_zone != "UTC":
            from .zones import CalendarError, check_zone

            try:
                check_zone(self.time_zone)
            except CalendarError as exc:
                raise ValueError(f"{exc}; {exc.suggestion}") from None

    @classmethod
    def of(cls, name: str = "custom", /, **types: FieldSpec) -> Schema:
        """`Schema.of(email="string", points="number")`; the schema's own name, if any, comes
        first and unnamed (`Schema.of("contact", ...)`), so that every keyword is a field: a
        field may be called `name`."""
        return cls.from_mapping(types, name=name)

    @classmethod
    def from_mapping(cls, types: Mapping[str, FieldSpec], name: str = "custom") -> Schema:
        """Build a schema from `{field name: type name}`; raises ValueError on an unknown type.

        A value may also be `(type name, source)` for a field stored inside a JSON column,
        e.g. `("string", ("data", "plan"))`.
        """
        fields = []
        for field_name, spec in types.items():
            source: tuple[str, ...] = ()
            if isinstance(spec, tuple | list):  # a list: as JSON writes the pair
                type_name, source = spec[0], tuple(spec[1])
            else:
                type_name = spec
            try:
                field_type = FieldType(type_name)
            except ValueError:
                known = ", ".join(t.value for t in FieldType)
                raise ValueError(
                    f"field {field_name!r}: unknown type {type_name!r}; expected one of {known}"
                ) from None
            fields.append(Field(field_name, field_type, source))
        return cls(tuple(fields), name=name)

    def get(self, name: str) -> Field | None:
        return self._by_name.get(name)

    def __getitem__(self, name: str) -> Field:
        return self._by_name[name]

    def __contains__(self, name: object) -> bool:
        return name in self._by_name

    def __iter__(self) -> Iterator[Field]:
        return iter(self.fields)

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def with_fields(self, /, **types: FieldSpec) -> Schema:
        """A copy with more fields, e.g. to make `phoneNumber` filterable in one service, or
        `plan=("string", ("data", "plan"))` for a custom field kept in the `data` column."""
        merged: dict[str, FieldSpec] = {
            f.name: (f.type, f.source) if f.source else f.type for f in self.fields
        }
        merged.update(types)
        merged_schema = Schema.from_mapping(merged, name=self.name)
        return replace(merged_schema, relations=self.relations, time_zone=self.time_zone)

    def with_relations(self, *relations: Relation) -> Schema:
        """A copy that also has `relations` (see `language/relations.py`), e.g.
        `schema.with_relations(Relation("orders", Schema.of(total="number")))`."""
        return replace(self, relations=(*self.relations, *relations))

    def relation(self, name: str) -> Relation | None:
        """The relation called `name`, or None."""
        for relation in self.relations:
            if relation.name == name:
                return relation
        return None

    @cached_property
    def relation_names(self) -> tuple[str, ...]:
        return tuple(r.name for r in self.relations)

    def in_zone(self, time_zone: str) -> Schema:
        """A copy whose calendar values without a zone of their own are in `time_zone`."""
        return replace(self, time_zone=time_zone)


_CONTACT_FIELDS = Schema.of(
    "contact",
    email="string",
    firstName="string",
    lastName="string",
    company="string",
    country="string",
    city="string",
    points="number",
    referrals="number",
    isVerified="boolean",
    unsubscribed="boolean",
    createdAt="datetime",
    data="json",
)


class Quantifier(StrEnum):
    """How a where clause over related rows decides the contact (spelled as in JSON)."""

    SOME = "some"
    EVERY = "every"
    NONE = "none"
    IS = "is"
    IS_NOT = "isNot"


class Aggregate(StrEnum):
    """A value computed over related rows (spelled as in JSON)."""

    COUNT = "count"
    SUM = "sum"
    MIN = "min"
    MAX = "max"

    def value_type(self, field_type: FieldType | None = None) -> FieldType:
        """The type of this aggregate's value: a number for `count` (and over a field the
        related schema lacks), else the field's (a number for `sum`, which takes only
        numbers)."""
        if self is Aggregate.COUNT or field_type is None:
            return FieldType.NUMBER
        return field_type


TO_MANY = (Quantifier.SOME, Quantifier.EVERY, Quantifier.NONE)
TO_ONE = (Quantifier.IS, Quantifier.IS_NOT)

COUNT_FIELD = "count"
"""The name under which a `count`'s value is compared (and named in messages)."""


@dataclass(frozen=True)
class Relation:
    """One relation of a schema.

    Attributes:
        name: The key in filters and in records (`actions`).
        schema: The fields (and nested relations) of a related row.
        many: To-many (a list of rows; `some`/`every`/`none` and aggregates) or to-one (one row
            or none; `is`/`isNot`).
        table: The related table (or view) for SQL text.
        foreign_key: The related table's column holding the contact's key; with `through`,
            the link table's.
        key: The contact's column the foreign key refers to.
        columns: `(field, column)` pairs for related fields whose column is named otherwise
            (`("createdAt", "created_at")`).
        through: A link table between contacts and related rows (many-to-many): one row per
            pair, `foreign_key` naming the contact and `through_key` the related row.
        through_key: The link table's column holding the related row's `related_key`.
        related_key: The related table's column the link table's `through_key` refers to.
    """

    name: str
    schema: Schema
    many: bool = True
    table: str = ""
    foreign_key: str = "contact_id"
    key: str = "id"
    columns: tuple[tuple[str, str], ...] = ()
    through: str = ""
    through_key: str = ""
    related_key: str = "id"

    def __post_init__(self) -> None:
        if not self.table:
            object.__setattr__(self, "table", self.name)

    @property
    def quantifiers(self) -> tuple[Quantifier, ...]:
        return TO_MANY if self.many else TO_ONE

    @property
    def keys(self) -> tuple[str, ...]:
        """Every key valid in this relation's object, for messages and suggestions."""
        if not self.many:
            return tuple(q.value for q in TO_ONE)
        return (*(q.value for q in TO_MANY), *(a.value for a in Aggregate), "where")

    def aggregable(self, function: Aggregate) -> tuple[str, ...]:
        """The related fields `function` takes: numbers for `sum`, numbers and date-times for
        `min` and `max`."""
        kinds = {FieldType.NUMBER} if function is Aggregate.SUM else {FieldType.NUMBER}
        if function in (Aggregate.MIN, Aggregate.MAX):
            kinds |= CALENDAR_TYPES
        return tuple(f.name for f in self.schema if f.type in kinds and not f.source)
