"""Our tree as a CEL expression, true exactly when the tree is TRUE (docs/interop.md, CEL).

Design choices:
- Two walks, as for MongoDB: `true(node)` is the expression true exactly when `node` is TRUE,
  `false(node)` the one true exactly when it is FALSE, so a `NOT` is the `false` of its item.
  CEL's `!` is used where its error falls exactly on our UNKNOWN (ordering and patterns, and
  groups of them: `exact`), so `NOT (a < 1 AND b > 2)` stays one negated group; `==` and `in`
  answer false for a null in CEL, so their `NOT` is written with the null test
  (`country != null && country != "FR"`), which the reader reads back as the `NOT`.
- Everything is written in the reader's subset, so reading the expression back gives the same
  filter (a `NOT` of a group of equalities comes back with De Morgan's laws applied, the same
  audience). What CEL cannot say as we mean it is refused, naming the filter path: relative
  and calendar values, case-insensitive tests (CEL's `lowerAscii` folds ASCII only),
  `contains` of text with case, a list's `equals` (`lists.py`), blanks and keys no
  identifier at a JSON path (`json_paths.py`), sums and extremes of rows (no such function in
  standard CEL).
- A to-one relation is its row (a map) or null: its test is `exists` over the list of at most
  one row `one_row` writes, whose `?:` condition never fails, so a null row gives `is` FALSE and
  every test on the row meets a map. A `count` of rows is CEL's `size` (an `int`, compared with
  integer literals: celpy compares no `int` with a `double`) of the rows `filter` keeps; CEL's
  `filter` fails where its predicate does, so the where clause must be one CEL always answers
  (`total`), which then keeps exactly the rows it is TRUE for, as a filter's count does.
- A test at a JSON path is written beside its literal's type and its `NOT` written out
  (`json_paths.py`), a list of numbers in guarded forms (`lists.py`), and an array at a path
  (a list declared inside JSON is one: `json_paths.in_json`) over its guard (`arrays.py`):
  none is exact, so `false` writes them itself.
- celpy fails where the specification answers on a double or a list compared with null, so a
  null test of those is written `type(x) == null_type`, and a negated `==` or `in` beside its
  null test, which every evaluator answers alike (docs/interop.md, CEL).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Final

from ...errors import FilterError, join_path
from ...language.data_paths import value_type
from ...language.fields import ORDERING_OPS, PATTERN_OPS, Field, FieldType, ListOp, Op, Schema
from ...language.nodes import (
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
    relative_values,
    unhandled,
)
from ...language.relations import COUNT_FIELD, Aggregate, Quantifier
from ..declared import at_paths
from ..folding import caseless
from ..logic import not_true
from ..reading import refuse
from . import arrays
from .json_paths import false_form, in_json, is_key, null_form, selected, true_form
from .lists import LIST_TYPES, written, written_numbers

SPELLINGS: Final = {
    Op.EQUALS: "==",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.IN: "in",
    Op.NOT_IN: "!(... in [...])",
    **{op: op.value for op in PATTERN_OPS},
}
"""Our operators as CEL spells them (in messages too)."""

WRITTEN_TYPES: Final = (
    FieldType.STRING,
    FieldType.NUMBER,
    FieldType.BOOLEAN,
    FieldType.DATETIME,
    FieldType.DATE,
)
_IDENTIFIER = re.compile(r"[_a-zA-Z][_a-zA-Z0-9]*\Z")
_KEYWORDS = frozenset({"true", "false", "null", "in"})
_EXACT_DOUBLE = 2**53
_ESCAPED = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}
_ROW = "r"
"""The variable of `exists` and `all`: a row of the relation."""

ATOM, RELATION, AND, OR = range(4)
"""How tightly a written expression binds: a name or call, a comparison, `&&`, `||`."""


@dataclass(frozen=True, slots=True)
class Written:
    """An expression written, and how tightly it binds (`ATOM` ... `OR`)."""

    text: str
    level: int
    whole: bool = False
    """Kept in parentheses among `&&`: a guarded test (`type(l) == list && ...`) reads back
    as one test only so."""

    def inside(self, level: int) -> str:
        """The text as an operand of an operator of `level`, in parentheses if it binds less."""
        return self.text if self.level <= level else f"({self.text})"


_Walk = Callable[[Node, str], Written]


def write(node: Node, schema: Schema) -> str:
    """`node` as a CEL expression, true exactly where the filter is TRUE.

    Raises:
        FilterError: a condition with no faithful CEL form, at its filter path.
    """
    placed = at_paths(in_json(node, schema), schema, "CEL", paths=True)
    return _Writer(schema, None).true(placed, "").text


def string_literal(text: str) -> str:
    """A CEL string literal of `text`: quotes, backslashes and control characters escaped."""
    return '"' + "".join(_escaped(c) for c in text) + '"'


def _escaped(char: str) -> str:
    if char in _ESCAPED:
        return _ESCAPED[char]
    return f"\\u{ord(char):04x}" if ord(char) < 0x20 or ord(char) == 0x7F else char


def exact(node: Node, schema: Schema) -> bool:
    """Whether CEL's expression of `node` fails exactly where `node` is UNKNOWN (so `!` of it
    is true exactly where `node` is FALSE), as the reader finds it."""
    match node:
        case And() | Or():
            return all(exact(item, schema) for item in node.items)
        case Not():
            return exact(node.item, schema)
        case Comparison():
            return not node.path and (node.op in ORDERING_OPS or node.op in PATTERN_OPS)
        case FieldComparison():
            return True
        case ListTest():
            return node.op is not ListOp.IS_EMPTY and not _numbers(node, schema) and not node.path
        case IsNull() | Const() | Blank() | Quantified() | Aggregated():
            return False
        case _:
            unhandled("cel_write.exact", node)


def _numbers(node: ListTest, schema: Schema) -> bool:
    """Whether `node` tests a list of numbers (written guarded: `lists.py`)."""
    found = schema.get(node.field)
    return found is not None and found.type is FieldType.NUMBER_LIST


def total(node: Node, schema: Schema) -> bool:
    """Whether CEL's expression of `node` never fails (`==`, `in`, null tests, constants),
    with celpy too: it fails on a number compared with null."""
    match node:
        case And() | Or():
            return all(total(item, schema) for item in node.items)
        case Not():
            return total(node.item, schema)
        case Comparison():
            number = schema.get(node.field)
            on_numbers = number is not None and number.type is FieldType.NUMBER
            return node.op in (Op.EQUALS, Op.IN, Op.NOT_IN) and not on_numbers and not node.path
        case IsNull() | Const() | Blank():
            return True
        case ListTest():
            return node.op is ListOp.IS_EMPTY or _numbers(node, schema) or bool(node.path)
        case FieldComparison() | Quantified() | Aggregated():
            return False
        case _:
            unhandled("cel_write.total", node)


class _Writer:
    def __init__(self, schema: Schema, row: str | None) -> None:
        self.schema = schema
        self.row = row

    def true(self, node: Node, path: str, negated: bool = False) -> Written:
        """The expression true exactly when `node` is TRUE (`negated`: FALSE, for a test at a
        JSON path, written out: `json_paths.py`)."""
        match node:
            case And() | Or():
                return self.group(node, path, self.true)
            case Not():
                return self.false(node.item, join_path(path, "NOT"))
            case Const():
                return Written("true" if node.value else "false", ATOM)
            case IsNull():
                return self.null_test(node.field, path, "==", node.path)
            case Blank() if node.path:
                raise _refused(path, node, "CEL finds a missing key an error, never blank")
            case Blank():
                name = self.name(node.field, path)
                return Written(f"{name} == null || {name} == {string_literal('')}", OR)
            case Comparison():
                return self.comparison(node, path, negated)
            case FieldComparison():
                return self.fields(node, path)
            case Quantified():
                return self.quantified(node, path)
            case ListTest():
                return self.list_test(node, path)
            case Aggregated():
                return self.count(node, path)
            case _:
                unhandled("cel_write.true", node)

    def false(self, node: Node, path: str) -> Written:
        """The expression true exactly when `node` is FALSE (never where it is UNKNOWN)."""
        match node:
            case Not():
                return self.true(node.item, path)
            case Const():
                return Written("false" if node.value else "true", ATOM)
            case IsNull():
                return self.null_test(node.field, path, "!=", node.path)
            case Comparison() | Blank() if node.path:
                return self.true(node, path, negated=True)
            case Quantified() if node.quantifier in _FALSE_QUANTIFIER:
                flipped = Quantified(node.relation, _FALSE_QUANTIFIER[node.quantifier], node.where)
                return self.quantified(flipped, path)
            case Aggregated():  # a count is never null, and CEL's `size` never fails
                return Written("!" + self.true(node, path).inside(ATOM), ATOM)
            case Comparison() if node.op is Op.IN and node.value == ():
                return Written("true", ATOM)
            case Comparison() if node.op is Op.NOT_IN and node.value == ():
                return Written("false", ATOM)
            case ListTest() if node.path:
                return self.array(node, path, negated=True)
            case ListTest() if _numbers(node, self.schema) and node.op is not ListOp.IS_EMPTY:
                return self.list_test(node, path, negated=True)
            case _ if exact(node, self.schema):
                return Written("!" + self.true(node, path).inside(ATOM), ATOM)
            case And() | Or():
                return self.group(node, path, self.false, flip=True)
            case _:
                return self.with_null_test(node, path)

    def with_null_test(self, node: Node, path: str) -> Written:
        """The FALSE of a test CEL answers false for a null: present, and not true."""
        match node:
            case Comparison() if node.op is Op.NOT_IN:
                inside = Comparison(node.field, Op.IN, node.value, node.insensitive, node.path)
                return Written(self.comparison(inside, path).text, RELATION)
            case ListTest():  # isEmpty: CEL's `tags == []` is false for a null list
                present = self.null_test(node.field, path, "!=").text
                return Written(f"{present} && {self.name(node.field, path)} != []", AND)
            case Blank():  # FALSE when present and not "": the NOT of `equals ""`
                return self.with_null_test(Comparison(node.field, Op.EQUALS, ""), path)
            case Comparison():
                present = self.null_test(node.field, path, "!=").text
                negated = "!" + self.true(node, path).inside(ATOM)
                if node.op is Op.EQUALS:
                    negated = self.true(node, path).text.replace(" == ", " != ", 1)
                return Written(f"{present} && {negated}", AND)
            case Quantified():  # FALSE of `every`: some row where the test is not TRUE
                some = Quantified(node.relation, Quantifier.SOME, node.where)
                return self.quantified(some, path, not_true_of=True)
            case _:
                return self.true(node, path)  # refuses what CEL cannot write

    def null_test(self, field: str, path: str, op: str, keys: tuple[str, ...] = ()) -> Written:
        """`field == null`, or for a number, a list or JSON `type(field) == null_type`: celpy
        fails on a double or a list compared with null, where the specification answers; at
        a path, `json_paths.null_form`."""
        name = self.name(field, path)
        kind = self.field(field, path).type
        if keys:
            self.keys(keys, join_path(path, field), IsNull(field, keys))
            text = null_form(name, keys, negated=op == "!=")
            return Written(text, AND if op == "!=" else OR, whole=True)
        if kind in (FieldType.NUMBER, FieldType.JSON) or kind.element is not None:
            return Written(f"type({name}) {op} null_type", RELATION)
        return Written(f"{name} {op} null", RELATION)

    def group(self, node: And | Or, path: str, each: _Walk, flip: bool = False) -> Written:
        """`&&` or `||` of the items (flipped for a FALSE: De Morgan's laws)."""
        conjunction = isinstance(node, And) != flip
        if not node.items:
            return Written("true" if isinstance(node, And) != flip else "false", ATOM)
        kind = node.kind.upper()
        parts = [each(item, _item(path, kind, i)) for i, item in enumerate(node.items)]
        if len(parts) == 1:
            return parts[0]
        level = AND if conjunction else OR
        # A condition written as two (`country != null && country != "FR"`) joins its
        # neighbours; a group keeps its parentheses, so it reads back as a group.
        texts = [
            part.inside(RELATION if isinstance(item, And | Or) or part.whole else level)
            for item, part in zip(node.items, parts, strict=True)
        ]
        return Written((" && " if conjunction else " || ").join(texts), level)

    def name(self, field: str, path: str) -> str:
        """The field as CEL names it, after checking CEL compares it as we do."""
        self.field(field, path)
        return f"{self.row}.{field}" if self.row else field

    def field(self, name: str, path: str) -> Field:
        found = self.schema.get(name)
        if found is None or found.type not in (*WRITTEN_TYPES, *LIST_TYPES, FieldType.JSON):
            kind = found.type.value if found else "unknown"
            raise refuse(
                join_path(path, name),
                f'"{name}" is a {kind} field, which CEL compares otherwise than a filter',
                "keep this condition in a where clause",
            )
        if not _IDENTIFIER.match(name) or name in _KEYWORDS:
            raise refuse(
                join_path(path, name), f'"{name}" is no CEL identifier', "rename the field"
            )
        return found

    def comparison(self, node: Comparison, path: str, negated: bool = False) -> Written:
        here = join_path(join_path(path, node.field), node.op.value)
        if node.insensitive and node.op is not Op.CONTAINS:
            raise _refused(
                here, node, "CEL's tests mind case (lowerAscii folds ASCII letters only)"
            )
        name = self.name(node.field, path)
        kind = self.field(node.field, path).type
        try:
            if node.path:
                return self.at_path(node, name, path, here, negated)
            return self.operation(node, name, kind, path, here)
        except _Moving:
            raise _refused(here, node, "relative and calendar values move with the clock") from None

    def operation(
        self, node: Comparison, name: str, kind: FieldType, path: str, here: str
    ) -> Written:
        match node.op:
            case op if op in PATTERN_OPS:
                return Written(f"{name}.{node.op.value}({self.pattern(node, here)})", ATOM)
            case Op.IN:
                items = ", ".join(_literal(v, kind, here) for v in _values(node))
                return Written(f"{name} in [{items}]", RELATION)
            case Op.NOT_IN:
                return self.false(Comparison(node.field, Op.IN, node.value), path)
            case Op.WITHIN | Op.ANNIVERSARY:
                raise _refused(here, node, "CEL has no calendar periods")
        return Written(f"{name} {SPELLINGS[node.op]} {_literal(node.value, kind, here)}", RELATION)

    def at_path(self, node: Comparison, name: str, path: str, here: str, negated: bool) -> Written:
        """A comparison at a JSON path beside its literal's type, or its FALSE (`negated`).
        `in []` is FALSE and `notIn []` TRUE for every record (docs/semantics.md), whatever the
        path holds: a constant, not a test beside a type (which was FALSE but for text)."""
        self.keys(node.path, here, node)
        if node.op in (Op.IN, Op.NOT_IN) and node.value == ():
            return Written("true" if (node.op is Op.NOT_IN) != negated else "false", ATOM)
        at, kind = selected(name, node.path), value_type(node.value)
        if node.op is Op.NOT_IN:
            inside = Comparison(node.field, Op.IN, node.value, node.insensitive)
            test = Written("!(" + self.operation(inside, at, kind, path, here).text + ")", ATOM)
        else:
            test = self.operation(node, at, kind, path, here)
        if negated:
            return Written(false_form(at, kind, test.inside(ATOM)), AND, whole=True)
        return Written(true_form(at, kind, test.inside(AND)), AND, whole=True)

    def keys(self, keys: tuple[str, ...], here: str, node: Node) -> None:
        """Refuses a key CEL selects with an index only (the subset reads none)."""
        bad = next((key for key in keys if not is_key(key)), None)
        if bad is not None:
            why = f"the key {string_literal(bad)} is no CEL identifier (it takes an index)"
            raise _refused(here, node, why)

    def pattern(self, node: Comparison, here: str) -> str:
        text = node.value
        if not isinstance(text, str):
            raise _refused(here, node, "CEL's patterns take a string")
        if node.op is Op.CONTAINS and not caseless(text):
            raise _refused(
                here,
                node,
                f"CEL's contains minds case and a filter's ignores it; the text "
                f"{string_literal(text)} has letters with case",
            )
        return string_literal(text)

    def list_test(self, node: ListTest, path: str, negated: bool = False) -> Written:
        """A list test (`lists.py`) or an array test at a path (`arrays.py`);
        `negated`, its FALSE, for a list of numbers only (an array's is `array`'s)."""
        if node.path:
            return self.array(node, path)
        here = join_path(join_path(path, node.field), node.op.value)
        element = self.field(node.field, path).type.element
        text = None
        if element is not None and not node.path and not node.insensitive:
            name = self.name(node.field, path)
            literal: Callable[[object], str] = lambda v: _literal(v, element, here)  # noqa: E731
            text = written(node, name, literal)
            if element is FieldType.NUMBER and node.op is not ListOp.IS_EMPTY:
                guarded = written_numbers(node, name, literal, negated=negated)
                return self.guarded(guarded, here, node, negated)
        if text is None:
            raise _refused(here, node, "CEL tests lists otherwise (see docs/interop.md, CEL)")
        level = RELATION if node.op in (ListOp.HAS, ListOp.IS_EMPTY) else ATOM
        return Written(text, level)

    def array(self, node: ListTest, path: str, negated: bool = False) -> Written:
        """An array test at a JSON path (`arrays.py`); `negated`, its FALSE."""
        here = join_path(join_path(path, node.field), node.op.value)
        self.keys(node.path, here, node)
        name = self.name(node.field, path)
        literal: Callable[[object], str] = lambda v: _literal(v, value_type(v), here)  # noqa: E731
        text = arrays.written(node, name, literal, negated=negated)
        if text is None:
            raise _refused(
                here, node, "CEL's tests mind case (lowerAscii folds ASCII letters only)"
            )
        one = len(node.value) == 1 and not negated
        level = ATOM if one else OR if negated and len(node.value) > 1 else AND
        return Written(text, level, whole=level == AND)

    def guarded(self, text: str | None, here: str, node: ListTest, negated: bool) -> Written:
        if text is None:
            raise _refused(here, node, "CEL tests lists otherwise (see docs/interop.md, CEL)")
        return Written(text, AND, whole=True) if negated else Written(text, ATOM)

    def fields(self, node: FieldComparison, path: str) -> Written:
        here = join_path(join_path(path, node.field), node.op.value)
        if node.op not in ORDERING_OPS:
            raise _refused(here, node, "CEL finds two nulls equal")
        left, right = self.name(node.field, path), self.name(node.other, path)
        return Written(f"{left} {SPELLINGS[node.op]} {right}", RELATION)

    def quantified(self, node: Quantified, path: str, not_true_of: bool = False) -> Written:
        """`exists` or `all` over the rows of a relation (a to-one's `one_row`); with
        `not_true_of`, over the rows where `node.where` is not TRUE."""
        here = join_path(path, node.relation)
        relation = self.schema.relation(node.relation)
        if relation is None or self.row is not None:
            raise _refused(here, node, "CEL reads the rows of the record only")
        inner = _Writer(relation.schema, _ROW)
        negated = ""
        if node.quantifier in _NOT_ANY:
            if total(node.where, relation.schema):
                negated = "!"
            else:
                not_true_of = True
        macro = "exists" if negated or node.quantifier in _ANY else "all"
        rows = node.relation if relation.many else one_row(node.relation)
        at = join_path(here, node.quantifier.value)
        written = inner.untrue(node.where, at) if not_true_of else inner.true(node.where, at)
        return Written(f"{negated}{rows}.{macro}({_ROW}, {written.text})", ATOM)

    def untrue(self, node: Node, path: str) -> Written:
        """The expression true exactly when `node` is not TRUE (FALSE or UNKNOWN). An array
        test at a JSON path is UNKNOWN for a value that is no array as well as for a missing
        key or null, and no null test says the first (`logic.not_true` adds one), so the `!` of
        its guarded form is written, which never fails and is false wherever the test is not
        TRUE; under a `NOT`, the `!` of its FALSE form, false wherever that is not FALSE.
        Before, `NOT rows.every(tags has "x")` over a row whose JSON held `"tags": "x"`
        selected nobody, where the filter selects it."""
        match node:
            case And() | Or():
                return self.group(node, path, self.untrue, flip=True)
            case ListTest() if node.path:
                return Written("!" + self.true(node, path).inside(ATOM), ATOM)
            case Not(item=ListTest() as item) if item.path:
                return Written("!" + self.false(item, join_path(path, "NOT")).inside(ATOM), ATOM)
            case _:
                return self.true(not_true(node), path)

    def count(self, node: Aggregated, path: str) -> Written:
        """`size(rows.filter(r, where)) >= 2`: the count of rows, compared with integers."""
        here = join_path(path, node.relation)
        relation = self.schema.relation(node.relation)
        if node.function is not Aggregate.COUNT or relation is None or self.row is not None:
            raise _refused(here, node, "standard CEL has no sums or extremes of rows")
        if not total(node.where, relation.schema):
            why = "CEL's filter fails where its condition does, which this where clause can"
            raise _refused(join_path(here, "where"), node, why)
        rows = node.relation
        if node.where != TRUE:
            inner = _Writer(relation.schema, _ROW).true(node.where, join_path(here, "where"))
            rows = f"{node.relation}.filter({_ROW}, {inner.text})"
        return self.counted(node.test, f"size({rows})", join_path(here, COUNT_FIELD), node)

    def counted(self, test: Node, size: str, here: str, node: Aggregated) -> Written:
        """The count's test: `size(...) >= 2`, `size(...) in [1, 2]`; `false` for a null test."""
        if isinstance(test, IsNull):
            return Written("false", ATOM)
        assert isinstance(test, Comparison)
        values = test.value if isinstance(test.value, tuple) else (test.value,)
        if test.op not in _COUNTED or not all(_integer(v) for v in values):
            raise _refused(here, node, "CEL counts in integers, compared with integers only")
        if test.op is Op.NOT_IN:
            return Written(f"!({size} in [{', '.join(map(str, values))}])", ATOM)
        if test.op is Op.IN:
            return Written(f"{size} in [{', '.join(map(str, values))}]", RELATION)
        return Written(f"{size} {SPELLINGS[test.op]} {test.value}", RELATION)


def one_row(relation: str) -> str:
    """A to-one relation as the list of its row, empty for a null row (or any other value)."""
    return f"(type({relation}) == map ? [{relation}] : [])"


def _integer(value: object) -> bool:
    """Whether `value` is an integer CEL's `int` holds (64 bits)."""
    return isinstance(value, int) and not isinstance(value, bool) and abs(value) < 2**63


_ANY: Final = (Quantifier.SOME, Quantifier.IS)
_NOT_ANY: Final = (Quantifier.NONE, Quantifier.IS_NOT)
_COUNTED: Final = (Op.EQUALS, Op.GT, Op.GTE, Op.LT, Op.LTE, Op.IN, Op.NOT_IN)


_FALSE_QUANTIFIER: Final = {
    Quantifier.SOME: Quantifier.NONE,
    Quantifier.NONE: Quantifier.SOME,
    Quantifier.IS: Quantifier.IS_NOT,
    Quantifier.IS_NOT: Quantifier.IS,
}


def _item(path: str, kind: str, index: int) -> str:
    """`OR[1]` + `AND`, 0 -> `OR[1].AND[0]`: the where clause's path of a group's item."""
    return f"{path}.{kind}[{index}]" if path else f"{kind}[{index}]"


def _values(node: Comparison) -> tuple[object, ...]:
    assert isinstance(node.value, tuple)
    return node.value


def _literal(value: object, kind: FieldType, here: str) -> str:
    """A literal of a field of type `kind` as CEL writes it."""
    if isinstance(value, bool) or kind is FieldType.BOOLEAN:
        return "true" if value else "false"
    if isinstance(value, str):
        return string_literal(value)
    if isinstance(value, int | float) and kind is FieldType.NUMBER:
        return _double(value, here)
    if isinstance(value, datetime):
        return f'timestamp("{_rfc3339(value)}")'
    if isinstance(value, date):  # a day is its ISO 8601 text, ordered as the days are
        return string_literal(value.isoformat())
    raise _Moving(here)


class _Moving(Exception):
    """A relative or calendar value met where a literal goes: the caller names the node."""

    def __init__(self, here: str) -> None:
        self.here = here


def _double(value: int | float, here: str) -> str:
    """A number as a CEL double: a number field is a double in the environment."""
    if isinstance(value, int) and abs(value) > _EXACT_DOUBLE and float(value) != value:
        raise refuse(
            here,
            f"{value} is no double, and a number field is a double in CEL",
            "write the nearest double, or keep the condition in a where clause",
        )
    return repr(float(value))


def _rfc3339(moment: datetime) -> str:
    utc = moment.astimezone(UTC)
    fraction = f".{utc.microsecond:06d}" if utc.microsecond else ""
    return utc.strftime("%Y-%m-%dT%H:%M:%S").rjust(19, "0") + fraction + "Z"


def _refused(path: str, node: Node, why: str) -> FilterError:
    from ...where.write import to_json

    return refuse(
        path, f"the condition {to_json(node)} has no faithful CEL form: {why}", _fix(node)
    )


def _fix(node: Node) -> str:
    if relative_values(node):
        return "resolve the filter at an instant first (Filter.resolve)"
    if isinstance(node, Comparison) and node.insensitive and node.op is not Op.CONTAINS:
        return "compare without mode: insensitive, or keep the condition in a where clause"
    return "keep the condition in a where clause"
