"""A SQL `WHERE` condition, read into the AST with sqlglot and written back
(docs/interop.md).

Design choices:
- The reader takes what a SQL condition means on PostgreSQL, DuckDB and SQLite alike, and
  refuses what one of them reads otherwise, saying why: three-valued logic is ours too, so
  `<>`, `NOT IN` and `NOT` leave out nulls as in SQL. `LIKE` minds case (the standard;
  SQLite and MySQL ignore ASCII case unless told otherwise), so `LIKE '%abc%'` is refused when
  `abc` has letters (our `contains` always ignores case; write `ILIKE`); a pattern is read
  only when it is literal text with `%` at one or both ends, no `_` and no backslash (an escape
  in PostgreSQL, a character in SQLite).
- A literal has the column's type: `points > '5'` and `country = 5` are refused, since
  engines disagree on converting them.
- `EXISTS (SELECT 1 FROM actions WHERE actions.sub_id = contacts.id AND ...)` is a relation's
  `some` (`NOT EXISTS`: `none`; `NOT EXISTS (... AND (W) IS NOT TRUE)`: `every`), when the
  subquery reads one relation's table, correlated on its foreign key and nothing else.
- Hostile text is bounded before sqlglot sees it: the text limit, then the tokens' nesting
  (parentheses and prefix operators) against the depth limit, so its recursive parser never
  runs out of stack; AND/OR chains are flattened without recursion.
- The writer gives a portable condition, in this reader's subset, that reads back to the same
  filter; `Filter.to_sql(dialect)` remains the way to run a filter on an engine, where every
  rule (case folding, JSON, lists, aggregates) is written for that engine.
"""

from __future__ import annotations

import json
import re
import unicodedata
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any, Final

from ..errors import FilterError, Issue, describe_value, did_you_mean
from ..language.conditions import REF, Conditions, Syntax, Where, shown
from ..language.fields import MIRRORED, Field, FieldType, Op, Schema
from ..language.limits import DEFAULT_LIMITS, Limits, check_text_size
from ..language.nodes import (
    FALSE,
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
    all_of,
)
from ..language.relations import Quantifier, Relation
from ..language.values import InexactNumber, decimal_numeral
from ..language.visitor import Visitor
from .declared import at_paths
from .instants import sql_text, unportable
from .reading import Budget, refuse

NAME = "sql"
CONTACTS = "contacts"
"""The contact table a relation's subquery correlates with (as `Filter.to_sql` names it)."""

_SPELLINGS: Final = {
    Op.EQUALS: "=",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.CONTAINS: "ILIKE '%...%'",
    Op.STARTS_WITH: "LIKE '...%'",
    Op.ENDS_WITH: "LIKE '%...'",
    Op.IN: "IN",
    Op.NOT_IN: "NOT IN",
    Op.WITHIN: "within",
    Op.ANNIVERSARY: "anniversary",
}

SQL_SYNTAX = Syntax(
    op=lambda op: _SPELLINGS[op],
    operator_names=lambda f: (
        "=, <>, <, >, <=, >=, IN, NOT IN, BETWEEN, IS NULL"
        + (", LIKE, ILIKE" if f.type is FieldType.STRING else "")
    ),
    describe=describe_value,
    written=lambda value: _literal(value),
    as_string=lambda text: _literal(text),
    list_word="list",
    datetime_quotes="'",
    datetime_is_string=True,
    null_test=lambda name: f"test for null with {name} IS NULL or {name} IS NOT NULL",
    null_in_list=lambda name: f"to match nulls too, add: OR {name} IS NULL",
    data_null_test="test for null with IS NULL or IS NOT NULL",
    or_word="OR",
    mode_word="ILIKE",
)
"""How SQL spells what the condition builder's messages name."""


def read(
    source: object, schema: Schema, *, limits: Limits = DEFAULT_LIMITS, dialect: str | None = None
) -> Node:
    """Read the text of a SQL `WHERE` condition (without the word WHERE) into its tree;
    `dialect` is sqlglot's name of the dialect it is written in (neutral by default).

    Raises:
        FilterError: every problem found, each with its line and column in the text.
    """
    source = _text_of(source)
    check_text_size(len(source.encode("utf-8", "surrogatepass")), limits)
    tree = _parse(source, limits, dialect)
    reader = _Reader(source, schema, limits)
    root = reader.condition(tree, _Scope(schema, (CONTACTS,)), 1)
    reader.budget.raise_if_any(source)
    return root


def _text_of(source: object) -> str:
    """`source` when it is text; a `FilterError` naming what it is otherwise."""
    if isinstance(source, str):
        return source
    message = f"expected the text of a SQL condition, found {describe_value(source)}"
    raise FilterError([Issue(path="", message=message)])


