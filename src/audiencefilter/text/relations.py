"""The text syntax of relation conditions: `actions some (name = "share")` and
`count(actions where name = "share") >= 3`; the reader's rules and the writer's spelling.

The grammar reduces an opening (`actions some (`, `count(actions`) before the where clause
inside it is read, so the reader enters the related schema there and leaves it at the closing
parenthesis: the conditions inside are checked against the related fields by the ordinary
rules. An aggregate's test is read as a condition on a field named after the aggregated one
(`relations.value_schema`), so its operators, null tests and messages are a field's own.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from lark import Token

from ..errors import did_you_mean, join_path
from ..language.conditions import Conditions, shown
from ..language.fields import Field, Schema
from ..language.nodes import TRUE, Aggregated, Node, Quantified
from ..language.nodes import aggregated as aggregated_node
from ..language.relations import COUNT_FIELD, Aggregate, Quantifier, Relation, value_schema
from .literals import EscapeError, field_name, unquote

Item = tuple[Node, Token]
"""A rule's result: the node built and the token that places it in the text."""


class Builder(Protocol):
    """What relation rules need of the text reader (`read.py` implements it and calls these
    rules with itself, so this module never imports its host)."""

    nodes: int
    schema: Schema
    schemas: list[Schema]
    prefix: str
    prefixes: list[str]
    conditions: Conditions
    silent: int

    def issue(
        self,
        token: Token,
        message: str,
        suggestion: str | None = None,
        path: str = "",
        offset: int = 0,
    ) -> None: ...

    def check_field(self, field: Field, rest: list[Any], at: str) -> Node: ...

    def path_keys(self, token: Token, path: str) -> tuple[str, ...] | None: ...


#: How each quantifier is written (and printed), before its parenthesis.
QUANTIFIER_WORDS: dict[Quantifier, str] = {
    Quantifier.SOME: "some",
    Quantifier.EVERY: "every",
    Quantifier.NONE: "none",
    Quantifier.IS: "is",
    Quantifier.IS_NOT: "is not",
}
_QUANTIFIERS = {word: q for q, word in QUANTIFIER_WORDS.items()}
_NOTHING = Schema((), name="nothing")


@dataclass(frozen=True, slots=True)
class Opening:
    """A relation entered: what was found, or None after a problem (the inside is then read
    without reporting unknown fields a second time)."""

    token: Token
    relation: Relation | None
    quantifier: Quantifier | None = None
    function: Aggregate | None = None
    field: str = ""


def _words(token: Token) -> str:
    return " ".join(token.value.rstrip("(").lower().split())


def _enter(builder: Builder, relation: Relation | None, key: str = "") -> None:
    """Read what follows against `relation`'s rows; `key`, the where clause's key under the
    relation in JSON (`some`, `is`, `where`), goes on the path of every issue inside, so a
    problem there is placed as JSON places it (`orders.some.total`)."""
    builder.prefixes.append(builder.prefix)
    if relation is not None:
        builder.prefix = join_path(join_path(builder.prefix, relation.name), key)
    builder.schemas.append(builder.schema)
    builder.schema = _NOTHING if relation is None else relation.schema
    builder.conditions.schema_fields = builder.schema  # references name the related row's fields
    builder.silent += relation is None


def _leave(builder: Builder, opening: Opening) -> None:
    builder.schema = builder.schemas.pop()
    builder.prefix = builder.prefixes.pop()
    builder.conditions.schema_fields = builder.schema
    builder.silent -= opening.relation is None


def _relation(builder: Builder, token: Token) -> Relation | None:
    name = token.value
    if token.type == "QUOTED_NAME":
        try:
            name = unquote(name)
        except EscapeError as exc:
            builder.issue(token, str(exc), exc.suggestion, offset=exc.offset)
            return None
    relation = builder.schema.relation(name)
    if relation is None and not builder.silent:
        names = builder.schema.relation_names
        hint = did_you_mean(name, names) or _relations_are(names)
        builder.issue(token, f'unknown relation "{shown(name)}"', hint, join_path("", name))
    return relation


def _relations_are(names: tuple[str, ...]) -> str:
    return "relations are " + ", ".join(names) if names else "this schema has no relations"


