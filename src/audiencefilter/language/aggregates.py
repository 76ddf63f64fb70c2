"""What an aggregate's test is for a contact with no related rows, read from the lowered test.

Its own module: `relations.py` is data that `nodes.py` imports, and this reads nodes.
"""

from __future__ import annotations

from .fields import Aggregate
from .nodes import And, Comparison, Const, IsNull, Node, Not, Or
from .values import holds


def over_no_rows(function: Aggregate, test: Node) -> bool | None:
    """The truth of a lowered `count` or `sum` test for a contact with no related rows (none
    meeting the where clause): the value is then 0 (docs/semantics-relations.md), never null, so the
    test is TRUE or FALSE. None for `min` and `max` (null over no rows, and over rows whose
    values are all null: the test may be UNKNOWN) or a test of another kind of node. SQL
    writers read it to answer the aggregate over groups of related rows instead of per
    contact (`relations_text.py`)."""
    if function not in (Aggregate.COUNT, Aggregate.SUM):
        return None
    return _at_zero(test)


def _at_zero(node: Node) -> bool | None:
    match node:
        case Const(value=value):
            return value
        case Comparison(op=op, value=literal, path=()) if not node.insensitive:
            return holds(op, 0, literal)
        case IsNull(path=()):
            return False
        case Not(item=item):
            inner = _at_zero(item)
            return None if inner is None else not inner
        case And(items=items) | Or(items=items):
            truths = [_at_zero(item) for item in items]
            if None in truths:
                return None
            return all(truths) if isinstance(node, And) else any(truths)
    return None
