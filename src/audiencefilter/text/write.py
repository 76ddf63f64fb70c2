"""The AST to the text syntax: the inverse of `parse_text`, one spelling per AST.

Parentheses are exactly those the tree needs: a group inside a group of the same kind (which
the reader would otherwise merge into one n-ary group), an OR inside an AND, and anything but a
constant or another prefix `not` after `not`. So `parse_text(to_text(node)) == node` for every
node `parse` can produce; the property tests keep that true.

Negations print in their natural words where the text syntax has them: `email != "x"`,
`company is not null` and `company is not blank`; any other negation is `not (...)`.
"""

from __future__ import annotations

from types import UnionType

from ..language.fields import ALWAYS_FOLDED, ListOp
from ..language.nodes import (
    TRUE,
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
    aggregate_form,
)
from ..language.visitor import Visitor
from .literals import field_name, literal, reference
from .relations import aggregated_text, quantified_text
from .vocabulary import ARRAY_SPELLINGS, LIST_SPELLINGS, NEGATED_SPELLINGS, SPELLINGS


def to_text(node: Node, *, width: int | None = None) -> str:
    """The filter in the text syntax: `points >= 100 and country = "FR"`.

    Args:
        node: The AST.
        width: When given, a filter longer than this is laid out on several lines, one
            condition per line and each parenthesized group indented; otherwise one line.
    """
    flat = _Printer().visit(node)
    if width is None or len(flat) <= width:
        return flat
    return _Layout(width).render(node, 0)


def _is_prefix_negation(node: Node) -> bool:
    """Whether `node` prints as `not ...` (rather than `!=` or `is not null`)."""
    if not isinstance(node, Not):
        return False
    inner = node.item
    return not (
        isinstance(inner, IsNull | Blank)
        or (isinstance(inner, Comparison | FieldComparison) and inner.op in NEGATED_SPELLINGS)
        or (isinstance(inner, ListTest) and inner.op in _NEGATED_LIST_SPELLINGS)
        or (isinstance(inner, Aggregated) and _has_negated_spelling(inner.test))
    )


_NEGATED_LIST_SPELLINGS = {ListOp.EQUALS: "!=", ListOp.IS_EMPTY: "is not empty"}


class _Layout:
    """Line breaks before `and`/`or` and inside parentheses, for groups too long for a line.

    Only whitespace differs from the one-line form, so it reads back to the same AST.
    """

    def __init__(self, width: int) -> None:
        self.width = width
        self.flat = _Printer()

    def render(self, node: Node, indent: int) -> str:
        text = self.flat.visit(node)
        if indent + len(text) <= self.width:
            return text
        if isinstance(node, And | Or):
            word = "and" if isinstance(node, And) else "or"
            # A group inside a group gets parentheses when it must (see _Printer) and, when it
            # spans lines, always: `a or (b and c)` is the same AST as `a or b and c`.
            pieces = [
                self.block(item, indent)
                if isinstance(item, And | Or)
                and (
                    self.needs_parentheses(node, item)
                    or indent + len(self.flat.visit(item)) > self.width
                )
                else self.render(item, indent)
                for item in node.items
            ]
            return f"\n{' ' * indent}{word} ".join(pieces)
        if isinstance(node, Not) and isinstance(node.item, And | Or):
            return "not " + self.block(node.item, indent)
        return text

    @staticmethod
    def needs_parentheses(group: And | Or, item: Node) -> bool:
        return isinstance(item, Or) or (isinstance(group, And) and isinstance(item, And))

    def block(self, node: Node, indent: int) -> str:
        inner = self.render(node, indent + 4)
        return f"(\n{' ' * (indent + 4)}{inner}\n{' ' * indent})"