def relation_open(builder: Builder, children: list[Any]) -> Opening:
    name_token, word = children
    relation = _relation(builder, name_token)
    quantifier = _QUANTIFIERS[_words(word)]
    if relation is not None and quantifier not in relation.quantifiers:
        allowed = " or ".join(f'"{QUANTIFIER_WORDS[q]} (...)"' for q in relation.quantifiers)
        kind = "to-many" if relation.many else "to-one"
        builder.issue(
            word,
            f'"{QUANTIFIER_WORDS[quantifier]}" does not apply to {kind} relation "{relation.name}"',
            f"write {relation.name} {allowed}",
            join_path("", relation.name),
        )
        relation = None
    _enter(builder, relation, str(quantifier))
    return Opening(name_token, relation, quantifier)


def relation_condition(builder: Builder, relation: Relation, token: Token, rest: list[Any]) -> Node:
    """A relation named where a field stands. On a to-one relation `company is null` (no
    related row) is `company is not (true)`, `company is not null` is `company is (true)`, as
    `{"company": {"is": null}}` reads in JSON; anything else is refused with the form that
    says it."""
    test = _null_test(rest)
    if not relation.many and test in ("is null", "is not null"):
        return Quantified(
            relation.name, Quantifier.IS_NOT if test == "is null" else Quantifier.IS, TRUE
        )
    name = field_name(relation.name)
    if relation.many and test in ("is null", "is not null", "is empty", "is not empty"):
        message = f'"{relation.name}" is a to-many relation: "{test}" does not apply'
        hint = f"write {name} none (true) for no related row, {name} some (true) for some"
    else:
        kind = "to-many" if relation.many else "to-one"
        message = f'"{relation.name}" is a {kind} relation, not a field'
        hint = f"write {_related_condition(relation, rest)}"
    builder.issue(token, message, hint, join_path("", relation.name))
    return TRUE


def _null_test(rest: list[Any]) -> str:
    """`is null`, `is not null` (`= null`, `!= null` read as those), `is [not] empty`, `is
    [not] blank`; empty for any other condition."""
    if rest[0].type == "NULL_TEST":
        return _words(rest[0])
    operand = rest[1] if len(rest) == 2 else None
    if isinstance(operand, Token) and operand.type == "NULL" and rest[0].type == "OPERATOR":
        return {"=": "is null", "==": "is null", "!=": "is not null"}.get(rest[0].value, "")
    return ""


def _related_condition(relation: Relation, rest: list[Any]) -> str:
    """The condition written on a relation as it reads on its rows: `company.country = "FR"`
    is `company is (country = "FR")`, `orders.total > 5` `orders some (total > 5)`."""
    inside = "..."
    if rest[0].type == "PATH" and all(isinstance(part, Token) for part in rest[1:]):
        inside = " ".join([rest[0].value.lstrip(". \t"), *(part.value for part in rest[1:])])
    word = "some" if relation.many else "is"
    return f"{field_name(relation.name)} {word} ({inside})"


def quantified(builder: Builder, children: list[Any]) -> Item:
    opening, (where, _), _closing = children
    _leave(builder, opening)
    builder.nodes += 2
    if opening.relation is None or opening.quantifier is None:
        return TRUE, opening.token
    return Quantified(opening.relation.name, opening.quantifier, where), opening.token


def aggregate_open(builder: Builder, children: list[Any]) -> Opening:
    word, name_token, *rest = children
    function = Aggregate(_words(word))
    relation = _relation(builder, name_token)
    field: str | None = COUNT_FIELD
    if relation is not None:
        field = _aggregate_field(builder, function, relation, children)
        relation = None if field is None else relation
    _enter(builder, relation, "where")
    return Opening(word, relation, None, function, field or COUNT_FIELD)


def _aggregate_field(
    builder: Builder, function: Aggregate, relation: Relation, children: list[Any]
) -> str | None:
    """The field of the related rows an aggregate is of (`COUNT_FIELD` for a count): one the
    function takes, of a to-many relation; None after an issue."""
    word, name_token, *rest = children
    keys = builder.path_keys(rest[0], relation.name) if rest else ()
    if not relation.many:
        _refuse_to_one(builder, function, relation, word)
        return None
    if keys is None:
        return None
    if function is Aggregate.COUNT:
        return _count_field(builder, relation, keys, rest)
    return _aggregated_field(builder, function, relation, keys, rest[0] if rest else name_token)


