"""`Visitor[T]`: one handler per node kind, dispatched through a table built once per class.

Back-ends, the JSON writer and the text writer are visitors. A handler a subclass leaves out is
not inherited as a silent default: the table has no entry for it, and visiting such a node (or
a node of a kind added later) raises `UnhandledNodeError` naming the visitor and the kind. A
test keeps `missing_handlers` empty for every visitor of the library.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from .nodes import (
    NODE_TYPES,
    Aggregated,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Or,
    Quantified,
    unhandled,
)

T = TypeVar("T")


class Visitor(Generic[T]):
    """Maps each node to a result of type `T` by calling `visit_<kind>`."""

    _dispatch: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {
            t: handler
            for t in NODE_TYPES
            if (handler := getattr(cls, "visit_" + t.kind, None)) is not None
            and handler is not getattr(Visitor, "visit_" + t.kind, None)
        }

    def visit(self, node: Node) -> T:
        try:
            handler = self._dispatch[type(node)]
        except KeyError:
            unhandled(type(self).__qualname__, node)
        result: T = handler(self, node)
        return result

    # Declarations for type checking only: `visit` never calls these.

    def visit_and(self, node: And) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_or(self, node: Or) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_not(self, node: Not) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_comparison(self, node: Comparison) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_is_null(self, node: IsNull) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_const(self, node: Const) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_quantified(self, node: Quantified) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_aggregated(self, node: Aggregated) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_blank(self, node: Blank) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_field_comparison(self, node: FieldComparison) -> T:
        unhandled(type(self).__qualname__, node)

    def visit_list_test(self, node: ListTest) -> T:
        unhandled(type(self).__qualname__, node)


def missing_handlers(cls: type[Visitor[Any]]) -> list[str]:
    """The node kinds a visitor class has no handler for; a test keeps this empty."""
    return ["visit_" + t.kind for t in NODE_TYPES if t not in cls._dispatch]


class Rebuild(Visitor[Node]):
    """The tree-copying base: groups and negations rebuilt from their visited children, every
    other node returned as it is.

    A rewriting pass (lowering, the writers' declared-field placement) overrides only the kinds
    it changes; the walk down and/or/not is written once here, and the node kinds it leaves
    alone are named in one place instead of in each pass.
    """

    def visit_and(self, node: And) -> Node:
        return And(tuple(self.visit(item) for item in node.items))

    def visit_or(self, node: Or) -> Node:
        return Or(tuple(self.visit(item) for item in node.items))

    def visit_not(self, node: Not) -> Node:
        return Not(self.visit(node.item))

    def visit_const(self, node: Const) -> Node:
        return node

    def visit_comparison(self, node: Comparison) -> Node:
        return node

    def visit_is_null(self, node: IsNull) -> Node:
        return node

    def visit_blank(self, node: Blank) -> Node:
        return node

    def visit_list_test(self, node: ListTest) -> Node:
        return node

    def visit_field_comparison(self, node: FieldComparison) -> Node:
        return node

    def visit_quantified(self, node: Quantified) -> Node:
        return node

    def visit_aggregated(self, node: Aggregated) -> Node:
        return node
