"""`Visitor[T]`: one handler per node kind, dispatched through a table built once per class.

Back-ends, the JSON dumper and the text printer are all visitors, so adding a node kind is a
type error (or a failing coverage test) in every one of them rather than a silent fall-through.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar, Generic, TypeVar

from .nodes import NODE_TYPES, And, Comparison, Const, IsNull, Node, Not, Or

T = TypeVar("T")


class Visitor(Generic[T]):
    """Maps each node to a result of type `T` by calling `visit_<kind>`."""

    _dispatch: ClassVar[dict[type, Callable[[Any, Any], Any]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        cls._dispatch = {t: getattr(cls, "visit_" + t.kind) for t in NODE_TYPES}

    def visit(self, node: Node) -> T:
        result: T = self._dispatch[type(node)](self, node)
        return result

    def visit_and(self, node: And) -> T:
        raise NotImplementedError

    def visit_or(self, node: Or) -> T:
        raise NotImplementedError

    def visit_not(self, node: Not) -> T:
        raise NotImplementedError

    def visit_comparison(self, node: Comparison) -> T:
        raise NotImplementedError

    def visit_is_null(self, node: IsNull) -> T:
        raise NotImplementedError

    def visit_const(self, node: Const) -> T:
        raise NotImplementedError


def missing_handlers(cls: type[Visitor[Any]]) -> list[str]:
    """The node kinds a visitor class leaves to the base class; a test keeps this empty."""
    return [
        "visit_" + t.kind
        for t in NODE_TYPES
        if getattr(cls, "visit_" + t.kind) is getattr(Visitor, "visit_" + t.kind)
    ]
