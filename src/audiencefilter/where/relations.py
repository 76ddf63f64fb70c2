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
from typing import Any, Protocol

from ..errors import describe_value, did_you_mean
from ..language.conditions import shown
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
    example = (
        f'{{"{relation.name}": {{"some": {{...}}}}}}'
        if relation.many
        else f'{{"{relation.name}": {{"is": {{...}}}}}}'
    )
    if type(value) is not dict and not hasattr(value, "items"):
        reader.issues.add(
            path,
            f'expected an object of {", ".join(relation.keys)} for relation "{relation.name}", '
            f"found {describe_value(value)}",
            f"write e.g. {example}",
        )
        return TRUE
    reader.repeated(
        value,
        path,
        'the key "{key}" appears more than once',
        "keep one of them, or combine conditions with AND: [...]",
    )
    narrowing: Node = TRUE
    if "where" in value:
        where_path = (path, "where")
        if not relation.many or not any(key in _AGGREGATES for key in value):
            reader.issues.add(
                where_path,
                "where narrows the rows that count, sum, min and max see, and this object has "
                "none of them",
                'for a condition on related rows, write {"some": {...}}'
                if relation.many
                else f"write {example}",
            )
        else:
            narrowing = reader.related(relation, value["where"], where_path, depth + 1)
    items: list[Node] = []
    for key, operand in value.items():
        key_path = (path, key)
        if not reader.count(key_path):
            break
        if key == "where":
            continue
        quantifier = _QUANTIFIERS.get(key) if isinstance(key, str) else None
        if quantifier is not None and quantifier in relation.quantifiers:
            items.append(_quantified(reader, relation, quantifier, operand, key_path, depth))
        elif isinstance(key, str) and key in _AGGREGATES and relation.many:
            items.extend(
                _aggregated(reader, relation, _AGGREGATES[key], operand, narrowing, key_path, depth)
            )
        else:
            reader.issues.add(
                key_path,
                f'unknown key "{shown(str(key))}" for {"to-many" if relation.many else "to-one"} '
                f'relation "{relation.name}"; expected one of ' + ", ".join(relation.keys),
                did_you_mean(str(key), relation.keys),
            )
    return all_of(tuple(items))


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


def _aggregated(
    reader: WhereReader,
    relation: Relation,
    function: Aggregate,
    operand: Any,
    narrowing: Node,
    path: Path,
    depth: int,
) -> list[Node]:
    """One `Aggregated` per condition on the value (`{"gte": 3, "lt": 10}` is two)."""
    if function is Aggregate.COUNT:
        name, test_value, test_path = COUNT_FIELD, operand, path
    else:
        aggregable = relation.aggregable(function)
        if type(operand) is not dict and not hasattr(operand, "items") or len(operand) != 1:
            first = aggregable[0] if aggregable else "field"
            reader.issues.add(
                path,
                f"expected one related field and its condition for {function.value}, found "
                f"{describe_value(operand)}",
                f'write e.g. {{"{function.value}": {{"{first}": {{"gte": 10}}}}}}',
            )
            return []
        name, test_value = next(iter(operand.items()))
        test_path = (path, name)
        declared = relation.schema.get(name)
        if declared is None or name not in aggregable:
            if declared is None:
                message = f'unknown field "{shown(str(name))}" of relation "{relation.name}"'
                hint = did_you_mean(str(name), aggregable)
            else:
                applies = (
                    "number fields" if function is Aggregate.SUM else "number and date-time fields"
                )
                message = (
                    f'{function.value} applies to {applies}; "{name}" is a '
                    f"{declared.type.value} field"
                )
                hint = None
            reader.issues.add(
                test_path,
                message,
                hint or f"{function.value} takes " + (", ".join(aggregable) or "no field here"),
            )
            return []
    field = value_schema(relation, function, name)[name]
    test = reader.field(field, test_value, test_path, depth)
    return [
        aggregated(relation.name, function, name, part, narrowing)
        for part in _conjuncts(test)
        if part is not TRUE
    ]


def _conjuncts(node: Node) -> list[Node]:
    if isinstance(node, And):
        return [part for item in node.items for part in _conjuncts(item)]
    return [node]
