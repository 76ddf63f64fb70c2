"""react-querybuilder's query objects (`RuleGroupType`, and `RuleGroupTypeIC` with independent
combinators), read into the AST and written back (docs/interop.md).

A rule group is `{"combinator": "and" | "or", "not": bool, "rules": [...]}`; a rule is
`{"field", "operator", "value", "valueSource"?}`. Without a `combinator`, `rules` alternates
rule, `"and"`/`"or"`, rule, ... and `and` binds tighter than `or`.

Design choices:
- A rule means what react-querybuilder's own SQL export (`formatQuery(query, "sql")`, version
  8.24.1) means, which the interop tests prove on SQLite. Its SQL has three-valued logic, as our
  filters do: `!=`, `notIn` and `doesNotContain` leave out a null field, and so does our reading.
- The export skips what it does not write: a `muted` rule or group, a rule whose field or
  operator is the placeholder `~`; a group left with no rules is TRUE, its `not` ignored (the
  export's `(1 = 1)`), and a muted group alone in its parent is TRUE too. We skip the same. A
  rule the export would silently drop because its value is unusable (`in` with no values,
  `between` with one) is refused instead: dropping a condition widens an audience.
- The pattern operators (`contains`, `beginsWith`, `endsWith` and their negations) ignore case:
  the export writes `LIKE`, which ignores (ASCII) case on SQLite and MySQL, and our `contains`
  always does. A value holding `%` or `_` is refused: the export passes them to `LIKE` as
  wildcards, ours are literal characters.
- Values: react-querybuilder's inputs keep numbers as text, so a number field reads the
  numeral `"100"` as 100 (and refuses `"12abc"`); a JSON number beyond 2^53 is refused, since
  JavaScript would have rounded it. A boolean field takes `true`/`false`: the export quotes the
  string `"true"` as text, which SQLite never finds equal to a boolean.
- A field `data.plan` is the path `plan` inside the JSON field `data`; `valueSource: "field"`
  is a field reference.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any, Final

from ..errors import describe_value, did_you_mean
from ..language.conditions import REF, Conditions, Report, Syntax, Where, shown
from ..language.fields import COMPARISON_OPS, PATTERN_OPS, Field, FieldType, Op, Schema
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import (
    TRUE,
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
)
from ..language.values import InexactNumber, decimal_numeral
from ..language.visitor import Visitor
from ..where.decode import as_str, load_json
from .declared import at_paths
from .instants import sql_text, unportable
from .reading import Budget, Place, child, refuse

NAME = "react-querybuilder"
PLACEHOLDER = "~"
MAX_SAFE_INTEGER = 2**53

_SPELLINGS: Final = {
    Op.EQUALS: "=",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.CONTAINS: "contains",
    Op.STARTS_WITH: "beginsWith",
    Op.ENDS_WITH: "endsWith",
    Op.IN: "in",
    Op.NOT_IN: "notIn",
    Op.WITHIN: "within",
    Op.ANNIVERSARY: "anniversary",
}


@dataclass(frozen=True, slots=True)
class Operator:
    """What a react-querybuilder operator means: our operator, and whether negated.

    Attributes:
        name: Its spelling in react-querybuilder.
        op: Our operator; None for the null tests.
        negated: `!=`, `doesNotContain`, `notNull`, `notBetween`, ...
        between: `between`/`notBetween`: two values, `>=` the first and `<=` the second.
    """

    name: str
    op: Op | None
    negated: bool = False
    between: bool = False


OPERATOR_LIST: Final = (
    Operator("=", Op.EQUALS),
    Operator("!=", Op.EQUALS, negated=True),
    Operator("<", Op.LT),
    Operator(">", Op.GT),
    Operator("<=", Op.LTE),
    Operator(">=", Op.GTE),
    Operator("contains", Op.CONTAINS),
    Operator("beginsWith", Op.STARTS_WITH),
    Operator("endsWith", Op.ENDS_WITH),
    Operator("doesNotContain", Op.CONTAINS, negated=True),
    Operator("doesNotBeginWith", Op.STARTS_WITH, negated=True),
    Operator("doesNotEndWith", Op.ENDS_WITH, negated=True),
    Operator("null", None),
    Operator("notNull", None, negated=True),
    Operator("in", Op.IN),
    Operator("notIn", Op.NOT_IN),
    Operator("between", Op.GTE, between=True),
    Operator("notBetween", Op.GTE, negated=True, between=True),
)
"""react-querybuilder's default operators (`defaultOperators`), in its order."""
OPERATORS_BY_NAME: Final = {o.name.lower(): o for o in OPERATOR_LIST}
"""By lower-case name: the export compares operator names ignoring case."""
_NAMES = tuple(o.name for o in OPERATOR_LIST)
_REFERENCE_OPS = COMPARISON_OPS
_NUMERAL = re.compile(r"-?(?:0|[1-9][0-9]{0,3999})(?:\.[0-9]{1,4000})?(?:[eE][+-]?[0-9]{1,4})?\Z")