class _Printer(Visitor[str]):
    def visit_or(self, node: Or) -> str:
        return " or ".join(self.item(item, Or) for item in node.items)

    def visit_and(self, node: And) -> str:
        return " and ".join(self.item(item, And | Or) for item in node.items)

    def item(self, node: Node, needs_parentheses: type | UnionType) -> str:
        text = self.visit(node)
        return f"({text})" if isinstance(node, needs_parentheses) else text

    def visit_not(self, node: Not) -> str:
        inner = node.item
        if isinstance(inner, IsNull):
            return f"{reference(inner.field, inner.path)} is not null"
        if isinstance(inner, Blank):
            return f"{reference(inner.field, inner.path)} is not blank"
        if isinstance(inner, FieldComparison) and inner.op in NEGATED_SPELLINGS:
            spelled = NEGATED_SPELLINGS[inner.op]
            return f"{field_name(inner.field)} {spelled} {field_name(inner.other)}"
        if isinstance(inner, Comparison) and inner.op in NEGATED_SPELLINGS:
            return self.comparison(inner, NEGATED_SPELLINGS[inner.op])
        if isinstance(inner, ListTest) and inner.op in _NEGATED_LIST_SPELLINGS:
            return self.list_test(inner, _NEGATED_LIST_SPELLINGS[inner.op])
        if isinstance(inner, Aggregated) and _has_negated_spelling(inner.test):
            return self.aggregate(inner, self.visit(Not(inner.test)))  # `!=`, `is not null`
        text = self.visit(inner)
        if isinstance(inner, Const) or _is_prefix_negation(inner):
            return f"not {text}"
        return f"not ({text})"

    def visit_comparison(self, node: Comparison) -> str:
        return self.comparison(node, SPELLINGS[node.op])

    def comparison(self, node: Comparison, operator: str) -> str:
        if isinstance(node.value, tuple):
            value = "[" + ", ".join(literal(v) for v in node.value) + "]"
        else:
            value = literal(node.value)
        # `contains` always ignores case, so saying so would be noise.
        suffix = " ignoring case" if node.insensitive and node.op not in ALWAYS_FOLDED else ""
        return f"{reference(node.field, node.path)} {operator} {value}{suffix}"

    def visit_is_null(self, node: IsNull) -> str:
        return f"{reference(node.field, node.path)} is null"

    def visit_const(self, node: Const) -> str:
        return "true" if node.value else "false"

    def visit_quantified(self, node: Quantified) -> str:
        return quantified_text(node.relation, node.quantifier, self.visit(node.where), node.where)

    def visit_aggregated(self, node: Aggregated) -> str:
        if not isinstance(node.test, Comparison | IsNull):  # a tree built by hand: its one form
            return self.visit(aggregate_form(node))
        return self.aggregate(node, self.visit(node.test))

    def aggregate(self, node: Aggregated, test: str) -> str:
        """The aggregate with its test as printed on its field (`count != 5`)."""
        where = None if node.where == TRUE else self.visit(node.where)
        return aggregated_text(node, where, test)

    def visit_field_comparison(self, node: FieldComparison) -> str:
        return f"{field_name(node.field)} {SPELLINGS[node.op]} {field_name(node.other)}"

    def visit_blank(self, node: Blank) -> str:
        return f"{reference(node.field, node.path)} is blank"

    def visit_list_test(self, node: ListTest) -> str:
        if node.path:
            return self.array_test(node)
        return self.list_test(node, LIST_SPELLINGS[node.op])

    def array_test(self, node: ListTest) -> str:
        """A JSON array at a data path: `array_contains` of one value is `has`."""
        if node.op is ListOp.ARRAY_CONTAINS and len(node.value) == 1:
            operator, value = "has", literal(node.value[0])
        elif node.op is ListOp.ARRAY_CONTAINS:
            operator = ARRAY_SPELLINGS[node.op]
            value = "[" + ", ".join(literal(v) for v in node.value) + "]"
        else:
            operator, value = ARRAY_SPELLINGS[node.op], literal(node.value[0])
        suffix = " ignoring case" if node.insensitive else ""
        return f"{reference(node.field, node.path)} {operator} {value}{suffix}"

    def list_test(self, node: ListTest, operator: str) -> str:
        name = reference(node.field, ())
        if node.op is ListOp.IS_EMPTY:
            return f"{name} {operator}"
        if node.op is ListOp.HAS:
            value = literal(node.value[0])
        else:
            value = "[" + ", ".join(literal(v) for v in node.value) + "]"
        suffix = " ignoring case" if node.insensitive else ""
        return f"{name} {operator} {value}{suffix}"


def _has_negated_spelling(test: Node) -> bool:
    """A test whose negation has an operator of its own (`!=`, `is not null`)."""
    return isinstance(test, IsNull) or (
        isinstance(test, Comparison) and test.op in NEGATED_SPELLINGS
    )