def _refuse_to_one(builder: Builder, function: Aggregate, relation: Relation, word: Token) -> None:
    """An aggregate of a to-one relation, which has one row or none to aggregate."""
    builder.issue(
        word,
        f'{function.value} applies to to-many relations; "{relation.name}" is to-one',
        f"write {field_name(relation.name)} is (...)",
        join_path("", relation.name),
    )


def _count_field(
    builder: Builder, relation: Relation, keys: tuple[str, ...], rest: list[Any]
) -> str | None:
    """`count(actions)`: a count names no field."""
    if not keys:
        return COUNT_FIELD
    name = field_name(relation.name)
    builder.issue(
        rest[0],
        "count counts related rows: it names no field",
        f"write count({name}) or count({name} where ...)",
        join_path("", relation.name),
    )
    return None


def _aggregated_field(
    builder: Builder, function: Aggregate, relation: Relation, keys: tuple[str, ...], at: Token
) -> str | None:
    """The one related field a sum, minimum or maximum takes; None after an issue (at the
    field, after the dot, or at the relation's name when there is none)."""
    aggregable = relation.aggregable(function)
    if len(keys) == 1 and keys[0] in aggregable:
        return keys[0]
    found = keys[0] if len(keys) == 1 else ".".join(keys)
    builder.issue(
        at,
        _not_aggregable(function, relation, keys, found),
        did_you_mean(found, aggregable) or _aggregable_fields(function, relation, aggregable),
        join_path(relation.name, found),
        offset=1 if keys else 0,  # the field, after the dot
    )
    return None


def _not_aggregable(
    function: Aggregate, relation: Relation, keys: tuple[str, ...], found: str
) -> str:
    if not keys:
        return f"{function.value} names the related field it takes"
    declared = relation.schema.get(found)
    if declared is None:
        return f'unknown field "{shown(found)}" of relation "{relation.name}"'
    applies = " fields" if function is Aggregate.SUM else " and date-time fields"
    return (
        f'{function.value} applies to number{applies}; "{found}" is a {declared.type.value} field'
    )


def _aggregable_fields(function: Aggregate, relation: Relation, aggregable: tuple[str, ...]) -> str:
    example = f"{function.value}({field_name(relation.name)}.<field>)"
    return (
        f"{function.value} takes "
        + (", ".join(aggregable) or "no field here")
        + f", e.g. {example}"
    )


def aggregated(builder: Builder, children: list[Any]) -> Item:
    opening: Opening = children[0]
    where: Node = TRUE
    index = 1
    if isinstance(children[1], Token) and children[1].type == "WHERE":
        where = children[2][0]
        index = 3
    _leave(builder, opening)
    rest = children[index + 1 :]
    builder.nodes += 2
    if opening.relation is None or opening.function is None:
        return TRUE, opening.token
    values = value_schema(opening.relation, opening.function, opening.field)
    test = builder.check_field(values[opening.field], rest, join_path("", opening.relation.name))
    if test is TRUE:
        return TRUE, opening.token
    node = aggregated_node(opening.relation.name, opening.function, opening.field, test, where)
    return node, opening.token


def quantified_text(
    relation: str, quantifier: Quantifier, where: str, node: Node | None = None
) -> str:
    """`orders some (total > 5)`; a to-one relation's row tested for nothing but being there
    reads `company is null` (`is not (true)`) and `company is not null` (`is (true)`)."""
    if node is TRUE and quantifier in (Quantifier.IS, Quantifier.IS_NOT):
        return f"{field_name(relation)} is {'not ' if quantifier is Quantifier.IS else ''}null"
    return f"{field_name(relation)} {QUANTIFIER_WORDS[quantifier]} ({where})"


def aggregated_text(node: Aggregated, where: str | None, test: str) -> str:
    """`count(actions where ...) >= 3`; `test` is the test as printed on its field."""
    target = field_name(node.relation)
    if node.function is not Aggregate.COUNT:
        target += "." + field_name(node.field)
    if where is not None:
        target += f" where {where}"
    return f"{node.function.value}({target}){test[len(field_name(node.field)) :]}"
