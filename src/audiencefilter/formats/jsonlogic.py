"""JsonLogic (jsonlogic.com) rules read into our tree and written from it.

Faithful means: on every record, our filter is TRUE exactly when the rule is truthy for the
reference evaluator, `json_logic.jsonLogic` (the Python port); docs/interop.md lists each
operator, and where the JavaScript evaluator answers otherwise. The mapping:

- `and`, `or`, `!`, `!!` are two-valued: a negation goes through `logic.not_true`, which
  adds the null test under which a condition is UNKNOWN here (JsonLogic's `!=` holds for a
  missing value, so `country != "FR"` reads `NOT country = "FR" OR country IS NULL`).
- A comparison takes a `var` and a literal. What the evaluator answers for a null value is
  decided here once (`_null_holds`): never for `<`, `in` or `===`, and for `==`, `<=`, `>=`
  when Python's loose equality makes null equal to the literal (`false`, the text "None").
- Refused, each with its reason: date-times (compared as text), case-sensitive substrings of
  cased text (our `contains` ignores case), loose comparisons and ordering on a JSON path (the
  evaluator turns text into numbers there), `var` defaults, and keys that index arrays.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from itertools import combinations
from typing import Any

from ..errors import FilterError, Issue, describe_value, did_you_mean
from ..language.conditions import Syntax, unknown_field
from ..language.contact import CONTACT
from ..language.fields import CALENDAR_TYPES, MIRRORED, ORDERING_OPS, Field, FieldType, Op, Schema
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import (
    FALSE,
    TRUE,
    And,
    Blank,
    Comparison,
    Const,
    FieldComparison,
    IsNull,
    Node,
    Not,
    Or,
    all_of,
    any_of,
)
from .declared import at_paths
from .folding import caseless
from .logic import conjoin, not_true, unknown_when
from .reading import Path, Reading, decode, is_list, is_map

_SPELLING = {
    Op.EQUALS: "===",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.IN: "in",
    Op.CONTAINS: "in",
}
SYNTAX = Syntax(
    op=lambda op: _SPELLING.get(op, op.value),
    operator_names=lambda field: "===, !==, <, <=, >, >=, in",
    describe=describe_value,
    written=lambda value: json.dumps(value, default=str),
    as_string=json.dumps,
    list_word="array",
    datetime_quotes='"',
    datetime_is_string=True,
    null_test=lambda name: f'test for null with {{"===": [{{"var": "{name}"}}, null]}}',
    null_in_list=lambda name: (
        f'to match nulls too, use "or" with {{"===": [{{"var": "{name}"}}, null]}}'
    ),
    data_null_test='test for null with {"===": [{"var": "data.key"}, null]}',
    or_word="or",
    mode_word="mode",
)
"""How JsonLogic writes what the condition builder's messages name."""

_ORDER = {"<": Op.LT, "<=": Op.LTE, ">": Op.GT, ">=": Op.GTE}
_MIRROR = MIRRORED
_EQUALITY = ("==", "===", "!=", "!==")
_OPERATORS = ("and", "or", "!", "!!", "var", "in", "missing", "missing_some", *_EQUALITY, *_ORDER)
_MAX_COMBINATIONS = 64
"""`missing_some` is written out as an OR of ANDs of blank tests; no more ANDs than this."""


def read(source: object, schema: Schema = CONTACT, limits: Limits = DEFAULT_LIMITS) -> Node:
    """A JsonLogic rule (JSON text or decoded) as our tree, TRUE exactly when it is truthy.

    Raises:
        FilterError: every problem found, each at its path in the rule (`and[1]["<="][0]`),
            including each operator or form that has no faithful meaning here.
    """
    reader = _Reader(schema, limits)
    data = decode(source, limits)
    return reader.finish(reader.rule(data, (), 1), source)