def _parse(text: str, limits: Limits, dialect: str | None) -> Any:
    """sqlglot's tree of the condition, after bounding its nesting; a `FilterError` with the
    line and column of the first problem otherwise."""
    import sqlglot
    from sqlglot import exp
    from sqlglot.errors import ParseError, SqlglotError, TokenError
    from sqlglot.tokens import Tokenizer

    try:
        tokens = Tokenizer(dialect=dialect).tokenize(text)
        _check_nesting(tokens, limits)
        return sqlglot.parse_one(text, read=dialect, into=exp.Condition)
    except ParseError as exc:
        raise _parse_error(text, exc) from None
    except (TokenError, SqlglotError) as exc:
        raise _syntax_error(text, str(exc).splitlines()[0], {}) from None
    except RecursionError:
        raise _syntax_error(text, "the condition is nested too deeply", {}) from None


def _parse_error(text: str, exc: Any) -> FilterError:
    """sqlglot's `ParseError` as a `FilterError` at its first problem's line and column."""
    first = exc.errors[0] if exc.errors else {}
    return _syntax_error(text, first.get("description") or str(exc), first)


_PREFIX = frozenset({"NOT", "DASH", "PLUS"})


def _check_nesting(tokens: list[Any], limits: Limits) -> None:
    """Refuse parentheses, or runs of prefix operators (`NOT NOT ...`), deeper than the depth
    limit: the parser would recurse once per level."""
    depth = run = 0
    for token in tokens:
        kind = token.token_type.name
        depth += (kind == "L_PAREN") - (kind == "R_PAREN")
        run = run + 1 if kind in _PREFIX else 0
        if depth > limits.max_depth or run > limits.max_depth:
            raise FilterError(
                [
                    Issue(
                        path="",
                        message=f"the condition is nested deeper than {limits.max_depth} levels",
                        suggestion="flatten the nesting: AND and OR take any number of conditions",
                        line=token.line,
                        column=max(token.col, 1),
                    )
                ]
            )


_MISSING = re.compile(r"Required keyword: '\w+' missing for <class '[\w.]*?(\w+)'>")
_WORDS: Final = {
    "EQ": "=",
    "NEQ": "<>",
    "GT": ">",
    "GTE": ">=",
    "LT": "<",
    "LTE": "<=",
    "And": "AND",
    "Or": "OR",
    "Not": "NOT",
    "Like": "LIKE",
    "ILike": "ILIKE",
    "In": "IN",
    "Between": "BETWEEN",
    "Is": "IS",
}


def _plain(message: str, where: dict[str, Any]) -> str:
    """sqlglot's message in the words of the condition: what is missing, or what was found."""
    missing = _MISSING.match(message)
    if missing:
        word = _WORDS.get(missing.group(1), missing.group(1))
        return f"{word} is missing what it compares or joins: the condition ends too early"
    found = where.get("highlight")
    return f"unexpected {json.dumps(found)}" if found else message


def _syntax_error(text: str, message: str, where: dict[str, Any]) -> FilterError:
    line, column = where.get("line"), where.get("col")
    found = where.get("highlight")
    if isinstance(column, int) and isinstance(found, str) and found:
        column = max(1, column - len(found) + 1)  # sqlglot names the token's last column
    message = _plain(message, where)
    return FilterError(
        [
            Issue(
                path="",
                message=f"invalid SQL condition: {message}",
                suggestion="write one condition, e.g. points >= 100 AND country IN ('FR', 'DE')",
                line=line,
                column=column,
            )
        ],
        source=text,
    )


@dataclass(frozen=True, slots=True)
class _Scope:
    """The table a condition reads: the schema of its rows and the names that qualify its
    columns (the contact table, or a relation's table and alias); `outer` is the scope a
    subquery correlates with."""

    schema: Schema
    names: tuple[str, ...]
    relation: Relation | None = None
    outer: _Scope | None = field(default=None, repr=False)

    def column_field(self, column: str) -> str:
        """The field a column of this table holds (`created_at` is `createdAt`)."""
        if self.relation is not None:
            for name, stored in self.relation.columns:
                if stored == column:
                    return name
        return column


def _op(kind: str) -> Op | None:
    return _COMPARISONS.get(kind)


_COMPARISONS: Final = {"EQ": Op.EQUALS, "GT": Op.GT, "GTE": Op.GTE, "LT": Op.LT, "LTE": Op.LTE}
_FLIPPED: Final = MIRRORED
_INTEGER = re.compile(r"[0-9]{1,4000}\Z")


