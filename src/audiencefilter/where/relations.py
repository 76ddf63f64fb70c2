"""The where clause's relation objects: `{"actions": {"some": W}}`, `{"actions": {"count": 3}}`.

Kept beside `read.py` and called by its walker for a key that names a relation: this module
reads the shape of a relation object only. A where clause over related rows is read by the
walker itself against the related schema (`WhereReader.related`), and an aggregate's condition is
read as a field's operator object on the field the aggregate's value stands for
(`relations.value_schema`), so every operator, `not` and null rule and every message is the
one of an ordinary field.

Keys of one relation object are ANDed; `where` narrows the rows of the object's aggregates and
is refused where there is none to narrow.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from ..errors import describe_value, did_you_mean
from ..language.conditions import Conditions, shown
from ..language.fields import Field
from ..language.nodes import TRUE, And, Node, Quantified, aggregated, all_of
from ..language.relations import COUNT_FIELD, Aggregate, Quantifier, Relation, value_schema

Path = tuple[Any, str | int] | None
"""Where a value is: (the parent's path, key or index), linked outwards; None at the top."""


class IssueSink(Protocol):
    def add(self, path: Any, message: str, suggestion: str | None = None) -> None: ...


class WhereReader(Protocol):
    """What relation objects need of the where-clause walker (`read.py` implements it and
    passes itself in, so this module never imports its host)."""

    @property
    def issues(self) -> IssueSink: ...

    @property
    def conditions(self) -> Conditions: ...

    def deeper(self, path: Path, depth: int) -> bool: ...

    def count(self, path: Path) -> bool: ...

    def repeated(self, obj: Mapping[Any, Any], path: Path, what: str, suggestion: str) -> None: ...

    def related(self, relation: Relation, value: Any, path: Path, depth: int) -> Node: ...

    def field(self, field: Field, value: Any, path: Path, depth: int) -> Node: ...


_AGGREGATES = {a.value: a for a in Aggregate}
_QUANTIFIERS = {q.value: q for q in Quantifier}


def read_relation(
    reader: WhereReader, relation: Relation, value: Any, path: Path, depth: int
) -> Node:
    """The relation object at `path`: its conditions ANDed."""
    if not reader.deeper(path, depth) or not reader.count(path):
        return TRUE
    if not _is_relation_object(reader, relation, value, path):
        return TRUE
    narrowing = _narrowing(reader, relation, value, path, depth)
    read = _RelationObject(reader, relation, narrowing, depth)
    items: list[Node] = []
    for key, operand in value.items():
        key_path = (path, key)
        if not reader.count(key_path):
            break
        if key != "where":
            items.extend(read.key(key, operand, key_path))
    return all_of(tuple(items))


@dataclass(frozen=True, slots=True)
class _RelationObject:
    """One relation object being read: what each of its keys is read with."""

    reader: WhereReader
    relation: Relation
    narrowing: Node
    depth: int

    def key(self, key: Any, operand: Any, path: Path) -> list[Node]:
        """The conditions of one key of a relation object: a quantifier or an aggregate."""
        relation = self.relation
        quantifier = _QUANTIFIERS.get(key) if isinstance(key, str) else None
        if quantifier is not None and quantifier in relation.quantifiers:
            return [_quantified(self.reader, relation, quantifier, operand, path, self.depth)]
        if isinstance(key, str) and key in _AGGREGATES and relation.many:
            return self.aggregated(_AGGREGATES[key], operand, path)
        self.reader.issues.add(
            path,
            f'unknown key "{shown(str(key))}" for {"to-many" if relation.many else "to-one"} '
            f'relation "{relation.name}"; expected one of ' + ", ".join(relation.keys),
            did_you_mean(str(key), relation.keys),
        )
        return []

    def aggregated(self, function: Aggregate, operand: Any, path: Path) -> list[Node]:
        """One `Aggregated` per condition on the value (`{"gte": 3, "lt": 10}` is two)."""
        relation = self.relation
        if function is Aggregate.COUNT:
            name, test_value, test_path = COUNT_FIELD, operand, path
        else:
            named = _aggregated_field(self.reader, relation, function, operand, path)
            if named is None:
                return []
            name, test_value = named
            test_path = (path, name)
        field = value_schema(relation, function, name)[name]
        conditions = self.reader.conditions
        conditions.no_reference_in = f"{function.value}({relation.name})"
        try:
            test = self.reader.field(field, test_value, test_path, self.depth)
        finally:
            conditions.no_reference_in = ""
        parts = [part for part in _conjuncts(test) if part is not TRUE]
        return [aggregated(relation.name, function, name, part, self.narrowing) for part in parts]


def _example(relation: Relation) -> str:
    """A relation object of the simplest kind, for hints."""
    if relation.many:
        return f'{{"{relation.name}": {{"some": {{...}}}}}}'
    return f'{{"{relation.name}": {{"is": {{...}}}}}}'


def _is_relation_object(reader: WhereReader, relation: Relation, value: Any, path: Path) -> bool:
    """Whether `value` is an object (its repeated keys reported), as a relation's must be."""
    if type(value) is not dict and not hasattr(value, "items"):
        reader.issues.add(
            path,
            f'expected an object of {", ".join(relation.keys)} for relation "{relation.name}", '
            f"found {describe_value(value)}",
            f"write e.g. {_example(relation)}",
        )
        return False
    reader.repeated(
        value,
        path,
        'the key "{key}" appears more than once',
        "keep one of them, or combine conditions with AND: [...]",
    )
    return True


def _narrowing(
    reader: WhereReader, relation: Relation, value: Mapping[Any, Any], path: Path, depth: int
) -> Node:
    """The object's `where`: the rows its aggregates see (TRUE, all of them, without one); a
    problem where the object has no aggregate to narrow."""
    if "where" not in value:
        return TRUE
    where_path = (path, "where")
    if relation.many and any(key in _AGGREGATES for key in value):
        return reader.related(relation, value["where"], where_path, depth + 1)
    reader.issues.add(
        where_path,
        "where narrows the rows that count, sum, min and max see, and this object has none of them",
        'for a condition on related rows, write {"some": {...}}'
        if relation.many
        else f"write {_example(relation)}",
    )
    return TRUE


def _quantified(
    reader: WhereReader,
    relation: Relation,
    quantifier: Quantifier,
    operand: Any,
    path: Path,
    depth: int,
) -> Node:
    if operand is None and quantifier in (Quantifier.IS, Quantifier.IS_NOT):
        # Prisma's `is: null` (no related row) and `isNot: null` (a related row).
        flipped = Quantifier.IS_NOT if quantifier is Quantifier.IS else Quantifier.IS
        return Quantified(relation.name, flipped, TRUE)
    where = reader.related(relation, operand, path, depth + 1)
    return Quantified(relation.name, quantifier, where)


def _aggregated_field(
    reader: WhereReader, relation: Relation, function: Aggregate, operand: Any, path: Path
) -> tuple[str, Any] | None:
    """The related field a sum, minimum or maximum is of, and the condition on its value:
    `{"<field>": {...}}`; None after a problem."""
    aggregable = relation.aggregable(function)
    if type(operand) is not dict and not hasattr(operand, "items") or len(operand) != 1:
        reader.issues.add(path, *_not_one_field(function, operand, aggregable))
        return None
    name, test_value = next(iter(operand.items()))
    if name in aggregable and relation.schema.get(name) is not None:
        return name, test_value
    message, hint = _not_aggregable(relation, function, name)
    fields = ", ".join(aggregable) or "no field here"
    reader.issues.add((path, name), message, hint or f"{function.value} takes {fields}")
    return None


def _not_one_field(
    function: Aggregate, operand: Any, aggregable: tuple[str, ...]
) -> tuple[str, str]:
    first = aggregable[0] if aggregable else "field"
    return (
        f"expected one related field and its condition for {function.value}, found "
        f"{describe_value(operand)}",
        f'write e.g. {{"{function.value}": {{"{first}": {{"gte": 10}}}}}}',
    )


def _not_aggregable(relation: Relation, function: Aggregate, name: Any) -> tuple[str, str | None]:
    """Why `function` cannot be of the related field `name`: no such field, or not its type."""
    declared = relation.schema.get(name)
    if declared is None:
        message = f'unknown field "{shown(str(name))}" of relation "{relation.name}"'
        return message, did_you_mean(str(name), relation.aggregable(function))
    applies = "number fields" if function is Aggregate.SUM else "number and date-time fields"
    return (
        f'{function.value} applies to {applies}; "{name}" is a {declared.type.value} field',
        None,
    )


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, And):
        return [part for item in node.items for part in _conjuncts(item)]
    return [node]
