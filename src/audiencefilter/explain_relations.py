"""`explain` for relation conditions: the outcome, and which related rows made it.

    ✓ TRUE  count(actions where name = "share") >= 3
            (3 actions where name = "share": act_1, act_4, act_9)

Each related row is explained by the plain evaluator itself, against the related schema and at
the same `now`; the rows for which W is TRUE are the ones named (for `every`, the ones for
which it is not), each by its `id`, or by its position when it has none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from .language.nodes import TRUE, Aggregated, Node, Not, Quantified
from .language.relations import Aggregate, Quantifier, relation_of, rows_schema, values_schema
from .language.values import accepts, record_value
from .text.write import to_text

Explain = Callable[[Node, Any, Mapping[str, Any]], Any]
"""`explain(node, schema, record) -> Explanation` at the caller's `now`."""


def _rows(value: Any, many: bool, name: str) -> Sequence[Mapping[str, Any]]:
    from .errors import RecordError

    if value is None:
        return ()
    if isinstance(value, list | tuple) and all(isinstance(r, Mapping) for r in value):
        return value
    if not many and isinstance(value, Mapping):
        return (value,)
    raise RecordError(f'relation "{name}" holds {type(value).__name__}; expected a list of rows')


def _name(row: Mapping[str, Any], index: int) -> str:
    key = row.get("id")
    return str(key) if key is not None else f"#{index + 1}"


def _listing(count: int, relation: str, where: Node, names: list[str]) -> str:
    scope = relation if where == TRUE else f"{relation} where {to_text(where)}"
    shown = ", ".join(names[:10]) + (", ..." if len(names) > 10 else "")
    return f"{count} {scope}" + (f": {shown}" if names else "")


def explain_relation(
    node: Quantified | Aggregated, schema: Any, record: Mapping[str, Any], explain: Explain
) -> tuple[bool | None, str]:
    """The outcome (None: UNKNOWN) and the sentence saying which rows made it."""
    relation = relation_of(schema, node.relation)
    rows = _rows(record.get(relation.name), relation.many, relation.name)
    related = rows_schema(schema, relation)  # in the contact's zone, as the back-ends take it
    matching = [
        (index, row) for index, row in enumerate(rows) if explain(node.where, related, row).matched
    ]
    names = [_name(row, index) for index, row in matching]
    if isinstance(node, Quantified):
        if node.quantifier is Quantifier.EVERY:
            others = [_name(r, i) for i, r in enumerate(rows) if all(i != j for j, _ in matching)]
            text = f"{len(others)} of {len(rows)} {relation.name} where it is not TRUE"
            return not others, text + (": " + ", ".join(others[:10]) if others else "")
        found = bool(matching)
        held = found if node.quantifier in (Quantifier.SOME, Quantifier.IS) else not found
        return held, _listing(len(matching), relation.name, node.where, names)
    value = _value(node, [row for _, row in matching], relation.schema)
    values = values_schema(schema, relation, node.function, node.field)
    probe = {node.field: value}
    if explain(node.test, values, probe).matched:
        outcome: bool | None = True
    elif explain(Not(node.test), values, probe).matched:
        outcome = False
    else:
        outcome = None
    label = (
        node.function.value
        if node.function is Aggregate.COUNT
        else f"{node.function.value}({node.field})"
    )
    shown = (
        "null"
        if value is None
        else (value.isoformat() if isinstance(value, datetime) else repr(value))
    )
    listing = _listing(len(matching), relation.name, node.where, names)
    return outcome, f"{label} = {shown} over {listing}"


def _value(node: Aggregated, rows: list[Mapping[str, Any]], schema: Any) -> Any:
    from .errors import RecordError

    if node.function is Aggregate.COUNT:
        return len(rows)
    kind = schema[node.field].type
    present = []
    for row in rows:
        value = row.get(node.field)
        if value is None:
            continue
        if not accepts(kind, value):
            raise RecordError(f'field "{node.field}" holds {type(value).__name__} {value!r}')
        present.append(record_value(kind, value))
    if node.function is Aggregate.SUM:
        return sum(present)
    if not present:
        return None
    return min(present) if node.function is Aggregate.MIN else max(present)