class _Reader:
    """One walk over sqlglot's tree, gathering every problem with its line and column."""

    def __init__(self, text: str, schema: Schema, limits: Limits) -> None:
        self.text = text
        self.budget = Budget(limits)
        self.conditions = Conditions(SQL_SYNTAX, limits.max_array, schema)

    def add(self, expr: Any, place: str, message: str, suggestion: str | None = None) -> None:
        """A problem at `expr` (its first token's line and column), named by `place`."""
        line, column = self.position(expr)
        self.budget.issues.append(
            Issue(path=place, message=message, suggestion=suggestion, line=line, column=column)
        )

    def position(self, expr: Any) -> tuple[int | None, int | None]:
        """Where the first token of `expr` with a known position starts (or of the nearest
        expression around it that has one: `NULL` keeps none)."""
        while expr is not None:
            starts = [n.meta["start"] for n in expr.walk() if isinstance(n.meta.get("start"), int)]
            if starts:
                start = min(starts)
                line = self.text.count("\n", 0, start) + 1
                return line, start - self.text.rfind("\n", 0, start)
            expr = expr.parent
        return None, None

    def condition(self, expr: Any, scope: _Scope, depth: int) -> Node:
        """One condition (an AND/OR chain flattened without recursion)."""
        if not self.budget.deeper("", depth) or self.budget.too_big:
            return TRUE
        kind = type(expr).__name__
        if kind in ("And", "Or"):
            items = tuple(self.condition(e, scope, depth + 1) for e in _chain(expr, kind))
            return And(items) if kind == "And" else Or(items)
        if kind == "Paren":
            return self.condition(expr.this, scope, depth)
        if kind == "Not":
            return self.negation(expr.this, scope, depth)
        if not self.budget.count(""):
            return TRUE
        return self.predicate(expr, kind, scope, depth)

    def negation(self, inner: Any, scope: _Scope, depth: int) -> Node:
        """`NOT x`; `x NOT IN (...)` is `notIn`, `NOT EXISTS` a relation's `none` (or
        `every`), `IS NOT NULL` the negated null test."""
        kind = type(inner).__name__
        if kind == "In" and self.budget.count(""):
            return self.listed(inner, Op.NOT_IN, scope)
        if kind == "Exists" and self.budget.count(""):
            return self.exists(inner, scope, depth, negated=True)
        return Not(self.condition(inner, scope, depth + 1))

    def predicate(self, expr: Any, kind: str, scope: _Scope, depth: int) -> Node:
        """A comparison, a test or a constant."""
        op = _op(kind)
        if op is not None or kind == "NEQ":
            return self.comparison(expr, op, scope)
        handler = self.handlers().get(kind)
        if handler is not None:
            return handler(expr, scope, depth)
        self.add(
            expr,
            "",
            f"{_excerpt(expr)} is not a condition a filter reads",
            "compare a column with a value: =, <>, <, >, <=, >=, IN, BETWEEN, LIKE, "
            "IS NULL, EXISTS",
        )
        return TRUE

    def handlers(self) -> dict[str, Callable[[Any, _Scope, int], Node]]:
        return {
            "In": lambda e, s, d: self.listed(e, Op.IN, s),
            "Between": lambda e, s, d: self.between(e, s),
            "Like": lambda e, s, d: self.like(e, s, insensitive=False),
            "ILike": lambda e, s, d: self.like(e, s, insensitive=True),
            "Is": lambda e, s, d: self.is_test(e, s),
            "Boolean": lambda e, s, d: TRUE if e.this else FALSE,
            "Column": lambda e, s, d: self.bare_column(e, s),
            "Exists": lambda e, s, d: self.exists(e, s, d, negated=False),
            "Escape": lambda e, s, d: self.refused(
                e, "LIKE ... ESCAPE is read only without ESCAPE: write the pattern's text plainly"
            ),
        }

    def refused(self, expr: Any, message: str) -> Node:
        self.add(expr, "", message)
        return TRUE

    # Columns and values.

    def field(self, column: Any, scope: _Scope) -> Field | None:
        """The field a column names in `scope` (qualified by its table or alias, or not);
        None (reported) otherwise."""
        table = column.table
        if table and table not in scope.names:
            hint = f"qualify columns with {' or '.join(scope.names)}, or not at all"
            self.add(column, column.name, f'unknown table "{shown(table)}"', hint)
            return None
        name = scope.column_field(column.name)
        found = _named(scope.schema, name, exact=column.this.quoted)
        if found is None:
            names = scope.schema.names
            hint = did_you_mean(name, names) or "filterable columns are " + ", ".join(names)
            self.add(column, name, f'unknown column "{shown(name)}"', hint)
            return None
        return self.scalar_column(column, found)

    def scalar_column(self, column: Any, found: Field) -> Field | None:
        """`found`, when a condition on its column is portable SQL (no list, no JSON)."""
        if found.type.element is None and found.type is not FieldType.JSON and not found.source:
            return found
        inside = " read inside JSON" if found.source else ""
        self.add(
            column,
            found.name,
            f'"{found.name}" is a {found.type.value} field{inside}, which has no portable SQL '
            "condition",
            "keep this condition in the JSON form",
        )
        return None

    def value(self, expr: Any, target: Field) -> Any:
        """A literal operand, as the Python value the builder checks: `_BAD` (reported) for
        what is no literal, or a literal of another type than the column's."""
        kind = type(expr).__name__
        negative = kind == "Neg"
        literal = expr.this if negative else expr
        if type(literal).__name__ == "Literal" and not literal.is_string:
            return self.number(literal, target, negative)
        if kind == "Literal":
            return self.string(expr, target)
        if kind == "Boolean":
            return bool(expr.this)
        if kind == "Null":
            message = "a comparison with NULL is never TRUE in SQL"
            hint = f"write {target.name} IS NULL, or IS NOT NULL"
        else:
            message = f"expected a literal value, found {_excerpt(expr)}"
            hint = "compare with a number, a 'string', TRUE or FALSE, or another column"
        self.add(expr, target.name, message, hint)
        return _BAD

    def number(self, literal: Any, target: Field, negative: bool) -> Any:
        text = literal.this
        try:
            number: int | float = int(text) if _INTEGER.match(text) else decimal_numeral(text)
        except InexactNumber as exc:
            self.add(literal, target.name, str(exc), InexactNumber.hint)
            return _BAD
        except ValueError:
            number = float("nan")
        if number != number or number in (float("inf"), float("-inf")):
            self.add(literal, target.name, f"the number {shown(text)} is out of range", None)
            return _BAD
        if target.type is not FieldType.NUMBER:
            self.add(
                literal,
                target.name,
                f"expected {SQL_SYNTAX.expected(target.type)} for "
                f'{target.type.value} column "{target.name}", found the number '
                f"{shown(text)}",
                f"write '{shown(text)}' in quotes" if target.type is FieldType.STRING else None,
            )
            return _BAD
        return -number if negative else number

    def string(self, literal: Any, target: Field) -> Any:
        if target.type is FieldType.NUMBER:
            self.add(
                literal,
                target.name,
                f"expected a number for number column "
                f'"{target.name}", found the string {_literal(literal.this)}',
                f"write {shown(literal.this)} without quotes: engines convert text to "
                "numbers each their own way",
            )
            return _BAD
        if target.type is FieldType.BOOLEAN:
            self.add(
                literal,
                target.name,
                f"expected TRUE or FALSE for boolean column "
                f'"{target.name}", found the string {_literal(literal.this)}',
                None,
            )
            return _BAD
        return literal.this

    def build(self, expr: Any, target: Field, op: Op, value: Any, insensitive: bool) -> Node:
        """The condition, checked and built by the shared builder; problems at `expr`."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            part = expr
            if where and isinstance(where[0], int) and hasattr(expr, "expressions"):
                part = expr.expressions[where[0]] if where[0] < len(expr.expressions) else expr
            self.add(part, target.name, message, suggestion)

        if not self.conditions.accepts(target, op, report):
            return TRUE
        return self.conditions.comparison(target, op, value, insensitive, report)

    def portable(self, target: Field, op: Op, literals: list[tuple[Any, Any]]) -> bool:
        """Whether each date-time literal (its expression and value) means one instant on
        every engine (`instants.unportable`); False, reported at the literal, otherwise."""
        if target.type is not FieldType.DATETIME:
            return True
        problems = [
            (expr, unportable(value, op)) for expr, value in literals if isinstance(value, str)
        ]
        for expr, problem in problems:
            if problem is not None:
                self.add(expr, target.name, *problem)
        return all(problem is None for _, problem in problems)

    # Predicates.

    def comparison(self, expr: Any, op: Op | None, scope: _Scope) -> Node:
        """`a op b`: a column with a literal (either side) or with another column."""
        left, right = expr.this, expr.expression
        if type(left).__name__ != "Column" and type(right).__name__ == "Column":
            left, right = right, left
            op = None if op is None else _FLIPPED[op]
        if type(left).__name__ != "Column":
            self.add(
                expr,
                "",
                f"{_excerpt(expr)} compares no column",
                "compare a column itself with a value: functions and arithmetic are not "
                "read (for case, write ILIKE)",
            )
            return TRUE
        target = self.field(left, scope)
        if target is None:
            return TRUE
        node = self.compare(expr, target, op or Op.EQUALS, right, scope)
        return Not(node) if op is None and node is not TRUE else node

    def compare(self, expr: Any, target: Field, op: Op, right: Any, scope: _Scope) -> Node:
        if type(right).__name__ == "Column":
            other = self.field(right, scope)
            if other is None:
                return TRUE
            return self.build(expr, target, op, {REF: other.name}, False)
        value = self.value(right, target)
        if value is _BAD or not self.portable(target, op, [(right, value)]):
            return TRUE
        return self.build(expr, target, op, value, False)

    def listed(self, expr: Any, op: Op, scope: _Scope) -> Node:
        """`x IN (a, b)` and `x NOT IN (a, b)`, values only."""
        target = self.column(expr.this, scope, expr)
        if target is None:
            return TRUE
        if expr.args.get("query") is not None or not expr.expressions:
            return self.refused(expr, "IN takes a list of values here, not a subquery")
        values = [self.value(item, target) for item in expr.expressions]
        if any(v is _BAD for v in values):
            return TRUE
        if not self.portable(target, op, list(zip(expr.expressions, values, strict=True))):
            return TRUE
        return self.build(expr, target, op, values, False)

    def column(self, expr: Any, scope: _Scope, around: Any) -> Field | None:
        if type(expr).__name__ == "Column":
            return self.field(expr, scope)
        self.add(around, "", f"expected a column on the left of {_excerpt(around)}", None)
        return None

    def between(self, expr: Any, scope: _Scope) -> Node:
        """`x BETWEEN a AND b`: `>=` a and `<=` b (empty when a > b, as in SQL)."""
        if expr.args.get("symmetric"):
            return self.refused(
                expr, "BETWEEN SYMMETRIC is not read: write the bounds in order, without SYMMETRIC"
            )
        target = self.column(expr.this, scope, expr)
        if target is None:
            return TRUE
        low = self.compare(expr, target, Op.GTE, expr.args["low"], scope)
        high = self.compare(expr, target, Op.LTE, expr.args["high"], scope)
        return And((low, high))

    def like(self, expr: Any, scope: _Scope, insensitive: bool) -> Node:
        """`x [NOT] [I]LIKE 'pattern'` for literal-safe patterns only."""
        target = self.column(expr.this, scope, expr)
        pattern = expr.expression
        if target is None:
            return TRUE
        if type(pattern).__name__ != "Literal" or not pattern.is_string:
            return self.refused(expr, "LIKE is read with a 'pattern' in quotes only")
        found = _pattern(pattern.this, insensitive)
        if isinstance(found, str):
            self.add(
                pattern,
                target.name,
                found,
                "write 'text%', '%text' or '%text%' (ILIKE "
                "to ignore case), with no % or _ inside the text",
            )
            return TRUE
        op, text = found
        node = self.build(expr, target, op, text, insensitive)
        return Not(node) if expr.args.get("negate") and node is not TRUE else node

    def is_test(self, expr: Any, scope: _Scope) -> Node:
        """`x IS NULL` (`IS NOT NULL` arrives as its `NOT`)."""
        if type(expr.expression).__name__ != "Null":
            return self.refused(
                expr,
                f"{_excerpt(expr)}: IS TRUE and IS FALSE are not read "
                "(they are never UNKNOWN); write x = TRUE, or IS NULL",
            )
        target = self.column(expr.this, scope, expr)
        return TRUE if target is None else self.build(expr, target, Op.EQUALS, None, False)

    def bare_column(self, expr: Any, scope: _Scope) -> Node:
        """A boolean column standing alone: `isVerified` is `isVerified = TRUE`."""
        target = self.field(expr, scope)
        if target is None:
            return TRUE
        if target.type is not FieldType.BOOLEAN:
            return self.refused(
                expr,
                f'"{target.name}" is a {target.type.value} column, not '
                "a condition: compare it with a value",
            )
        return self.build(expr, target, Op.EQUALS, True, False)

    # Relations.

    def exists(self, expr: Any, scope: _Scope, depth: int, negated: bool) -> Node:
        """`[NOT] EXISTS (SELECT 1 FROM <relation table> WHERE <correlation> AND ...)`."""
        select = expr.this
        inner = self.subquery_scope(select, scope, expr)
        if inner is None or inner.relation is None:
            return TRUE
        conjuncts = self.uncorrelated(select, inner, expr)
        if conjuncts is None:
            return TRUE
        quantifier, where = self.quantified(conjuncts, inner, depth, negated)
        return Quantified(inner.relation.name, quantifier, where)

    def subquery_scope(self, select: Any, scope: _Scope, expr: Any) -> _Scope | None:
        """The relation a subquery reads: one table, with no clause but WHERE."""
        extra = [
            k
            for k, v in select.args.items()
            if v and k not in ("expressions", "from", "from_", "where", "kind")
        ]
        table = select.args.get("from_") or select.args.get("from")
        if type(select).__name__ != "Select" or extra or table is None:
            self.add(
                expr,
                "",
                "EXISTS is read over SELECT 1 FROM <relation> WHERE ... only",
                f"write e.g. EXISTS (SELECT 1 FROM actions WHERE actions.sub_id = "
                f"{CONTACTS}.id AND actions.name = 'share')",
            )
            return None
        return self.relation_scope(table.this, scope, expr)

    def relation_scope(self, table: Any, scope: _Scope, expr: Any) -> _Scope | None:
        name = table.name if type(table).__name__ == "Table" else ""
        relations = scope.schema.relations
        relation = next((r for r in relations if name in (r.table, r.name)), None)
        if relation is None:
            tables = ", ".join(r.table for r in relations) or "none"
            self.add(
                table,
                name,
                f'"{shown(name)}" is no relation of the filter; its tables are {tables}',
                did_you_mean(name, [r.table for r in relations]),
            )
            return None
        names = (name, table.alias) if table.alias else (name,)
        return _Scope(relation.schema, names, relation, scope)

    def uncorrelated(self, select: Any, inner: _Scope, expr: Any) -> list[Any] | None:
        """The subquery's conditions without its correlation, which must be there."""
        where = select.args.get("where")
        conjuncts = [] if where is None else list(_chain(_unparen(where.this), "And"))
        rest = [c for c in conjuncts if not _correlates(c, inner)]
        if len(rest) == len(conjuncts) - 1:
            return rest
        relation = inner.relation
        assert relation is not None and inner.outer is not None
        self.add(
            expr,
            relation.name,
            "a relation's subquery is correlated once, on its foreign key",
            f"write {inner.names[-1]}.{relation.foreign_key} = "
            f"{inner.outer.names[-1]}.{relation.key} in its WHERE, joined with AND",
        )
        return None

    def quantified(
        self, conjuncts: list[Any], inner: _Scope, depth: int, negated: bool
    ) -> tuple[Quantifier, Node]:
        """The quantifier and the related rows' condition: EXISTS is `some` (`is` for a
        to-one relation), NOT EXISTS `none` (`isNot`), and NOT EXISTS of rows whose
        condition IS NOT TRUE is `every`."""
        relation = inner.relation
        assert relation is not None
        every = _is_not_true(conjuncts[0]) if negated and len(conjuncts) == 1 else None
        if every is not None and relation.many:
            return Quantifier.EVERY, self.condition(every, inner, depth + 1)
        where = all_of(tuple(self.condition(c, inner, depth + 1) for c in conjuncts))
        if relation.many:
            return (Quantifier.NONE if negated else Quantifier.SOME), where
        return (Quantifier.IS_NOT if negated else Quantifier.IS), where