class _Reader(Reading):
    def __init__(self, schema: Schema, limits: Limits) -> None:
        super().__init__(schema, limits, SYNTAX)

    def rule(self, rule: Any, path: Path, depth: int) -> Node:
        """A rule as a condition: our tree TRUE exactly when the rule is truthy."""
        if isinstance(rule, bool):
            return TRUE if rule else FALSE
        if not is_map(rule) or len(rule) != 1:
            self.expected(
                path,
                "a rule: an object of one operator",
                rule,
                'write e.g. {"===": [{"var": "country"}, "FR"]}, or true or false',
            )
            return TRUE
        self.repeated_keys(rule, path)
        ((operator, args),) = rule.items()
        if not self.enter(path, depth):
            return TRUE
        return self.operation(str(operator), args, (*path, str(operator)), depth)

    def operation(self, operator: str, args: Any, path: Path, depth: int) -> Node:
        handler = self.handlers().get(operator)
        if handler is not None:
            return handler(_arguments(args), path, depth)
        self.add(
            path[:-1],
            f'the operator "{operator}" has no faithful meaning here; the operators read are '
            + ", ".join(_OPERATORS),
            did_you_mean(operator, _OPERATORS) or "write the test with those, or in a where clause",
        )
        return TRUE

    def handlers(self) -> Mapping[str, Callable[[list[Any], Path, int], Node]]:
        return {
            "and": self.conjunction,
            "or": self.disjunction,
            "!": self.negation,
            "!!": self.truth,
            "var": self.bare_var,
            "in": self.membership,
            "missing": self.missing,
            "missing_some": self.missing_some,
            **dict.fromkeys(_EQUALITY, self.equality),
            **dict.fromkeys(_ORDER, self.ordering),
        }

    def items(self, args: list[Any], path: Path, depth: int) -> tuple[Node, ...]:
        if len(args) > self.limits.max_array:
            self.add(
                path,
                f"the array has {len(args)} rules, over the limit of {self.limits.max_array}",
                "split the audience",
            )
            return ()
        return tuple(self.rule(arg, (*path, i), depth + 1) for i, arg in enumerate(args))

    def conjunction(self, args: list[Any], path: Path, depth: int) -> Node:
        """`and`: every rule truthy; an empty `and` is false, as the evaluator answers."""
        return conjoin(self.items(args, path, depth)) if args else FALSE

    def disjunction(self, args: list[Any], path: Path, depth: int) -> Node:
        return any_of(self.items(args, path, depth))

    def negation(self, args: list[Any], path: Path, depth: int) -> Node:
        """`!`: the operand is falsy, null values included (`logic.not_true`)."""
        return not_true(self.truth(args, path, depth))

    def truth(self, args: list[Any], path: Path, depth: int) -> Node:
        """`!!`, and the operand of `!`: a rule, or a `var` taken for its truthiness."""
        if len(args) != 1:
            self.expected(path, "one operand", args, 'write e.g. {"!": {"var": "email"}}')
            return TRUE
        operand, at = args[0], (*path, 0)
        if is_map(operand) and len(operand) == 1 and "var" in operand:
            return self.truthy(operand["var"], (*at, "var"))
        return self.rule(operand, at, depth + 1)

    def bare_var(self, args: list[Any], path: Path, depth: int) -> Node:
        """A `var` standing as a condition: its value is truthy."""
        return self.truthy(args if len(args) != 1 else args[0], path)

    def truthy(self, name: Any, path: Path) -> Node:
        """The value of `var name` is truthy: not blank text, a number not 0, `true`."""
        found = self.field(name, path)
        if found is None:
            return TRUE
        field, keys = found
        if keys is not None:
            self.add(
                path,
                "the truthiness of a value inside JSON has no meaning here "
                '(0, "", false, [] and {} are all falsy)',
                "compare it with ===",
            )
            return TRUE
        return _truthy(field)

    def field(self, name: Any, path: Path) -> tuple[Field, tuple[str, ...] | None] | None:
        """The field (and the keys inside a JSON field) a `var` names; None after a problem."""
        if is_list(name) and len(name) == 1:
            name = name[0]
        elif is_list(name):
            self.add(
                path,
                "a var with a default has no faithful meaning here: the default stands for null",
                'write {"var": "<field>"}, and test null with ===',
            )
            return None
        if not isinstance(name, str) or not name:
            self.expected(path, "a field name", name, 'write e.g. {"var": "email"}')
            return None
        head, *keys = name.split(".")
        field = self.schema.get(head)
        if field is None:
            self.add(path, *unknown_field(head, self.schema, self.schema.names))
            return None
        return self.typed(field, tuple(keys), path)

    def typed(
        self, field: Field, keys: tuple[str, ...], path: Path
    ) -> tuple[Field, tuple[str, ...] | None] | None:
        """A field JsonLogic can compare faithfully, with its keys for a JSON field."""
        if field.type is FieldType.JSON:
            return (field, keys) if self.data_keys(field, keys, path) else None
        if keys:
            self.add(
                path,
                f'"{field.name}" is a {field.type.value} field: it has no keys',
                f'write {{"var": "{field.name}"}}',
            )
            return None
        if field.type in CALENDAR_TYPES or field.type.element is not None or field.source:
            self.add(
                path,
                f'"{field.name}" is a {field.type.value} field: JsonLogic compares '
                "its values as text or lists, not as ours",
                "filter it in a where clause",
            )
            return None
        return field, None

    def data_keys(self, field: Field, keys: tuple[str, ...], path: Path) -> bool:
        """Whether `keys` name a value inside a JSON field as our paths do."""
        if not keys:
            self.add(
                path,
                f'"{field.name}" is compared at a key inside it',
                f'write e.g. {{"var": "{field.name}.plan"}}',
            )
            return False
        numeric = next((key for key in keys if _is_index(key)), None)
        if numeric is not None:
            found = f'the key "{numeric}" reads an item of an array in JsonLogic'
            self.add(path, found + ", and a key of an object here", "name keys of objects only")
            return False
        return True

    def operands(self, args: list[Any], path: Path, sizes: tuple[int, ...]) -> list[Any] | None:
        if len(args) in sizes:
            return args
        wanted = " or ".join(str(size) for size in sizes)
        three = "; only < and <= take three ([low, var, high])" if 3 not in sizes else ""
        example = f'write e.g. {{"{path[-1]}": [{{"var": "points"}}, 100]}}'
        self.expected(path, f"an array of {wanted} operands", args, example + three)
        return None

    def equality(self, args: list[Any], path: Path, depth: int) -> Node:
        """`==`, `===` and their negations `!=`, `!==`."""
        operator = path[-1]
        pair = self.operands(args, path, (2,))
        if pair is None:
            return TRUE
        node = self.equals(pair, path, strict=operator in ("===", "!=="))
        return not_true(node) if operator in ("!=", "!==") else node

    def equals(self, pair: list[Any], path: Path, strict: bool) -> Node:
        var_at = next((i for i, arg in enumerate(pair) if _is_var(arg)), None)
        if var_at is None or _is_var(pair[1 - var_at]):
            self.add(
                path,
                "expected one var and one value",
                'compare a field with a value: {"===": [{"var": "country"}, "FR"]}',
            )
            return TRUE
        found = self.field(pair[var_at]["var"], (*path, var_at, "var"))
        if found is None:
            return TRUE
        at = (*path, 1 - var_at)
        value = pair[1 - var_at]
        if value is None and not strict:
            self.add(
                at,
                '== null also holds for false, 0 and the text "None" in the evaluator',
                "test null with === null",
            )
            return TRUE
        if not strict and found[1] is not None:
            self.add(
                path, '== converts types (5 == "5"); inside JSON the types differ', "write ==="
            )
            return TRUE
        node = self.compare(found, Op.EQUALS, value, at)
        return node if strict or not _null_holds(Op.EQUALS, value) else any_of((node, _null(found)))

    def compare(
        self, found: tuple[Field, tuple[str, ...] | None], op: Op, value: Any, at: Path
    ) -> Node:
        """`field op value` through the condition builder."""
        field, keys = found
        if is_map(value) or is_list(value) and op is not Op.IN:
            fix = "compare with one value; list values with in"
            self.expected(at, "a string, a number, a boolean or null", value, fix)
            return TRUE
        report = self.report(at)
        if keys is not None:
            return self.conditions.data_comparison(field, keys, op, value, False, report)
        if not self.conditions.accepts(field, op, report):
            return TRUE
        return self.conditions.comparison(field, op, value, False, report)

    def ordering(self, args: list[Any], path: Path, depth: int) -> Node:
        """`<`, `<=`, `>`, `>=`; `<` and `<=` also take three operands (between)."""
        op = _ORDER[str(path[-1])]
        sizes = (2, 3) if op in (Op.LT, Op.LTE) else (2,)
        operands = self.operands(args, path, sizes)
        if operands is None:
            return TRUE
        if len(operands) == 3:
            return self.between(operands, op, path)
        return self.order(operands, op, path)

    def order(self, pair: list[Any], op: Op, path: Path) -> Node:
        if _is_var(pair[0]) and _is_var(pair[1]):
            return self.reference(pair, op, path)
        if _is_var(pair[1]):
            pair, op, flipped = [pair[1], pair[0]], _MIRROR[op], True
        else:
            flipped = False
        if not _is_var(pair[0]):
            self.add(path, "expected a var on one side", "compare a field with a value")
            return TRUE
        places = (1, 0) if flipped else (0, 1)
        return self.ordered(pair[0]["var"], op, pair[1], path, places)

    def ordered(self, name: Any, op: Op, value: Any, path: Path, places: tuple[int, int]) -> Node:
        """`var op value`, the var and the value at the operand indexes `places`."""
        found = self.field(name, (*path, places[0], "var"))
        if found is None:
            return TRUE
        at = (*path, places[1])
        if found[1] is not None:
            self.add(
                path,
                "ordering inside JSON turns text and booleans into numbers in JsonLogic",
                "compare inside JSON with === or in",
            )
            return TRUE
        if value is None:
            self.add(
                at,
                "ordering with null has no faithful meaning (JsonLogic's evaluators disagree)",
                "test null with === null",
            )
            return TRUE
        node = self.compare(found, op, value, at)
        return any_of((node, _null(found))) if _null_holds(op, value) else node

    def between(self, operands: list[Any], op: Op, path: Path) -> Node:
        """`{"<": [a, {"var": x}, b]}`: a < x < b (`<=`: a <= x <= b)."""
        low, middle, high = operands
        if not _is_var(middle) or _is_var(low) or _is_var(high):
            self.add(
                path,
                "expected [value, var, value] in a three-operand comparison",
                'write e.g. {"<": [0, {"var": "points"}, 100]}',
            )
            return TRUE
        lower = self.ordered(middle["var"], _MIRROR[op], low, path, (1, 0))
        upper = self.ordered(middle["var"], op, high, path, (1, 2))
        return _between(lower, upper)

    def reference(self, pair: list[Any], op: Op, path: Path) -> Node:
        """Two vars: a field reference, faithful for `<` and `>` only (null is false)."""
        if op not in (Op.LT, Op.GT):
            self.add(
                path,
                f"{SYNTAX.op(op)} between two fields holds for two nulls in the evaluator",
                "compare two fields with < or >",
            )
            return TRUE
        found = self.field(pair[0]["var"], (*path, 0, "var"))
        if found is None:
            return TRUE
        field, keys = found
        report = self.report((*path, 1, "var"))
        if keys is not None or not self.conditions.accepts(field, op, report):
            if keys is not None:
                self.add(
                    path,
                    "a field reference compares two fields of their own columns",
                    "compare a value inside JSON with a literal",
                )
            return TRUE
        return self.conditions.comparison(field, op, {"_ref": pair[1]["var"]}, False, report)

    def membership(self, args: list[Any], path: Path, depth: int) -> Node:
        """`in`: a value among a list, or a text inside a field's text."""
        pair = self.operands(args, path, (2,))
        if pair is None:
            return TRUE
        needle, haystack = pair
        if _is_var(needle) and is_list(haystack):
            return self.among(needle["var"], haystack, path)
        if _is_var(haystack) and not _is_var(needle):
            return self.substring(needle, haystack["var"], path)
        self.add(
            path,
            'expected [{"var": ...}, [values]] or ["text", {"var": ...}]',
            'write e.g. {"in": [{"var": "country"}, ["FR", "DE"]]}',
        )
        return TRUE

    def among(self, name: Any, values: Sequence[Any], path: Path) -> Node:
        found = self.field(name, (*path, 0, "var"))
        if found is None:
            return TRUE
        if found[1] is not None and not all(isinstance(v, str) for v in values):
            self.add(
                (*path, 1),
                "in compares numbers and booleans alike in JsonLogic (true equals 1)",
                "inside JSON, list strings only",
            )
            return TRUE
        return self.compare(found, Op.IN, list(values), (*path, 1))

    def substring(self, needle: Any, name: Any, path: Path) -> Node:
        """`{"in": ["abc", {"var": "email"}]}`: read as `contains` when the text has no case."""
        found = self.field(name, (*path, 1, "var"))
        if found is None:
            return TRUE
        if found[1] is not None or found[0].type is not FieldType.STRING:
            self.add(path, "in looks inside text fields only here", "use a string field")
            return TRUE
        if isinstance(needle, str) and not caseless(needle):
            self.add(
                (*path, 0),
                "in is case-sensitive in JsonLogic and contains ignores case "
                f"here: the text {json.dumps(needle, ensure_ascii=False)} has letters "
                "with case, so the two would disagree",
                "no faithful form exists; write contains in a where clause",
            )
            return TRUE
        return self.compare(found, Op.CONTAINS, needle, (*path, 0))

    def missing(self, args: list[Any], path: Path, depth: int) -> Node:
        """`missing`: some of the named values is null or the empty text."""
        names = args[0] if len(args) == 1 and is_list(args[0]) else args
        blanks = self.blanks(names, path)
        return FALSE if blanks is None else any_of(blanks)

    def missing_some(self, args: list[Any], path: Path, depth: int) -> Node:
        """`missing_some: [n, names]`: fewer than n of the named values are present."""
        pair = self.operands(args, path, (2,))
        if pair is None or not _is_count(pair[0]) or not is_list(pair[1]):
            self.add(
                path,
                "expected [count, [names]]",
                'write e.g. {"missing_some": [1, ["email", "firstName"]]}',
            )
            return TRUE
        blanks = self.blanks(pair[1], (*path, 1))
        if blanks is None:
            return TRUE
        return self.fewer_present(pair[0], blanks, path)

    def fewer_present(self, need: int, blanks: tuple[Node, ...], path: Path) -> Node:
        """Fewer than `need` present (and some missing): some `k - need + 1` are all blank."""
        if need <= 0 or not blanks:
            return FALSE
        size = max(1, len(blanks) - need + 1)
        groups = list(combinations(blanks, size)) if size <= len(blanks) else []
        if len(groups) > _MAX_COMBINATIONS:
            self.add(
                path,
                f"missing_some over {len(blanks)} names makes {len(groups)} cases",
                f"name fewer values (at most {_MAX_COMBINATIONS} cases)",
            )
            return TRUE
        return any_of(tuple(all_of(group) for group in groups))

    def blanks(self, names: Any, path: Path) -> tuple[Node, ...] | None:
        """Each named value is null or "" (a null test where "" cannot be stored)."""
        if not is_list(names) or len(set(map(str, names))) != len(names):
            self.expected(
                path, "an array of distinct field names", names, 'write e.g. ["email", "firstName"]'
            )
            return None
        found = tuple(self.field(name, (*path, i)) for i, name in enumerate(names))
        return tuple(_blank(item) for item in found if item is not None)