def _operator_names(field: Field) -> str:
    """The react-querybuilder operators a field takes, for "takes ..." suggestions."""
    names = [o.name for o in OPERATOR_LIST if o.op is None or field.accepts(o.op)]
    return ", ".join(f'"{name}"' for name in names)


RQB_SYNTAX = Syntax(
    op=lambda op: f'"{_SPELLINGS[op]}"',
    operator_names=_operator_names,
    describe=describe_value,
    written=lambda value: json.dumps(value, default=str),
    as_string=json.dumps,
    list_word="array",
    datetime_quotes='"',
    datetime_is_string=True,
    null_test=lambda name: 'test for null with the operator "null" (or "notNull")',
    null_in_list=lambda name: (
        f'to match nulls too, add a rule on "{name}" with the operator "null", joined with "or"'
    ),
    data_null_test='test for null with the operator "null" (or "notNull")',
    or_word='"or"',
    mode_word="case folding",
)
"""How react-querybuilder's names appear in the condition builder's messages."""


def read(source: object, schema: Schema, *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Read a react-querybuilder query (JSON text or the decoded object) into its tree.

    Raises:
        FilterError: every problem found, each at its path (`rules[1].rules[0].value`), with
            its line and column when the query was JSON text.
    """
    text: str | None = None
    if isinstance(source, str | bytes):
        text = as_str(source)
        source = load_json(source, limits)
    reader = _Reader(schema, limits)
    if text is not None:
        _locate_in(reader, text)
    root = reader.root(source)
    reader.budget.raise_if_any(text)
    return root


def _locate_in(reader: _Reader, text: str) -> None:
    """Problems found by `reader` get the line and column of their path in `text`."""
    from ..where.positions import line_column, positions

    spots = positions(text)
    reader.budget.locate = lambda path: _spot(text, spots, path, line_column)


def _spot(
    text: str,
    spots: Mapping[str, tuple[int, int]],
    path: str,
    line_column: Callable[[str, int], tuple[int, int]],
) -> tuple[int, int] | None:
    """The line and column of `path`'s value in the JSON text (or of its nearest parent)."""
    while path not in spots and path:
        path = path.rsplit(".", 1)[0] if "." in path.rsplit("]", 1)[-1] else path.rsplit("[", 1)[0]
    found = spots.get(path)
    return None if found is None else line_column(text, found[1])


def _is_map(value: object) -> bool:
    return isinstance(value, Mapping)


def _is_list(value: object) -> bool:
    return isinstance(value, list | tuple)


class _Reader:
    """One walk over a query, gathering every problem before raising."""

    def __init__(self, schema: Schema, limits: Limits) -> None:
        self.schema = schema
        self.budget = Budget(limits)
        self.conditions = Conditions(RQB_SYNTAX, limits.max_array, schema)

    def root(self, data: Any) -> Node:
        if not _is_map(data) or not _is_list(data.get("rules")):
            self.budget.add(
                "",
                f'expected a rule group {{"combinator": "and", "rules": [...]}}, found '
                f"{describe_value(data)}",
                None,
            )
            return TRUE
        node = self.group(data, "", 1, lonely=True)
        return TRUE if node is None else node

    def group(self, obj: Mapping[str, Any], path: Place, depth: int, lonely: bool) -> Node | None:
        """A rule group; None when the export leaves it out (muted among siblings)."""
        if obj.get("muted") is True:
            return TRUE if lonely else None
        if not self.budget.deeper(path, depth) or not self.budget.count(path):
            return TRUE
        rules = obj.get("rules")
        if not isinstance(rules, list | tuple):
            self.budget.add(
                child(path, "rules"),
                f"expected an array of rules and groups, found {describe_value(rules)}",
                None,
            )
            return TRUE
        node = self.members(obj, rules, path, depth)
        # No rule left: the export's `(1 = 1)`, without the group's NOT.
        return TRUE if node is None else self.negated(obj, node, path)

    def members(
        self, obj: Mapping[str, Any], rules: Sequence[Any], path: Place, depth: int
    ) -> Node | None:
        """The group's rules combined; None when none is left."""
        if "combinator" in obj:
            combine = self.combinator(obj.get("combinator"), child(path, "combinator"))
            items = self.items(rules, path, depth, strings=False)
            return _combined(items, combine)
        items = self.items(rules, path, depth, strings=True)
        return _independent(items)

    def negated(self, obj: Mapping[str, Any], node: Node, path: Place) -> Node:
        """The group's `not`: true negates it, false or absent leaves it."""
        flag = obj.get("not", False)
        if type(flag) is not bool:
            self.budget.add(
                child(path, "not"), f"expected true or false, found {describe_value(flag)}", None
            )
            return node
        return _negation(node) if flag else node

    def combinator(self, value: Any, path: Place) -> Callable[[tuple[Node, ...]], Node]:
        """`and` or `or` (any case, as the export writes it as given)."""
        word = value.lower() if isinstance(value, str) else None
        if word == "and":
            return And
        if word == "or":
            return Or
        self.budget.add(
            path,
            f'expected the combinator "and" or "or", found {describe_value(value)}',
            "xor has no SQL form on most engines; write it with and, or and not"
            if word == "xor"
            else None,
        )
        return And

    def items(
        self, rules: Sequence[Any], path: Place, depth: int, strings: bool
    ) -> list[tuple[str, Node]]:
        """The group's members that the export keeps, each with the combinator before it
        (independent combinators) or `""`."""
        kept: list[tuple[str, Node]] = []
        before = ""
        for index, item in enumerate(rules):
            at = child(child(path, "rules"), index)
            if self.budget.too_big:
                break
            if strings and index % 2 == 1:
                before = self.independent_combinator(item, at)
            elif node := self.member(item, at, depth, lonely=len(rules) == 1, strings=strings):
                kept.append((before, node))
        if strings and rules and len(rules) % 2 == 0:
            self.trailing_combinator(child(child(path, "rules"), len(rules) - 1))
        return kept

    def trailing_combinator(self, at: Place) -> None:
        self.budget.add(
            at,
            "a group with independent combinators ends with a rule or a group, not a combinator",
            "remove the last combinator",
        )

    def independent_combinator(self, item: Any, at: Place) -> str:
        """The `"and"`/`"or"` between two members of a group without a `combinator`."""
        word = item.lower() if isinstance(item, str) else None
        if word in ("and", "or"):
            return word
        self.budget.add(
            at,
            f'expected "and" or "or" between two rules, found {describe_value(item)}',
            'a group without "combinator" alternates rule, "and"/"or", rule',
        )
        return "and"

    def member(self, item: Any, at: Place, depth: int, lonely: bool, strings: bool) -> Node | None:
        """One member of a group: a rule or a nested group; None when the export skips it."""
        if _is_map(item) and _is_list(item.get("rules")):
            return self.group(item, at, depth + 1, lonely)
        if _is_map(item):
            return self.rule(item, at)
        expected = (
            "a rule or a group"
            if strings
            else "a rule or a group (a group with a "
            '"combinator" takes no "and"/"or" between its rules)'
        )
        self.budget.add(at, f"expected {expected}, found {describe_value(item)}", None)
        return None

    def rule(self, obj: Mapping[str, Any], path: Place) -> Node | None:
        """One rule; None when the export skips it (muted, or a placeholder)."""
        name, word = obj.get("field"), obj.get("operator")
        if obj.get("muted") is True or name == PLACEHOLDER or word == PLACEHOLDER:
            return None
        if not self.budget.count(path):
            return None
        operator = self.operator(word, child(path, "operator"))
        target = self.target(name, child(path, "field"))
        if operator is None or target is None:
            return TRUE
        source = obj.get("valueSource", "value")
        if source == "field":
            return self.reference_rule(target, operator, obj.get("value"), path)
        if source != "value":
            self.budget.add(
                child(path, "valueSource"),
                f'expected "value" or "field", found {describe_value(source)}',
                None,
            )
            return TRUE
        return self.value_rule(target, operator, obj.get("value"), path)

    def operator(self, word: Any, path: Place) -> Operator | None:
        """The operator a rule names; None (reported) when it is none of the defaults."""
        found = OPERATORS_BY_NAME.get(word.lower()) if isinstance(word, str) else None
        if found is None:
            self.budget.add(
                path,
                f"unknown operator {_quoted(word)}; expected one of "
                + ", ".join(f'"{n}"' for n in _NAMES),
                _alias(word) or did_you_mean(str(word), _NAMES),
            )
        return found

    def target(self, name: Any, path: Place) -> _Target | None:
        """The field a rule names: a field of the schema, or `json.key.key` inside a JSON
        field; None (reported) otherwise."""
        if not isinstance(name, str):
            self.budget.add(path, f"expected a field name, found {describe_value(name)}", None)
            return None
        field = self.schema.get(name)
        head, _, rest = name.partition(".")
        outer = None if field is not None or not rest else self.schema.get(head)
        if outer is not None and outer.type is FieldType.JSON:
            keys = self.conditions.data_keys(rest.split("."), self.budget.report(path))
            return None if keys is None else _Target(outer, keys)
        if field is None:
            self.budget.add(
                path,
                f'unknown field "{shown(name)}"',
                did_you_mean(name, self.schema.names)
                or "filterable fields are " + ", ".join(self.schema.names),
            )
            return None
        return self.scalar_field(field, path)

    def scalar_field(self, field: Field, path: Place) -> _Target | None:
        """A field a rule can compare: not a list, not a JSON document as a whole."""
        if field.type.element is not None:
            self.budget.add(
                path,
                f'"{field.name}" is a list field ({field.type.value}); '
                "react-querybuilder's operators compare one value",
                None,
            )
            return None
        if field.type is FieldType.JSON:
            self.budget.add(
                path,
                f'"{field.name}" is a JSON field, compared at a path',
                f'name a key inside it, e.g. "{field.name}.plan"',
            )
            return None
        return _Target(field, None)

    # Rules comparing with values.

    def value_rule(self, target: _Target, operator: Operator, value: Any, path: Place) -> Node:
        """A rule whose value is a literal (`valueSource: "value"`)."""
        at = child(path, "value")
        if operator.op is None:
            node = self.build(target, Op.EQUALS, None, at)
        elif operator.between:
            node = self.between(target, value, at)
        elif operator.op in (Op.IN, Op.NOT_IN):
            node = self.listed(target, operator.op, value, at)
        else:
            node = self.single(target, operator.op, value, at)
        return _negation(node) if operator.negated and node is not TRUE else node

    def single(self, target: _Target, op: Op, value: Any, path: Place) -> Node:
        """`field op value` for an operator taking one value."""
        if value is None or _is_list(value) or _is_map(value):
            hint = RQB_SYNTAX.null_test("") if value is None else 'use "in" for several values'
            self.budget.add(path, f"expected one value, found {describe_value(value)}", hint)
            return TRUE
        if op in PATTERN_OPS and not self.pattern_safe(value, path):
            return TRUE
        literal = self.literal(target, value, path)
        return TRUE if literal is _BAD else self.build(target, op, literal, path)

    def pattern_safe(self, value: Any, path: Place) -> bool:
        """Whether a pattern operator's value holds no `LIKE` wildcard (`%`, `_`)."""
        if not isinstance(value, str) or ("%" not in value and "_" not in value):
            return True
        self.budget.add(
            path,
            f"the value {json.dumps(value)} holds % or _, which react-querybuilder's SQL export "
            "passes to LIKE as wildcards (any text, any one character)",
            "remove them, or compare with another operator",
        )
        return False

    def listed(self, target: _Target, op: Op, value: Any, path: Place) -> Node:
        """`in`/`notIn`: an array, or a comma-separated string (`\\,` for a comma)."""
        items = self.values(value, path, keep_empty=False)
        if items is None:
            return TRUE
        if not items:
            self.budget.add(
                path,
                f"{RQB_SYNTAX.op(op)} takes at least one value, found none",
                "add values, or remove the rule (react-querybuilder's export drops "
                "it, which widens the audience)",
            )
            return TRUE
        literals = [self.literal(target, item, child(path, i)) for i, item in enumerate(items)]
        if any(literal is _BAD for literal in literals):
            return TRUE
        return self.build(target, op, literals, path)

    def between(self, target: _Target, value: Any, path: Place) -> Node:
        """`between`: `>=` the first value and `<=` the second (bounds kept in their order,
        as the export keeps them: `between 10 and 5` holds for no value)."""
        items = self.values(value, path, keep_empty=True)
        if items is None:
            return TRUE
        if len(items) != 2 or any(item == "" for item in items):
            self.budget.add(
                path,
                f"between takes two values, found {describe_value(value)}",
                'write e.g. [10, 20] or "10,20"',
            )
            return TRUE
        low, high = (self.literal(target, v, child(path, i)) for i, v in enumerate(items))
        if low is _BAD or high is _BAD:
            return TRUE
        return And(
            (
                self.build(target, Op.GTE, low, child(path, 0)),
                self.build(target, Op.LTE, high, child(path, 1)),
            )
        )

    def values(self, value: Any, path: Place, keep_empty: bool) -> list[Any] | None:
        """The values of a list operator, as the export splits and trims them."""
        if _is_list(value):
            return [item.strip() if isinstance(item, str) else item for item in value]
        if isinstance(value, str):
            parts = [part.strip() for part in _split(value)]
            return parts if keep_empty else [part for part in parts if part]
        if isinstance(value, int | float) and not isinstance(value, bool):
            return [value]
        self.budget.add(
            path,
            f"expected an array of values or a comma-separated string, "
            f"found {describe_value(value)}",
            None,
        )
        return None

    def literal(self, target: _Target, value: Any, path: Place) -> Any:
        """`value` as the literal the export means for the field: a numeral for a number
        field; `_BAD` (reported) for a value it would write in another type."""
        if target.keys is not None:
            return value
        field = target.field
        if field.type is FieldType.NUMBER and isinstance(value, str):
            return self.numeral(field, value, path)
        problem = _misfit(field, value)
        if problem is None:
            return value
        self.budget.add(path, *problem)
        return _BAD

    def numeral(self, field: Field, text: str, path: Place) -> Any:
        """A number field's value written as text: `"100"`, `"-2.5"`, `"1e3"`."""
        if _NUMERAL.match(text):
            try:
                number = json.loads(text, parse_float=decimal_numeral)
            except InexactNumber as exc:
                self.budget.add(path, str(exc), InexactNumber.hint)
                return _BAD
            if not isinstance(number, float) or number not in (float("inf"), float("-inf")):
                return number
        self.budget.add(
            path,
            f'expected a number for number field "{field.name}", found the string "{shown(text)}"',
            'react-querybuilder keeps numbers as text: write digits, e.g. "100" or "-2.5"',
        )
        return _BAD

    def build(self, target: _Target, op: Op, value: Any, path: Place) -> Node:
        """The condition, checked and built by the shared builder."""
        report = self.budget.report(path)
        field = target.field
        if target.keys is not None:
            insensitive = op in PATTERN_OPS
            return self.conditions.data_comparison(
                field, target.keys, op, value, insensitive, report
            )
        if not self.conditions.accepts(field, op, report) or not self.portable(
            field, op, value, path
        ):
            return TRUE
        return self.conditions.comparison(field, op, value, op in PATTERN_OPS, report)

    def portable(self, field: Field, op: Op, value: Any, path: Place) -> bool:
        """Whether each date-time value means one instant wherever the export's SQL runs
        (`instants.unportable`: the export quotes the value as it is); False (reported)
        otherwise."""
        if field.type is not FieldType.DATETIME:
            return True
        listed = isinstance(value, list)
        places = [child(path, i) for i in range(len(value))] if listed else [path]
        problems = [
            (place, unportable(text, op))
            for place, text in zip(places, value if listed else [value], strict=True)
            if isinstance(text, str)
        ]
        for place, problem in problems:
            if problem is not None:
                self.budget.add(place, *problem)
        return all(problem is None for _, problem in problems)

    # Rules comparing with another field.

    def reference_rule(self, target: _Target, operator: Operator, value: Any, path: Place) -> Node:
        """A rule whose value names another field (`valueSource: "field"`)."""
        at = child(path, "value")
        if operator.op is None:
            node = self.build(target, Op.EQUALS, None, at)
        elif operator.between or operator.op in (Op.IN, Op.NOT_IN):
            node = self.references(target, operator, value, at)
        elif operator.op in _REFERENCE_OPS:
            node = self.reference(target, operator.op, value, at)
        else:
            self.budget.add(
                at,
                f'"{operator.name}" with a field builds a LIKE pattern from '
                "that field, which a filter does not compare",
                "compare fields with =, !=, <, >, <= or >=",
            )
            return TRUE
        return _negation(node) if operator.negated and node is not TRUE else node

    def references(self, target: _Target, operator: Operator, value: Any, path: Place) -> Node:
        """`in`/`notIn`/`between` over fields: equalities ORed (`a IN (b, c)` is `a = b OR
        a = c` in SQL), or `>=` the first and `<=` the second."""
        names = self.values(value, path, keep_empty=operator.between)
        wanted = "two fields" if operator.between else "at least one field"
        if names is None or len(names) != 2 and operator.between or not names:
            if names is not None:
                self.budget.add(
                    path, f"{operator.name} takes {wanted}, found {describe_value(value)}", None
                )
            return TRUE
        ops = (Op.GTE, Op.LTE) if operator.between else (Op.EQUALS,) * len(names)
        tests = tuple(
            self.reference(target, op, name, child(path, i))
            for i, (op, name) in enumerate(zip(ops, names, strict=True))
        )
        if operator.between:
            return And(tests)
        either = tests[0] if len(tests) == 1 else Or(tests)
        return Not(either) if operator.op is Op.NOT_IN else either

    def reference(self, target: _Target, op: Op, name: Any, path: Place) -> Node:
        """`field op other` through the builder's field-reference rules."""
        report = _without_ref(self.budget.report(path))
        if target.keys is not None:
            return self.conditions.data_comparison(
                target.field, target.keys, op, {REF: name}, False, report
            )
        return self.conditions.comparison(target.field, op, {REF: name}, False, report)


_ALIASES: Final = {
    "eq": "=",
    "equals": "=",
    "==": "=",
    "ne": "!=",
    "neq": "!=",
    "<>": "!=",
    "notequals": "!=",
    "gt": ">",
    "gte": ">=",
    "ge": ">=",
    "lt": "<",
    "lte": "<=",
    "le": "<=",
    "startswith": "beginsWith",
    "notcontains": "doesNotContain",
    "isnull": "null",
    "isnotnull": "notNull",
    "nin": "notIn",
    "like": "contains",
}


def _alias(word: Any) -> str | None:
    """Another library's spelling of one of react-querybuilder's operators (`gte`, `<>`)."""
    name = _ALIASES.get(word.lower().replace("_", "")) if isinstance(word, str) else None
    return None if name is None else f'did you mean "{name}"?'


def _quoted(word: Any) -> str:
    return json.dumps(shown(word)) if isinstance(word, str) else describe_value(word)


def _misfit(field: Field, value: Any) -> tuple[str, str] | None:
    """Why the export would not write `value` as a literal of `field`'s type (the message and
    the fix), or None when it would."""
    kind, number = field.type, isinstance(value, int | float) and not isinstance(value, bool)
    if kind is FieldType.NUMBER and type(value) is int and abs(value) > MAX_SAFE_INTEGER:
        return (
            f"the number {value} is beyond 2^53, where JavaScript rounds numbers",
            f'write it as the string "{value}"',
        )
    if kind is FieldType.BOOLEAN and isinstance(value, str):
        found = describe_value(value)
        return (
            f'expected true or false for boolean field "{field.name}", found {found}',
            "write a JSON boolean: the export quotes a string as text",
        )
    if kind is FieldType.STRING and number:
        found = describe_value(value)
        return (
            f'expected a string for string field "{field.name}", found {found}',
            f'write "{value}"',
        )
    return None


@dataclass(frozen=True, slots=True)
class _Target:
    """What a rule's field names: a field, and the keys inside it for a JSON field."""

    field: Field
    keys: tuple[str, ...] | None


_BAD: Final = object()
"""A value refused (and reported) by `_Reader.literal`."""


def _without_ref(report: Report) -> Report:
    """`report` with the builder's `_ref` key left out of places: a rule names its field in
    `value` itself."""

    def retold(where: Where, message: str, suggestion: str | None) -> None:
        report(None if where is None else tuple(k for k in where if k != REF), message, suggestion)

    return retold


def _split(text: str) -> list[str]:
    """react-querybuilder's `splitBy(text, ",")`: split at commas, `\\,` being a comma kept."""
    parts: list[str] = []
    for index, chunk in enumerate(text.split("\\,")):
        pieces = chunk.split(",")
        if index and parts:
            parts[-1] += "," + pieces[0]
            parts.extend(pieces[1:])
        else:
            parts.extend(pieces)
    return parts


def _negation(node: Node) -> Node:
    """`not` of a node, kept as written: NOT of an empty group is `Not(TRUE)`, which is how
    the writer spells FALSE (react-querybuilder has no empty OR)."""
    return Not(node)


def _combined(
    items: list[tuple[str, Node]], combine: Callable[[tuple[Node, ...]], Node]
) -> Node | None:
    """A group's kept members under its one combinator."""
    nodes = tuple(node for _, node in items)
    if not nodes:
        return None
    return nodes[0] if len(nodes) == 1 else combine(nodes)


def _independent(items: list[tuple[str, Node]]) -> Node | None:
    """Members with a combinator before each: runs joined by `and` first, then `or` between
    the runs, as SQL reads the export's `a or b and c`."""
    runs: list[list[Node]] = []
    for word, node in items:
        if word == "or" or not runs:
            runs.append([node])
        else:
            runs[-1].append(node)
    terms = tuple(run[0] if len(run) == 1 else And(tuple(run)) for run in runs)
    if not terms:
        return None
    return terms[0] if len(terms) == 1 else Or(terms)


# The writer.


def write(node: Node, schema: Schema) -> dict[str, Any]:
    """The query react-querybuilder loads (`RuleGroupType`) for a tree.

    Raises:
        FilterError: a node with no faithful form (relations, list fields, blank, relative
            dates, case rules react-querybuilder's operators do not have), naming it.
    """
    written = _Writer(schema).visit(at_paths(node, schema, "react-querybuilder", paths=True))
    return written if "rules" in written else _group("and", [written])


def _group(combinator: str, rules: list[dict[str, Any]], negated: bool = False) -> dict[str, Any]:
    return {"combinator": combinator, "not": negated, "rules": rules}


_NEGATED_NAMES: Final = {
    "=": "!=",
    "contains": "doesNotContain",
    "beginsWith": "doesNotBeginWith",
    "endsWith": "doesNotEndWith",
    "null": "notNull",
}


class _Writer(Visitor[dict[str, Any]]):
    """Each node as a rule or a rule group."""

    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def visit_and(self, node: And) -> dict[str, Any]:
        return _group("and", [self.visit(item) for item in node.items])

    def visit_or(self, node: Or) -> dict[str, Any]:
        return _group("or", [self.visit(item) for item in node.items])

    def visit_not(self, node: Not) -> dict[str, Any]:
        """NOT of a group is its `not`; of a rule, the negated operator where there is one
        (`!=`, `notNull`, `doesNotContain`, ...); anything else a negated group around it."""
        inner = self.visit(node.item)
        if isinstance(node.item, And | Or):
            return {**inner, "not": True}
        negated = _NEGATED_NAMES.get(inner.get("operator", ""))
        if isinstance(node.item, Comparison | IsNull) and negated is not None:
            return {**inner, "operator": negated}
        return _group("and", [inner], negated=True)

    def visit_const(self, node: Const) -> dict[str, Any]:
        # An empty group is the export's `(1 = 1)`; its negation needs a group around it.
        return _group("and", []) if node.value else _group("and", [_group("and", [])], True)

    def visit_comparison(self, node: Comparison) -> dict[str, Any]:
        name = _rqb_operator(node)
        value = node.value
        if isinstance(value, tuple) and not value:
            raise refuse(
                node.field,
                f"an empty {node.op.value} list has no react-querybuilder "
                "form: its export drops the rule",
                "write the group TRUE or FALSE",
            )
        if isinstance(value, tuple) and any(isinstance(v, str) and v != v.strip() for v in value):
            raise refuse(
                node.field,
                f"a value of {node.op.value} starts or ends with a space, "
                "which react-querybuilder's export trims from list values",
                None,
            )
        if isinstance(value, tuple):
            literal: Any = [_json_value(node.field, v, node.path) for v in value]
        else:
            literal = _json_value(node.field, value, node.path)
        if node.op in PATTERN_OPS and ("%" in literal or "_" in literal):
            raise refuse(
                node.field,
                f"the value {json.dumps(literal)} holds % or _, which "
                "react-querybuilder's SQL export passes to LIKE as wildcards",
                None,
            )
        return {"field": _field_name(node.field, node.path), "operator": name, "value": literal}

    def visit_is_null(self, node: IsNull) -> dict[str, Any]:
        return {"field": _field_name(node.field, node.path), "operator": "null", "value": None}

    def visit_field_comparison(self, node: FieldComparison) -> dict[str, Any]:
        return {
            "field": node.field,
            "operator": _SPELLINGS[node.op],
            "value": node.other,
            "valueSource": "field",
        }

    def visit_blank(self, node: Blank) -> dict[str, Any]:
        raise refuse(
            node.field,
            "blank has no react-querybuilder operator",
            'write it as "null" or "=" "" joined with "or"',
        )

    def visit_list_test(self, node: ListTest) -> dict[str, Any]:
        raise refuse(
            node.field,
            f"{node.op.value} tests a list's items, which react-querybuilder's operators do not",
            None,
        )

    def visit_quantified(self, node: Quantified) -> dict[str, Any]:
        raise refuse(
            node.relation,
            "relation conditions have no react-querybuilder form",
            "keep them in the JSON form",
        )

    def visit_aggregated(self, node: Any) -> dict[str, Any]:
        raise refuse(
            node.relation,
            "relation conditions have no react-querybuilder form",
            "keep them in the JSON form",
        )


def _rqb_operator(node: Comparison) -> str:
    """The operator a comparison is written with, when react-querybuilder has its meaning:
    case-sensitive equality and order, case-insensitive patterns."""
    pattern = node.op in PATTERN_OPS
    if node.op not in _SPELLINGS or node.op in (Op.WITHIN, Op.ANNIVERSARY):
        raise refuse(node.field, f"{node.op.value} has no react-querybuilder operator", None)
    if node.insensitive != pattern and isinstance(_first(node.value), str):
        ignoring = "ignores" if node.insensitive else "minds"
        raise refuse(
            node.field,
            f"{node.op.value} that {ignoring} case has no "
            "react-querybuilder operator: its =, in and ordering mind case, its "
            "contains, beginsWith and endsWith ignore it",
            None,
        )
    return _SPELLINGS[node.op]


def _first(value: Any) -> Any:
    return value[0] if isinstance(value, tuple) and value else value


def _field_name(field: str, path: tuple[str, ...]) -> str:
    """`data.plan` for a path inside a JSON field; a key holding a dot has no such name."""
    if any("." in key or not key for key in path):
        raise refuse(
            field,
            f"the path {list(path)} has a key holding a dot, which "
            "react-querybuilder's field names cannot tell from a step",
            None,
        )
    return ".".join((field, *path))


def _json_value(field: str, value: Any, path: tuple[str, ...]) -> Any:
    """A literal as react-querybuilder holds it: date-times and dates as ISO 8601 text, a
    number JavaScript would round as its numeral; a relative date-time or a period has no
    form there."""
    if type(value) is int and abs(value) > MAX_SAFE_INTEGER:
        if path:  # inside JSON a numeral is a string, not this number
            raise refuse(
                field,
                f"the number {value} is beyond 2^53, where JavaScript rounds numbers",
                "keep this condition in the JSON form",
            )
        return str(value)
    if isinstance(value, str | int | float | bool):
        return value
    if isinstance(value, datetime):
        return sql_text(value)
    if isinstance(value, date):
        return value.isoformat()
    raise refuse(
        field,
        "a date-time relative to now has no react-querybuilder form",
        "resolve it first (Filter.resolve(now)), or keep the JSON form",
    )


__all__ = ["NAME", "OPERATOR_LIST", "RQB_SYNTAX", "read", "write"]