_BAD: Final = object()


def _named(schema: Schema, name: str, exact: bool) -> Field | None:
    """The field `name` names: exactly, or (for an unquoted identifier, which SQL folds) the
    one field equal to it ignoring case."""
    found = schema.get(name)
    if found is not None or exact:
        return found
    folded = [f for f in schema.names if f.lower() == name.lower()]
    return schema.get(folded[0]) if len(folded) == 1 else None


def _chain(expr: Any, kind: str) -> list[Any]:
    """The operands of an AND (or OR) chain, left to right, without recursion (sqlglot nests
    `a AND b AND c` to the left); parentheses around a same-kind chain are kept as written."""
    found: list[Any] = []
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node).__name__ == kind:
            stack.extend((node.expression, node.this))
        else:
            found.append(node)
    return found


def _unparen(expr: Any) -> Any:
    while type(expr).__name__ == "Paren":
        expr = expr.this
    return expr


def _correlates(expr: Any, inner: _Scope) -> bool:
    """Whether `expr` is `<relation>.<foreign key> = <outer table>.<key>` (either way)."""
    relation, outer = inner.relation, inner.outer
    if type(expr).__name__ != "EQ" or relation is None or outer is None:
        return False
    sides = {_qualified(expr.this), _qualified(expr.expression)}
    mine = {(name, relation.foreign_key) for name in inner.names}
    theirs = {(name, relation.key) for name in outer.names}
    return bool(sides & mine) and bool(sides & theirs)


