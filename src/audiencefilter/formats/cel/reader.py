"""CEL (the Common Expression Language of Kubernetes, Firebase rules and Envoy), read into our
tree and written from it (docs/interop.md, CEL).

Design choices:
- The environment a CEL expression runs in is part of the format (docs/interop.md): each field
  is a variable, null when the record has no value; a number field is a `double`, a
  date-time field a `timestamp`, a date its ISO 8601 text, a list field a `list`, a JSON
  column CEL's JSON (every number a `double`), read at a key in the forms of `json_paths.py`;
  a to-many relation a list of rows (maps holding every field of the row, null when
  missing), empty when the record has none; a to-one relation its row or null, read through
  the list `write.one_row` writes of it. A count of rows is `size` of the rows (or of those
  `filter` keeps, by a condition CEL never fails on), compared with integers.
- CEL has three outcomes too: true, false, and an error (`null < 5` has no overload), and its
  `&&`, `||` and `!` treat an error as our logic treats UNKNOWN (`false && error` is false,
  `true || error` is true). But its `==` and `in` answer false for a null where ours is
  UNKNOWN. So each expression is read as a `Meaning`: the tree TRUE exactly when CEL answers
  true, and the tree TRUE exactly when CEL answers false. A record is in when the whole
  expression is true, so the first of the root's meaning is the filter.
- A comparison whose CEL error falls exactly where ours is UNKNOWN (ordering, patterns) is
  *exact*: its false is our `NOT`. `==`, `!=`, `in` and null tests never fail in CEL: their
  false is "not TRUE" (`formats/logic.py`, `not_true`), which adds the null test. Groups of
  exact items stay exact, so `!(a < 1 && b > 2)` reads back as the `NOT` of the group.
- The writer (`write.py`) writes the subset this reader reads back to the same filter.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, TypeGuard

from ...errors import FilterError, Issue, describe_value, did_you_mean
from ...language.conditions import REF, Conditions, Report, Syntax, Where
from ...language.data_paths import value_type
from ...language.fields import ORDERING_OPS, PATTERN_OPS, Field, FieldType, ListOp, Op, Schema
from ...language.limits import DEFAULT_LIMITS, Limits, check_text_size
from ...language.nodes import (
    TRUE,
    Aggregated,
    Comparison,
    Const,
    IsNull,
    ListTest,
    Node,
    Not,
    Quantified,
    any_of,
    walk,
)
from ...language.relations import COUNT_FIELD, Aggregate, Quantifier, Relation
from ...where.positions import line_column
from ..folding import caseless
from ..logic import conjoin, not_true
from . import arrays
from . import syntax as cel
from .json_paths import TYPE_NAMES, Form, form, null_form, plain
from .lists import LIST_TYPES, Shape, shape
from .values import BAD, Literals, is_string, null_type_test, refusal
from .write import SPELLINGS, one_row, string_literal
from .write import write as write

NAME = "cel"

READ_TYPES: Final = (
    FieldType.STRING,
    FieldType.NUMBER,
    FieldType.BOOLEAN,
    FieldType.DATETIME,
    FieldType.DATE,
    FieldType.JSON,
    *LIST_TYPES,
)
"""The field types CEL compares as we do (docs/interop.md, CEL)."""

_OPS: Final = {"==": Op.EQUALS, "<": Op.LT, "<=": Op.LTE, ">": Op.GT, ">=": Op.GTE, "in": Op.IN}
_FLIPPED: Final = {"<": ">", "<=": ">=", ">": "<", ">=": "<=", "==": "==", "!=": "!="}
_METHODS: Final = {op.value: op for op in Op if op in PATTERN_OPS}
"""CEL's string methods, named as the where clause names the pattern operators."""
_EXACT: Final = ORDERING_OPS | PATTERN_OPS

CEL_SYNTAX = Syntax(
    op=lambda op: SPELLINGS.get(op, op.value),
    operator_names=lambda f: (
        "==, !=, <, <=, >, >=, in"
        + ("".join(f", {name}" for name in _METHODS) if f.type is FieldType.STRING else "")
    ),
    describe=describe_value,
    written=lambda value: repr(value),
    as_string=string_literal,
    list_word="list",
    datetime_quotes='"',
    datetime_is_string=True,
    null_test=lambda name: f"test for null with {name} == null or {name} != null",
    null_in_list=lambda name: f"to match nulls too, add: || {name} == null",
    data_null_test="test for null with == null or != null",
    or_word="||",
    mode_word="case",
)
"""How CEL spells what the condition builder's messages name."""


