"""The readable text syntax: `parse_text` reads it and `to_text` writes it.

    points >= 100 and (country in ["FR", "DE"] or email ends with "@acme.com")

The syntax says everything the where-clause JSON can, and the two read to the same AST:
`parse_text(f.to_text()) == f` and `parse(f.to_json()) == f`. The grammar is
grammar/filter.lark; docs/syntax.md describes it for people. Reading is validated like JSON
input (schema, operator/type fit, value types, limits) and every problem found is reported at
once, each with its line and column.
"""

from __future__ import annotations

from lark.exceptions import UnexpectedInput

from ..errors import FilterError, Issue
from ..language.contact import CONTACT
from ..language.fields import Schema
from ..language.limits import DEFAULT_LIMITS, Limits, check_text_size
from ..language.nodes import Node
from . import lexer
from .errors import syntax_issue
from .grammar import text_parser
from .limits import canonical_size
from .read import RULES, Builder, build
from .write import to_text

__all__ = ["read_text", "to_text"]


def read_text(text: str, schema: Schema = CONTACT, *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Read a filter written in the text syntax into its validated tree (`audiencefilter.
    parse_text` wraps it in a `Filter`): a reader builds nodes only.

    Args:
        text: The filter, e.g. `email contains "gmail" and points >= 100`.
        schema: The fields the filter may use; the contact schema of the spec by default.
        limits: Bounds on depth, size, list length and text size, those of the JSON form.

    Returns:
        The tree, equal to the one `read_where` reads from the same filter's JSON.

    Raises:
        FilterError: listing every problem found, each with its line and column; `.source`
            holds `text`, so `render_error` can show where.
    """
    if not isinstance(text, str):
        raise TypeError(f"parse_text reads a str, not {type(text).__name__}")
    size = len(text.encode("utf-8", "surrogatepass"))
    check_text_size(size, limits)
    try:
        root, builder = build(
            text_parser(RULES, lexer.ENABLED).parse, text, schema, limits.max_array
        )
    except UnexpectedInput as exc:
        raise FilterError([syntax_issue(exc, text, schema.names)], source=text) from None
    issues = builder.issues + _limit_issues(root, builder, limits)
    if issues:
        issues.sort(key=lambda i: (i.line or 0, i.column or 0))
        raise FilterError(issues, source=text)
    return root


def _limit_issues(root: Node, builder: Builder, limits: Limits) -> list[Issue]:
    # Each AST node adds at most one level and three JSON keys (see text_limits), so a small
    # tree cannot be over the limits and need not be measured.
    if builder.nodes <= limits.max_depth and 3 * builder.nodes <= limits.max_nodes:
        return []
    size = canonical_size(root, limits.max_depth)
    issues = []
    if size.too_deep:
        # The node itself, or its nearest ancestor written with a token of its own.
        tokens = [builder.group_tokens.get(id(node)) for node in size.too_deep]
        token = next((t for t in reversed(tokens) if t is not None), None)
        line, column = builder.position(token) if token is not None else (1, 1)
        issues.append(
            Issue(
                path="",
                message=f"groups are nested deeper than {limits.max_depth} levels",
                suggestion="flatten the nesting: a run of and (or of or) needs no parentheses",
                line=line,
                column=column,
            )
        )
    if size.nodes > limits.max_nodes:
        issues.append(
            Issue(
                path="",
                message=f"the filter has more than {limits.max_nodes} conditions",
                suggestion="split it into several audiences or use in [...] lists",
                line=1,
                column=1,
            )
        )
    return issues