def _qualified(expr: Any) -> tuple[str, str] | None:
    if type(expr).__name__ != "Column" or not expr.table:
        return None
    return expr.table, expr.name


def _is_not_true(expr: Any) -> Any:
    """`W` of `(W) IS NOT TRUE`, or None."""
    expr = _unparen(expr)
    if type(expr).__name__ != "Not" or type(expr.this).__name__ != "Is":
        return None
    test = expr.this
    boolean = test.expression
    return test.this if type(boolean).__name__ == "Boolean" and boolean.this else None


def _pattern(text: str, insensitive: bool) -> tuple[Op, str] | str:
    """The operator and text a LIKE pattern means, or why it has no faithful reading."""
    if "\\" in text:
        return "a backslash in a LIKE pattern is an escape in PostgreSQL and a character in SQLite"
    starts, ends = text.startswith("%"), text.endswith("%") and len(text) > 1
    core = text[1 if starts else 0 : len(text) - 1 if ends else len(text)]
    if not core or "%" in core or "_" in core:
        return (
            f"the pattern {_literal(text)} is not literal text with % at one or both ends "
            "(and _ matches any one character)"
        )
    if starts and ends:
        if not insensitive and not _caseless(core):
            return f"LIKE {_literal(text)} minds case, and a filter's contains ignores it"
        return Op.CONTAINS, core
    return (Op.ENDS_WITH if starts else Op.STARTS_WITH if ends else Op.EQUALS), core