@dataclass(frozen=True, slots=True)
class Meaning:
    """What one CEL expression says: `true` is TRUE exactly when CEL answers true, `false`
    exactly when it answers false; `exact` when CEL fails exactly where `true` is UNKNOWN (so
    `false` is `NOT true`)."""

    true: Node
    false: Node
    exact: bool
    total: bool = False
    """CEL never fails on it: `==`, `in`, null tests, and groups of them."""

    def negated(self) -> Meaning:
        return Meaning(self.false, self.true, self.exact, self.total)


def _exact(node: Node) -> Meaning:
    return Meaning(node, Not(node), True)


def _total(node: Node) -> Meaning:
    """A test CEL always answers (`==`, `in`, null tests): false where ours is not TRUE."""
    return Meaning(node, not_true(node), False, True)


_NEGATED_PATH = (
    "a test at a JSON path is read negated: CEL's ! is then true for JSON null, where a "
    "filter's test is UNKNOWN, and no filter says that"
)
_NEGATED_PATH_FIX = (
    "write the test's negation out: type(data.a) != null_type && (type(data.a) != string || "
    '!(data.a == "x")) for the NOT of type(data.a) == string && data.a == "x", and the '
    "reverse"
)

_SKIPPED = Meaning(TRUE, TRUE, True)
"""What a part in error reads as, so that reading goes on and finds every problem."""


def read(source: object, schema: Schema, *, limits: Limits = DEFAULT_LIMITS) -> Node:
    """Read a CEL expression into its tree: TRUE exactly where the expression is true.

    Raises:
        FilterError: every problem found, each at CEL's line and column of the token at fault,
            saying what was expected, what was found and the fix.
    """
    if not isinstance(source, str):
        message = f"expected the text of a CEL expression, found {describe_value(source)}"
        raise FilterError([Issue(path="", message=message)])
    check_text_size(len(source.encode("utf-8", "surrogatepass")), limits)
    tree = cel.parse(source, limits)
    reader = _Reader(source, schema, limits)
    meaning = reader.condition(tree, _Scope(schema))
    unsaid = _unsaid_at(meaning.true)
    if unsaid is not None:
        reader.add(unsaid, _NEGATED_PATH, _NEGATED_PATH_FIX)
    if reader.issues:
        raise FilterError(reader.issues, source=source)
    return meaning.true


@dataclass(frozen=True, slots=True)
class _Scope:
    """The fields a name may read: the record's, or inside `exists`/`all` a row's, through
    the macro's variable."""

    schema: Schema
    row: str | None = None


