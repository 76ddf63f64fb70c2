"""The field catalogue: the fields a filter may name, their types, the operators of each type.

A `Schema` is plain data so that a service embedding the library can describe its own contact
model. The parser, every back-end and the text syntax read the same catalogue, which is how an
operator that is valid in JSON is valid everywhere else too.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property


class FieldType(StrEnum):
    """The value types a filterable field can have.

    `JSON` is a column holding a JSON document (the contact's `data`): it is only compared
    through a `path`, and each comparison takes the type of its literal.
    """

    STRING = "string"
    NUMBER = "number"
    BOOLEAN = "boolean"
    DATETIME = "datetime"
    JSON = "json"
    STRING_LIST = "string[]"
    NUMBER_LIST = "number[]"
    BOOLEAN_LIST = "boolean[]"
    DATETIME_LIST = "datetime[]"

    @property
    def element(self) -> FieldType | None:
        """The type of each item of a list type (`string[]` holds strings); None otherwise."""
        return LIST_ELEMENTS.get(self)


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


FieldSpec = str | FieldType | tuple[str | FieldType, tuple[str, ...]]
"""A field's type name, or `(type name, source)` for a field stored inside a JSON column."""

ORDERING_OPS = frozenset({Op.GT, Op.GTE, Op.LT, Op.LTE})
PATTERN_OPS = frozenset({Op.CONTAINS, Op.STARTS_WITH, Op.ENDS_WITH})
LIST_OPS = frozenset({Op.IN, Op.NOT_IN})

#: Operators each type accepts, besides the field-level `not` (every type) and `mode` (strings).
OPERATORS: Mapping[FieldType, frozenset[Op]] = {
    FieldType.STRING: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | PATTERN_OPS,
    FieldType.NUMBER: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | ORDERING_OPS,
    FieldType.BOOLEAN: frozenset({Op.EQUALS}),
    FieldType.DATETIME: frozenset({Op.EQUALS, Op.IN, Op.NOT_IN}) | ORDERING_OPS,
    FieldType.JSON: frozenset(Op),
    FieldType.STRING_LIST: frozenset(),
    FieldType.NUMBER_LIST: frozenset(),
    FieldType.BOOLEAN_LIST: frozenset(),
    FieldType.DATETIME_LIST: frozenset(),
}
#: The item type of each list type; a list field takes the `ListOp`s, not the `Op`s.
LIST_ELEMENTS: Mapping[FieldType, FieldType] = {
    FieldType.STRING_LIST: FieldType.STRING,
    FieldType.NUMBER_LIST: FieldType.NUMBER,
    FieldType.BOOLEAN_LIST: FieldType.BOOLEAN,
    FieldType.DATETIME_LIST: FieldType.DATETIME,
}
#: The types a value inside a JSON document can be compared as.
JSON_VALUE_TYPES = (FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN)


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
        if self.source and self.type not in JSON_VALUE_TYPES:
            raise ValueError(
                f"field {self.name!r}: a field stored inside JSON is a string, number or boolean"
            )

    def accepts(self, op: Op) -> bool:
        return op in OPERATORS[self.type]

    @property
    def operator_names(self) -> tuple[str, ...]:
        """Every key valid inside this field's operator object, for messages and suggestions."""
        if self.type.element is not None:
            names = sorted(str(op) for op in LIST_FIELD_OPS) + ["not"]
            return (*names, "mode") if self.type.element is FieldType.STRING else tuple(names)
        names = sorted(str(op) for op in OPERATORS[self.type]) + ["not"]
        if self.type is FieldType.STRING or self.type is FieldType.JSON:
            names.append("mode")
        if self.type is FieldType.JSON:
            names.append("path")
        return tuple(names)


@dataclass(frozen=True)
class Schema:
    """The set of fields a filter may use. Hashable, so a `Filter` can be compared with another.

    Build one with `Schema.of(email="string", points="number")` or `Schema.from_mapping(...)`.
    A list field's type ends in `[]`: `Schema.of(tags="string[]", scores="number[]")`.
    """

    fields: tuple[Field, ...]
    name: str = "custom"
    _by_name: Mapping[str, Field] = field(init=False, repr=False, compare=False, hash=False)

    def __post_init__(self) -> None:
        by_name = {f.name: f for f in self.fields}
        if len(by_name) != len(self.fields):
            raise ValueError("a schema names each field once")
        for name in by_name:
            if name in {"AND", "OR", "NOT"}:
                raise ValueError(f"{name!r} is reserved for logical groups and cannot be a field")
        object.__setattr__(self, "_by_name", by_name)

    @classmethod
    def of(cls, name: str = "custom", **types: FieldSpec) -> Schema:
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
            if isinstance(spec, tuple):
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

    def with_fields(self, **types: FieldSpec) -> Schema:
        """A copy with more fields, e.g. to make `phoneNumber` filterable in one service, or
        `plan=("string", ("data", "plan"))` for a custom field kept in the `data` column."""
        merged: dict[str, FieldSpec] = {
            f.name: (f.type, f.source) if f.source else f.type for f in self.fields
        }
        merged.update(types)
        return Schema.from_mapping(merged, name=self.name)


CONTACT = Schema.of(
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
"""The filterable contact fields of the interface specification, and `data`, the contact's
free-form JSON object, filtered through paths."""