def _caseless(text: str) -> bool:
    """Whether case folding leaves `text` and what could match it alike: no letter with a
    case, and no combining mark (`İ` folds to `i` and a combining dot)."""
    return text.lower() == text == text.upper() and not any(unicodedata.combining(c) for c in text)


def _excerpt(expr: Any) -> str:
    text: str = expr.sql()
    return text if len(text) <= 60 else text[:57] + "..."


# The writer.


def write(node: Node, schema: Schema) -> str:
    """A portable SQL condition for a tree, which `read` reads back to the same filter.

    Raises:
        FilterError: a node with no portable form here (case-insensitive equality, lists,
            JSON paths, blank, aggregates, relative dates, patterns holding % or _).
    """
    return _Writer(schema, (CONTACTS,)).visit(at_paths(node, schema, "SQL WHERE", paths=False))


def _literal(value: Any) -> str:
    """A SQL literal: 'text' (quotes doubled), a number, TRUE/FALSE, an ISO 8601 text."""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return repr(value)
    if isinstance(value, datetime):
        value = sql_text(value)
    elif isinstance(value, date):
        value = value.isoformat()
    if isinstance(value, str):
        return "'" + value.replace("'", "''") + "'"
    return json.dumps(str(value))


_PATTERN_SHAPES: Final = {Op.CONTAINS: "%{}%", Op.STARTS_WITH: "{}%", Op.ENDS_WITH: "%{}"}