class _Reader:
    def __init__(self, text: str, schema: Schema, limits: Limits) -> None:
        self.text = text
        self.limits = limits
        self.conditions = Conditions(CEL_SYNTAX, limits.max_array, schema)
        self.issues: list[Issue] = []
        self.nodes = 0

    def add(self, offset: int, message: str, suggestion: str | None = None, path: str = "") -> None:
        line, column = line_column(self.text, offset)
        issue = Issue(path=path, message=message, suggestion=suggestion, line=line, column=column)
        self.issues.append(issue)

    def report(self, offset: int, path: str) -> Report:
        def report(where: Where, message: str, suggestion: str | None) -> None:
            self.add(offset, message, suggestion, path)

        return report

    def condition(self, node: cel.Node, scope: _Scope) -> Meaning:
        """The meaning of a boolean expression."""
        self.nodes += 1
        if self.nodes > self.limits.max_nodes:
            if self.nodes == self.limits.max_nodes + 1:
                self.add(
                    _offset(node),
                    f"the expression has more than {self.limits.max_nodes} conditions",
                    "split it into several audiences, or use in lists",
                )
            return _SKIPPED
        if _of_rows(node, scope):  # before the list shapes: `size(rows) == 0` is a count
            return self.count(node, scope)
        listed = shape(node)
        if listed is not None:
            return self.list_test(listed, node, scope)
        at_path = self.array(node, scope) or self.at_path(node, scope)
        if at_path is not None:
            return at_path
        match node:
            case cel.Logic():
                return self.logic(node, scope)
            case cel.Unary(op="!"):
                return self.condition(node.operand, scope).negated()
            case cel.Literal(kind="bool"):
                return _total(Const(bool(node.value)))
            case cel.Binary() if node.op in _FLIPPED or node.op == "in":
                return self.relation(node, scope)
            case cel.Call() if node.target is not None:
                return self.method(node, scope)
            case cel.Name() | cel.Select():
                return self.boolean_field(node, scope)
        return self.refused(node)

    def logic(self, node: cel.Logic, scope: _Scope) -> Meaning:
        items = [self.condition(item, scope) for item in node.items]
        trues = tuple(item.true for item in items)
        falses = tuple(item.false for item in items)
        if node.op == "&&":
            true, false = conjoin(trues), any_of(falses)
        else:
            true, false = any_of(trues), conjoin(falses)
        if all(item.exact for item in items):
            return Meaning(true, Not(true), True)
        return Meaning(true, false, False, all(item.total for item in items))

    def refused(self, node: cel.Node) -> Meaning:
        what, fix = refusal(node)
        self.add(_offset(node), f"expected a condition on a field, found {what}", fix)
        return _SKIPPED

    def list_test(self, found: Shape, node: cel.Node, scope: _Scope) -> Meaning:
        """`"vip" in tags` and the other shapes of `lists.py`: exact, as CEL fails on a
        null list where the filter's test is UNKNOWN."""
        field = self.field(found.field, scope)
        if field is None:
            return _SKIPPED
        element = field.type.element
        if element is None:
            self.add(
                _offset(found.field),
                f'expected a list field, found the {field.type.value} field "{field.name}"',
                f"compare it: {field.name} in [...]",
                field.name,
            )
            return _SKIPPED
        item = Field(field.name, element)
        value: object = True
        if found.operand is not None:
            listed = found.op is not ListOp.HAS
            value = self.literal(found.operand, item, listed)
        if value is BAD:
            return _SKIPPED
        if not self.guarded(found, field, node):
            return _SKIPPED
        if found.over_values and value == []:  # the body is never evaluated: no null list
            # fails it; `type(s) == list && ![].all(...)` is false for every record too
            return _total(Const(found.op is ListOp.HAS_EVERY and not found.negated))
        report = self.report(_offset(node), field.name)
        built = self.conditions.list_condition(field, found.op, value, False, report)
        if found.guarded:  # CEL answers it everywhere: `negated` is the test's NOT
            return _total(Not(built) if found.negated else built)
        meaning = _total(built) if found.total else _exact(built)
        return meaning.negated() if found.negated else meaning

    def at_path(self, node: cel.Node, scope: _Scope) -> Meaning | None:
        """A test at a JSON path in a form of `json_paths.py`, or None (not one)."""
        found = form(node)
        located = None if found is None else self.json_path(found.at, scope)
        if found is None or located is None:
            return None
        field, keys, name = located
        if found.kind is None or found.test is None:
            written = cel.parse(null_form(name, keys, found.negated), self.limits)
            if plain(written) != plain(node):
                return None
            meaning = _total(IsNull(field.name, keys))
            return meaning.negated() if found.negated else meaning
        built = self.path_test(found.test, found, field, keys)
        if built is None:
            return None
        unsaid = _unsaid(node.offset)
        return Meaning(Not(built) if found.negated else built, unsaid, False)

    def array(self, node: cel.Node, scope: _Scope) -> Meaning | None:
        """An array test at a JSON path in a form of `arrays.py`, or None (not one):
        false where the filter's test is not TRUE, so its `!` is refused (`_unsaid`)."""
        found = arrays.form(node)
        located = None if found is None else self.json_path(found.at, scope)
        if found is None or located is None:
            return None
        field, keys, name = located
        if not self.arrays_form(found, name, keys):
            return None
        built = self.array_test(found, field, keys)
        return Meaning(Not(built) if found.negated else built, _unsaid(node.offset), False, True)

    def arrays_form(self, found: arrays.Array, name: str, keys: tuple[str, ...]) -> bool:
        """Whether the condition, items and guard found are those `arrays.py` writes."""
        expected = [
            (found.checked, arrays.condition(name, keys, found.op)),
            (found.listed, arrays.items(name, keys, found.op)),
            (found.steps, arrays.guard(name, keys)),
        ]
        return all(
            part is None or part == plain(cel.parse(text, self.limits)) for part, text in expected
        )

    def array_test(self, found: arrays.Array, field: Field, keys: tuple[str, ...]) -> Node:
        """`array_contains` of the form's literal (TRUE when reported: reading goes on)."""
        if found.kind is None or found.literal is None:
            return ListTest(field.name, found.op, (), False, keys)
        value = self.literal(found.literal, Field(field.name, found.kind), False)
        if value is BAD:
            return TRUE
        if value_type(value) is not found.kind:
            self.add(_offset(found.literal), _OTHER_TYPE.format(TYPE_NAMES[found.kind]))
            return TRUE
        return ListTest(field.name, found.op, (value,), False, keys)  # type: ignore[arg-type]

    def json_path(self, node: cel.Node, scope: _Scope) -> tuple[Field, tuple[str, ...], str] | None:
        """The JSON field, the keys and the field as CEL names it (`r.data`) of a path."""
        keys: list[str] = []
        while isinstance(node, cel.Select) and self.field_name(node, scope) is None:
            keys.insert(0, node.field)
            node = node.operand
        name = self.field_name(node, scope)
        found = None if name is None else scope.schema.get(name)
        if found is None or found.type is not FieldType.JSON or not keys:
            return None
        assert name is not None
        return found, tuple(keys), f"{scope.row}.{name}" if scope.row else name

    def path_test(
        self, test: cel.Node, found: Form, field: Field, keys: tuple[str, ...]
    ) -> Node | None:
        """The comparison a form's test says at the path, or None (not this form)."""
        match test:
            case cel.Unary(op="!", operand=cel.Binary(op="in") as inner):
                op, subject, operand = Op.NOT_IN, inner.left, inner.right
            case cel.Binary(op="==" | "<" | "<=" | ">" | ">=" | "in"):
                op, subject, operand = _OPS[test.op], test.left, test.right
            case cel.Call(target=subject, function=method, args=(operand,)) if method in _METHODS:
                op = _METHODS[method]
            case _:
                return None
        if subject is None or plain(subject) != found.at or found.kind is None:
            return None
        typed = Field(field.name, found.kind)
        value = self.literal(operand, typed, op in (Op.IN, Op.NOT_IN))
        report = self.report(_offset(test), field.name)
        if value is BAD or not self.conditions.accepts(typed, op, report):
            return TRUE
        listed = isinstance(value, list)
        if value_type(tuple(value) if listed else value) is not found.kind:  # type: ignore[arg-type]
            self.add(_offset(operand), _OTHER_TYPE.format(TYPE_NAMES[found.kind]), None, field.name)
            return TRUE
        if op is Op.CONTAINS and isinstance(value, str) and not caseless(value):
            self.add(_offset(operand), _CASED, None, field.name)
            return TRUE
        return self.conditions.data_comparison(field, keys, op, value, False, report)

    def guarded(self, found: Shape, field: Field, node: cel.Node) -> bool:
        """Whether a list test has the form its list's items need (reported if not): a list
        of numbers is tested through the guarded forms of `lists.py`, since CEL fails on
        a double compared with a null item where a filter looks at the other items."""
        numbers = field.type is FieldType.NUMBER_LIST and found.op is not ListOp.IS_EMPTY
        if numbers == found.guarded:
            return True
        name = field.name
        fix = (
            f"write type({name}) == list && {name}.exists(t, type(t) == double && t == 1.0)"
            if numbers
            else f'write "a" in {name}'
        )
        why = "a list of numbers" if numbers else f"a {field.type.value} field"
        self.add(_offset(node), f"this form of list test does not fit {why}", fix, name)
        return False

    def boolean_field(self, node: cel.Name | cel.Select, scope: _Scope) -> Meaning:
        """A boolean field alone: `isVerified`, true when it holds true."""
        found = self.field(node, scope)
        if found is None:
            return _SKIPPED
        if found.type is not FieldType.BOOLEAN:
            self.add(
                node.offset,
                f'expected a condition, found the {found.type.value} field "{found.name}"',
                f"compare it, e.g. {found.name} == ...",
                found.name,
            )
            return _SKIPPED
        return Meaning(
            Comparison(found.name, Op.EQUALS, True), Comparison(found.name, Op.EQUALS, False), True
        )

    def field(self, node: cel.Node, scope: _Scope) -> Field | None:
        """The field `node` names in `scope`, or None (reported)."""
        name = self.field_name(node, scope)
        if name is None:
            what, fix = refusal(node)
            self.add(_offset(node), f"expected a field, found {what}", fix)
            return None
        found = scope.schema.get(name)
        if found is None and scope.schema.relation(name) is not None:
            self.add(_offset(node), _RELATION_NAMED.format(name), _relation_fix(name, scope), name)
            return None
        if found is None:
            known = [f.name for f in scope.schema.fields]
            self.add(
                _offset(node), f'unknown field "{name}"', did_you_mean(name, known) or None, name
            )
            return None
        return found if self.readable(found, node) else None

    def field_name(self, node: cel.Node, scope: _Scope) -> str | None:
        if scope.row is None:
            return node.name if isinstance(node, cel.Name) else None
        if isinstance(node, cel.Select) and node.operand == cel.Name(
            scope.row, node.operand.offset
        ):
            return node.field
        return None

    def readable(self, found: Field, node: cel.Node) -> bool:
        """Whether CEL compares `found`'s values as we do (reported if not)."""
        if found.source:
            why = f'"{found.name}" is declared inside JSON, which CEL reads with its own types'
            fix = f"read it at its path: {_path_example('.'.join(found.source))}"
        elif found.type is FieldType.JSON:
            why = f'"{found.name}" is a json field, read at a key beside the key\'s type'
            fix = f"write {_path_example(found.name + '.plan')}"
        elif found.type not in READ_TYPES:
            why = f'"{found.name}" is a {found.type.value} field, which CEL compares otherwise'
            fix = "keep this condition in a where clause"
        else:
            return True
        self.add(_offset(node), why, fix, found.name)
        return False

    def relation(self, node: cel.Binary, scope: _Scope) -> Meaning:
        """`field op literal` (or `literal op field`, or two fields compared)."""
        typed = null_type_test(node)
        if typed is not None:
            return self.relation(typed, scope)
        named = self.field_name(node.left, scope) is not None
        other = node.op != "in" and self.field_name(node.right, scope) is not None
        if not named and other:
            flipped = cel.Binary(_FLIPPED[node.op], node.right, node.left, node.offset)
            return self.relation(flipped, scope)
        if not named:
            return self.refused(node.left)
        left = self.field(node.left, scope)
        right = self.field(node.right, scope) if other else None
        if left is None or (other and right is None):
            return _SKIPPED
        if right is not None:
            return self.fields(node, left, right, scope)
        return self.compared(node, left)

    def compared(self, node: cel.Binary, found: Field) -> Meaning:
        null = isinstance(node.right, cel.Literal) and node.right.kind == "null"
        if null and node.op in ("==", "!="):  # on every field, lists included
            meaning = _total(IsNull(found.name))
            return meaning.negated() if node.op == "!=" else meaning
        report = self.report(_offset(node.right), found.name)
        op = _OPS.get(node.op, Op.EQUALS)
        value = self.literal(node.right, found, node.op == "in")
        if value is BAD:
            return _SKIPPED
        if not self.conditions.accepts(found, op, self.report(node.offset, found.name)):
            return _SKIPPED
        built = self.conditions.comparison(found, op, value, False, report)
        meaning = _exact(built) if op in _EXACT else _total(built)
        return meaning.negated() if node.op == "!=" else meaning

    def equal_fields(self, node: cel.Binary, left: Field, right: Field) -> Meaning:
        """`==` or `!=` between two fields: refused, saying why."""
        self.add(
            node.offset,
            f"{node.op} between two fields holds in CEL when both are null, where a filter's "
            "comparison of two fields is never TRUE for a null",
            f"add the null tests: {left.name} != null && {left.name} {node.op} {right.name}",
            left.name,
        )
        return _SKIPPED

    def fields(self, node: cel.Binary, left: Field, right: Field, scope: _Scope) -> Meaning:
        """Two fields compared: an ordering is a field reference; CEL finds two nulls equal,
        so `==` and `!=` between fields have no filter."""
        if node.op not in ("<", "<=", ">", ">="):
            return self.equal_fields(node, left, right)
        op = _OPS[node.op]
        report = self.report(node.offset, left.name)
        if not self.conditions.accepts(left, op, report):
            return _SKIPPED
        conditions = Conditions(CEL_SYNTAX, self.limits.max_array, scope.schema)
        ref = {REF: right.name}
        return _exact(conditions.comparison(left, op, ref, False, report))

    def literal(self, node: cel.Node, found: Field, listed: bool) -> object:
        """The operand of a comparison as the condition builder takes it; `BAD` (reported)."""
        if listed:
            if not isinstance(node, cel.ListOf):
                self.add(_offset(node), "expected a list of literals after in", "write [...]")
                return BAD
            items = [self.literal(item, found, False) for item in node.items]
            return BAD if BAD in items else items
        return Literals(self.add, found).value(node)

    def method(self, node: cel.Call, scope: _Scope) -> Meaning:
        assert node.target is not None
        if node.function in ("exists", "all"):
            return self.macro(node, scope)
        op = _METHODS.get(node.function)
        if op is None:
            return self.refused(node)
        found = self.field(node.target, scope)
        if found is None:
            return _SKIPPED
        if len(node.args) != 1 or not is_string(node.args[0]):
            self.add(node.offset, f"{node.function} takes one string literal", None, found.name)
            return _SKIPPED
        text = str(node.args[0].value)  # type: ignore[union-attr]
        if op is Op.CONTAINS and not caseless(text):
            self.add(
                _offset(node.args[0]),
                f"contains minds case in CEL and ignores it in a filter: the text "
                f"{string_literal(text)} has letters with case, so the two would disagree",
                "use startsWith or endsWith (they mind case here too), or keep the condition "
                "in a where clause",
                found.name,
            )
            return _SKIPPED
        report = self.report(node.offset, found.name)
        if not self.conditions.accepts(found, op, report):
            return _SKIPPED
        return _exact(self.conditions.comparison(found, op, text, False, report))

    def macro(self, node: cel.Call, scope: _Scope) -> Meaning:
        """`rows.exists(r, ...)` and `rows.all(r, ...)` over a to-many relation, or over a
        to-one relation's `one_row` (its row, or none)."""
        relation = self.relation_of(node, scope)
        if relation is None:
            return _SKIPPED
        variable = node.args[0]
        assert isinstance(variable, cel.Name)
        inner = _Scope(relation.schema, variable.name)
        body = self.condition(node.args[1], inner)
        if not relation.many:
            return _one(relation.name, node.function == "exists", body)
        if node.function == "exists" and body.total and _unsaid_at(body.true) is not None:
            # `exists(r, !A)` of a guarded form A, which never fails: some row where A is false,
            # which is where its test is not TRUE: NOT every row's test TRUE (what the writer
            # writes for `NOT rows.every(...)` over a JSON array test, `_Writer.untrue`).
            every = Quantified(relation.name, Quantifier.EVERY, body.false)
            return Meaning(Not(every), every, False, True)
        if node.function == "exists":
            some = Quantified(relation.name, Quantifier.SOME, body.true)
            return Meaning(some, _none_true(relation, body), False)
        every = Quantified(relation.name, Quantifier.EVERY, body.true)
        return Meaning(every, Quantified(relation.name, Quantifier.SOME, body.false), False)

    def relation_of(self, node: cel.Call, scope: _Scope) -> Relation | None:
        target = node.target
        name = target.name if isinstance(target, cel.Name) and scope.row is None else None
        relation = scope.schema.relation(name) if name else None
        if relation is None or not relation.many:
            relation = self.one_of(target, scope)
        if relation is None:
            names = [r.name for r in scope.schema.relations if r.many]
            ones = [one_row(r.name) for r in scope.schema.relations if not r.many]
            self.add(
                node.offset,
                f"{node.function} applies to a to-many relation of the record, or to "
                "(type(one) == map ? [one] : []) of a to-one relation",
                f"the relations are {', '.join(names + ones)}" if names or ones else None,
            )
            return None
        if len(node.args) != 2 or not isinstance(node.args[0], cel.Name):
            self.add(
                node.offset, f"expected {relation.name}.{node.function}(r, condition on r.field)"
            )
            return None
        return relation

    def one_of(self, target: cel.Node | None, scope: _Scope) -> Relation | None:
        """The to-one relation whose `one_row` `target` is, or None."""
        if target is None or scope.row is not None:
            return None
        for relation in scope.schema.relations:
            written = cel.parse(one_row(relation.name), self.limits)
            if not relation.many and plain(written) == plain(target):
                return relation
        return None

    def count(self, node: cel.Binary, scope: _Scope) -> Meaning:
        """`size(rows) >= 2`, `size(rows.filter(r, where)) in [1, 2]` (either side): a count of
        rows compared with integers (CEL's `size` is an `int`); never fails, so exact."""
        if not _sized(node.left):
            node = cel.Binary(_FLIPPED.get(node.op, node.op), node.right, node.left, node.offset)
        assert isinstance(node.left, cel.Call)
        counted = self.counted(node.left.args[0], scope) if len(node.left.args) == 1 else None
        values = self.integers(node.right, node.op == "in")
        if counted is None or values is None or node.op not in (*_OPS, "!="):
            if counted is not None and values is not None:
                self.refused(node)
            return _SKIPPED
        relation, where = counted
        value = tuple(values) if node.op == "in" else values[0]
        test = Comparison(COUNT_FIELD, _OPS.get(node.op, Op.EQUALS), value)
        built = Aggregated(relation, Aggregate.COUNT, COUNT_FIELD, test, where)
        return _exact(Not(built) if node.op == "!=" else built)

    def counted(self, rows: cel.Node, scope: _Scope) -> tuple[str, Node] | None:
        """The relation and where clause of `rows` or `rows.filter(r, where)` (None: reported)."""
        where: Node = TRUE
        target = rows.target if isinstance(rows, cel.Call) and rows.function == "filter" else rows
        name = target.name if isinstance(target, cel.Name) and scope.row is None else None
        relation = scope.schema.relation(name) if name else None
        if relation is None or not relation.many:
            self.add(
                _offset(rows),
                "size counts the rows of a to-many relation of the record",
                "write size(rows) or size(rows.filter(r, condition on r.field))",
            )
            return None
        kept = self.kept(rows, relation) if isinstance(rows, cel.Call) else where
        return None if kept is None else (relation.name, kept)

    def kept(self, rows: cel.Call, relation: Relation) -> Node | None:
        """The where clause of `rows.filter(r, where)`: one CEL always answers (reported if
        not), since CEL's `filter` fails where its condition does."""
        if len(rows.args) != 2 or not isinstance(rows.args[0], cel.Name):
            self.add(rows.offset, f"expected {relation.name}.filter(r, condition on r.field)")
            return None
        body = self.condition(rows.args[1], _Scope(relation.schema, rows.args[0].name))
        if not body.total:
            self.add(_offset(rows.args[1]), _FILTER_FAILS, _FILTER_FIX, relation.name)
            return None
        return body.true

    def integers(self, node: cel.Node, listed: bool) -> list[int] | None:
        """The integer literals a count is compared with (None: reported)."""
        items = node.items if listed and isinstance(node, cel.ListOf) else (node,)
        if listed and not isinstance(node, cel.ListOf):
            self.add(_offset(node), "expected a list of literals after in", "write [...]")
            return None
        bad = [item for item in items if not _int_literal(item)]
        for item in bad:
            what, _ = refusal(item)
            self.add(
                _offset(item),
                f"expected an integer, found {what}: CEL's size is an int, "
                "which celpy compares with no double",
                "write 2, not 2.0",
            )
        return None if bad else [_int_value(item) for item in items]


