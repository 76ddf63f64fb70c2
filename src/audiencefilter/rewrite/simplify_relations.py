"""`simplify` for relation conditions: the where clause over related rows simplified against
the related schema, and the quantifiers whose answer it fixes folded to constants.

Only whether W is TRUE for a row matters to a quantifier or to the rows an aggregate sees
(FALSE and UNKNOWN both leave the row out), so W is simplified in a positive position
whatever the polarity outside it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from ..language.fields import Schema
from ..language.nodes import FALSE, TRUE, Aggregated, Node, Quantified
from ..language.relations import Quantifier, relation_of


def simplify_relation(
    node: Quantified | Aggregated, schema: Schema, run: Callable[[Node, Schema], Node]
) -> Node:
    related = relation_of(schema, node.relation).schema
    where = run(node.where, related)
    if isinstance(node, Aggregated):
        return replace(node, where=where)
    if where == FALSE and node.quantifier is not Quantifier.EVERY:  # no row makes W TRUE
        return FALSE if node.quantifier in (Quantifier.SOME, Quantifier.IS) else TRUE
    if where == TRUE and node.quantifier is Quantifier.EVERY:
        return TRUE
    return replace(node, where=where)