class _Writer(Visitor[str]):
    """Each node as a SQL condition over the table `names[-1]` qualifies (the contact table,
    unqualified; a relation's rows, by their alias)."""

    def __init__(
        self,
        schema: Schema,
        names: tuple[str, ...],
        relation: Relation | None = None,
        level: int = 0,
    ) -> None:
        self.schema = schema
        self.names = names
        self.relation = relation
        self.level = level

    def column(self, name: str) -> str:
        stored = dict(self.relation.columns).get(name, name) if self.relation else name
        quoted = _identifier(stored)
        return f"{_identifier(self.names[-1])}.{quoted}" if self.relation else quoted

    def grouped(self, node: Node) -> str:
        text = self.visit(node)
        return f"({text})" if isinstance(node, And | Or) else text

    def visit_and(self, node: And) -> str:
        return " AND ".join(self.grouped(item) for item in node.items)

    def visit_or(self, node: Or) -> str:
        return " OR ".join(self.grouped(item) for item in node.items)

    def visit_not(self, node: Not) -> str:
        item = node.item
        if isinstance(item, IsNull) and not item.path:
            return f"{self.column(item.field)} IS NOT NULL"
        if isinstance(item, Comparison) and item.op is Op.EQUALS and _fixed(item.value):
            return self.visit(item).replace(" = ", " <> ", 1)
        if isinstance(item, Comparison) and item.op in _PATTERN_SHAPES:
            return (
                self.visit(item)
                .replace(" LIKE ", " NOT LIKE ", 1)
                .replace(" ILIKE ", " NOT ILIKE ", 1)
            )
        return f"NOT ({self.visit(item)})"

    def visit_const(self, node: Const) -> str:
        return "TRUE" if node.value else "FALSE"

    def visit_is_null(self, node: IsNull) -> str:
        _no_path(node.field, node.path)
        return f"{self.column(node.field)} IS NULL"

    def visit_field_comparison(self, node: FieldComparison) -> str:
        return f"{self.column(node.field)} {_SPELLINGS[node.op]} {self.column(node.other)}"

    def visit_comparison(self, node: Comparison) -> str:
        _no_path(node.field, node.path)
        column, value = self.column(node.field), node.value
        if node.op in _PATTERN_SHAPES:
            return f"{column} {_like(node)} {_literal(_PATTERN_SHAPES[node.op].format(value))}"
        if node.insensitive:
            raise refuse(
                node.field,
                f"{node.op.value} ignoring case has no portable SQL form",
                "use Filter.to_sql(dialect), which folds case per engine",
            )
        if node.op in (Op.IN, Op.NOT_IN):
            return f"{column} {_SPELLINGS[node.op]} ({_values(node)})"
        if node.op in (Op.WITHIN, Op.ANNIVERSARY) or not _fixed(value):
            raise refuse(
                node.field,
                "a date-time relative to now, or a period, has no fixed SQL literal",
                "resolve the filter first: Filter.resolve(now)",
            )
        return f"{column} {_SPELLINGS[node.op]} {_literal(value)}"

    def visit_quantified(self, node: Quantified) -> str:
        relation = self.schema.relation(node.relation)
        assert relation is not None
        alias = f"r{self.level + 1}"
        inner = _Writer(relation.schema, (alias,), relation, self.level + 1)
        where = inner.visit(node.where)
        correlation = (
            f"{_identifier(alias)}.{_identifier(relation.foreign_key)} = "
            f"{self.qualifier()}.{_identifier(relation.key)}"
        )
        if node.quantifier is Quantifier.EVERY:
            correlation += f" AND ({where}) IS NOT TRUE"
        elif node.where != TRUE:
            correlation += f" AND ({where})"
        negated = node.quantifier in (Quantifier.NONE, Quantifier.EVERY, Quantifier.IS_NOT)
        return (
            f"{'NOT ' if negated else ''}EXISTS (SELECT 1 FROM "
            f"{_identifier(relation.table)} AS {_identifier(alias)} WHERE {correlation})"
        )

    def qualifier(self) -> str:
        return _identifier(self.names[-1])

    def visit_aggregated(self, node: Aggregated) -> str:
        raise refuse(
            node.relation,
            f"{node.function.value} over a relation has no SQL form this reader reads back",
            "use Filter.to_sql(dialect) to run it",
        )

    def visit_blank(self, node: Blank) -> str:
        raise refuse(
            node.field,
            "blank has no one SQL condition",
            f"write it as {node.field} IS NULL OR {node.field} = '' if you mean that",
        )

    def visit_list_test(self, node: ListTest) -> str:
        raise refuse(
            node.field,
            "list tests have no portable SQL form",
            "use Filter.to_sql(dialect), which writes them per engine",
        )