_FILTER_FAILS = (
    "CEL's filter fails where its condition does, and this condition can fail, where a "
    "filter's count leaves the row out"
)
_FILTER_FIX = (
    "count with a condition CEL always answers (==, in, null tests), or keep it in a where clause"
)


_RELATION_NAMED = '"{}" is a relation, whose rows are tested, not compared'


def _relation_fix(name: str, scope: _Scope) -> str:
    """How to test a relation's rows in CEL: the forms the writer writes."""
    relation = scope.schema.relation(name)
    if relation is not None and not relation.many:
        rows = one_row(name)
        return f"write {rows}.exists(r, ...), or !{rows}.exists(r, true) for no row"
    return f"write {name}.exists(r, ...), or size({name}) == 0 for no row"


def _sized(node: cel.Node) -> TypeGuard[cel.Call]:
    """Whether `node` is `size(x)`."""
    return isinstance(node, cel.Call) and node.target is None and node.function == "size"


def _of_rows(node: cel.Node, scope: _Scope) -> TypeGuard[cel.Binary]:
    """Whether `node` compares `size` of a relation's rows (or of `filter` of them)."""
    if not isinstance(node, cel.Binary):
        return False
    sized = [side.args for side in (node.left, node.right) if _sized(side)]
    if not sized or len(sized[0]) != 1:
        return False
    rows = sized[0][0]
    if isinstance(rows, cel.Call) and rows.function == "filter":
        return True
    return isinstance(rows, cel.Name) and scope.schema.relation(rows.name) is not None