def _arguments(args: Any) -> list[Any]:
    """An operator's operands: JsonLogic takes a lone operand for an array of one."""
    return list(args) if is_list(args) else [args]


def _is_var(value: Any) -> bool:
    return is_map(value) and len(value) == 1 and "var" in value


def _is_index(key: str) -> bool:
    """Whether the evaluator reads `key` as an array index (`int()` accepts it)."""
    try:
        int(key)
    except ValueError:
        return False
    return True


def _is_count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _null(found: tuple[Field, tuple[str, ...] | None]) -> Node:
    return IsNull(found[0].name, found[1] or ())


def _blank(found: tuple[Field, tuple[str, ...] | None]) -> Node:
    field, keys = found
    if keys is not None or field.type is FieldType.STRING:
        return Blank(field.name, keys or ())
    return IsNull(field.name)


def _truthy(field: Field) -> Node:
    """A field's value is truthy for the evaluator (null never is)."""
    if field.type is FieldType.STRING:
        return Not(Blank(field.name))
    if field.type is FieldType.NUMBER:
        return Not(Comparison(field.name, Op.EQUALS, 0))
    return Comparison(field.name, Op.EQUALS, True)


def _loosely_null(value: Any) -> bool:
    """Whether the evaluator's `==` finds null equal to `value`: Python's `str(None)` and
    `bool(None)` make it equal to the text "None" and to `false`."""
    return value is False or value == "None" and isinstance(value, str)