def _identifier(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def _no_path(field: str, path: tuple[str, ...]) -> None:
    if path:
        raise refuse(
            field,
            "a path inside a JSON field has no portable SQL form",
            "use Filter.to_sql(dialect), which reads JSON per engine",
        )


def _like(node: Comparison) -> str:
    """LIKE or ILIKE for a pattern comparison whose text is literal-safe."""
    value = node.value
    if value == "":
        raise refuse(
            node.field,
            f"{node.op.value} with empty text is LIKE '%', which holds "
            "for every value, with no one reading back",
            "write IS NOT NULL",
        )
    if not isinstance(value, str) or any(c in value for c in "%_\\") or "\x00" in value:
        raise refuse(
            node.field,
            f"the value {json.dumps(value)} holds %, _ or a backslash, "
            "which no plain LIKE pattern matches literally on every engine",
            "use Filter.to_sql(dialect), which escapes them per engine",
        )
    return "ILIKE" if node.insensitive else "LIKE"


def _values(node: Comparison) -> str:
    values = node.value
    assert isinstance(values, tuple)
    if not values:
        raise refuse(
            node.field, f"an empty {node.op.value} list has no SQL form", "write TRUE or FALSE"
        )
    return ", ".join(_literal(v) for v in values)


def _fixed(value: object) -> bool:
    return isinstance(value, str | int | float | bool | date)


__all__ = ["NAME", "SQL_SYNTAX", "read", "write"]