def _int_literal(node: cel.Node) -> bool:
    """Whether `node` is an integer literal CEL's `int` holds (64 bits), negated or not."""
    if isinstance(node, cel.Unary) and node.op == "-":
        return _int_literal(node.operand)
    if not isinstance(node, cel.Literal) or node.kind != "int":
        return False
    return isinstance(node.value, int) and abs(node.value) < 2**63


def _int_value(node: cel.Node) -> int:
    """The value of an integer literal `_int_literal` accepts."""
    if isinstance(node, cel.Unary):
        return -_int_value(node.operand)
    assert isinstance(node, cel.Literal) and isinstance(node.value, int)
    return node.value


def _one(name: str, exists: bool, body: Meaning) -> Meaning:
    """`exists` or `all` over a to-one relation's list of at most one row: `is`, and for
    `all` ("no row, or the body true") `isNot` of the body not true."""
    if exists:
        false = Quantified(
            name, Quantifier.IS_NOT, body.true if body.total else not_true(body.false)
        )
        return Meaning(Quantified(name, Quantifier.IS, body.true), false, False)
    every = Quantified(name, Quantifier.IS_NOT, not_true(body.true))
    return Meaning(every, Quantified(name, Quantifier.IS, body.false), False)


_OTHER_TYPE = "expected a literal of the type tested beside it ({}): the test holds for no other"
_CASED = "contains minds case in CEL and ignores it in a filter: the text has letters with case"
_UNSAID_KEY: Final = ("\x00cel",)


def _path_example(at: str) -> str:
    return f'type({at}) == string && {at} == "pro"'


def _unsaid(offset: int) -> Node:
    """What CEL's `!` of a test at a JSON path says, which no tree of ours says: it is true
    for JSON null (and the test's FALSE form for another type) where ours is UNKNOWN. A
    marker, refused where the filter read holds it (`read`)."""
    return Comparison("", Op.EQUALS, offset, path=_UNSAID_KEY)


def _unsaid_at(node: Node) -> int | None:
    """The offset of the first `_unsaid` marker in `node`, or None."""
    for item in walk(node):
        if isinstance(item, Comparison) and item.path == _UNSAID_KEY:
            assert isinstance(item.value, int)
            return item.value
    return None


def _none_true(relation: Relation, body: Meaning) -> Node:
    """When `exists` is false: every row's body false. A body CEL never fails on is false
    exactly where it is not TRUE, which is our `none`."""
    if body.total:
        return Quantified(relation.name, Quantifier.NONE, body.true)
    return Quantified(relation.name, Quantifier.EVERY, body.false)


def _offset(node: cel.Node) -> int:
    return node.offset