def _null_holds(op: Op, value: Any) -> bool:
    """Whether the evaluator's `op` holds for a null value against `value` (`<` and `>`
    never; `==`, `<=`, `>=` when null is loosely equal to it)."""
    return op in (Op.EQUALS, Op.LTE, Op.GTE) and _loosely_null(value)


def _between(lower: Node, upper: Node) -> Node:
    """The two bounds of a between; null satisfies it only when it satisfies both."""
    if isinstance(lower, Or) and isinstance(upper, Or):
        return Or((And((lower.items[0], upper.items[0])), lower.items[1]))
    return all_of(tuple(_strip_null(n) for n in (lower, upper)))


def _strip_null(node: Node) -> Node:
    return node.items[0] if isinstance(node, Or) else node


# The writer.


def write(node: Node, schema: Schema = CONTACT) -> object:
    """Our tree as a JsonLogic rule, truthy exactly when the tree is TRUE.

    Raises:
        FilterError: a condition with no faithful JsonLogic form, named in the message.
    """
    return _Writer(schema).true(at_paths(node, schema, "JsonLogic", paths=True))


class _Writer:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def true(self, node: Node) -> Any:
        """The rule truthy exactly when `node` is TRUE."""
        match node:
            case And() | Or():
                return {node.kind: [self.true(item) for item in node.items]}
            case Not():
                return self.false(node.item)
            case Const():
                return node.value
            case IsNull():
                return {"===": [self.var(node, node.field, node.path), None]}
            case Blank() if not node.path:
                return {"!": self.var(node, node.field, ())}
            case Comparison():
                return self.comparison(node)
            case FieldComparison() if node.op in (Op.LT, Op.GT):
                return {
                    _SPELLING[node.op]: [
                        self.var(node, node.field, ()),
                        self.var(node, node.other, ()),
                    ]
                }
            case _:
                raise _refused(node, "JsonLogic has no faithful form of it")

    def false(self, node: Node) -> Any:
        """The rule truthy exactly when `node` is FALSE (never for UNKNOWN)."""
        match node:
            case And() | Or():
                other = "or" if isinstance(node, And) else "and"
                return {other: [self.false(item) for item in node.items]}
            case Not():
                return self.true(node.item)
            case Const():
                return not node.value
            case IsNull():
                return {"!==": [self.var(node, node.field, node.path), None]}
            case Blank() if not node.path:
                return {"!!": self.var(node, node.field, ())}
            case _:
                return self.neither(node)

    def neither(self, node: Node) -> Any:
        """Neither the condition nor the null tests that make it UNKNOWN."""
        written = self.true(node)  # refuses first what JsonLogic cannot write
        nulls = [self.true(test) for test in unknown_when(node)]
        return {"!": {"or": [written, *nulls]} if nulls else written}

    def comparison(self, node: Comparison) -> Any:
        var = self.var(node, node.field, node.path)
        if node.op is Op.NOT_IN and node.path:
            raise _refused(node, "notIn inside JSON is false for a value of another type")
        if node.op is Op.NOT_IN:
            return self.false(
                Comparison(node.field, Op.IN, node.value, node.insensitive, node.path)
            )
        if node.op is Op.CONTAINS and not node.path and caseless(str(node.value)):
            return {"in": [node.value, var]}
        if node.insensitive or node.op not in _SPELLING or node.op is Op.CONTAINS:
            raise _refused(node, _NO_FORM.get(node.op, "JsonLogic compares case-sensitively"))
        if node.path and (
            node.op in ORDERING_OPS or node.op is Op.IN and _has_non_text(node.value)
        ):
            raise _refused(node, "JsonLogic turns text and booleans into numbers inside JSON")
        value = list(node.value) if isinstance(node.value, tuple) else node.value
        return {_SPELLING[node.op]: [var, value]}

    def var(self, node: Node, field: str, path: tuple[str, ...]) -> dict[str, str]:
        """`{"var": "field.key"}`, for a field JsonLogic compares as we do."""
        found = self.schema.get(field)
        if found is not None and (found.type in CALENDAR_TYPES or found.source):
            raise _refused(node, "JsonLogic compares date-times as text")
        if any("." in key or _is_index(key) for key in path):
            raise _refused(node, "a key holding a dot or a number cannot be named in a var")
        return {"var": ".".join((field, *path))}


_NO_FORM = {
    Op.CONTAINS: "JsonLogic's in is case-sensitive, and the text has letters with case",
    Op.STARTS_WITH: "JsonLogic has no test of how a text starts",
    Op.ENDS_WITH: "JsonLogic has no test of how a text ends",
    Op.WITHIN: "JsonLogic compares date-times as text",
    Op.ANNIVERSARY: "JsonLogic compares date-times as text",
}


def _has_non_text(values: Any) -> bool:
    return not all(isinstance(value, str) for value in values)


def _refused(node: Node, why: str) -> FilterError:
    from ..where.write import to_json

    shown = to_json(node)
    return FilterError(
        [
            Issue(
                path="",
                message=f"the condition {shown} has no faithful JsonLogic form: {why}",
                suggestion="keep it in a where clause",
            )
        ]
    )
