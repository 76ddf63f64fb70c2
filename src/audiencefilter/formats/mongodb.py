"""MongoDB query documents read into our tree and written from it.

Faithful means: on every record, our filter is TRUE exactly when MongoDB matches the record as
a document; docs/interop.md lists each operator. What the mapping rests on:

- MongoDB matches or not; a condition here on a null is UNKNOWN. Its negations (`$ne`, `$nin`,
  `$not`, `$nor`) match a null or missing field, so they read through `logic.not_true`, which
  adds the null test; `{"$nin": [..., null]}` and `$nor` of a condition and its null test are
  the "present and not" our `NOT` means, and come back as `NOT`.
- `{field: null}` matches null and missing fields, as our null test does. `$exists` tells a
  stored null from a missing key, which a record here cannot: it is read only beside another
  operator that already requires a value, where it changes nothing.
- `$regex` is read for literal text only: `abc` (contains), `^abc` (starts with), `abc$`
  (ends with, or with a final newline: `$` matches before one), `abc(?!\\n)$` (ends with),
  and the option `i` where regular expressions fold case as `str.lower()` does
  (`folding.regex_folds_alike`).
- Dotted names are refused: MongoDB reads through arrays on a path (`{"data.tags": "vip"}`
  matches an array holding "vip"), our JSON paths never do; relations take `$elemMatch`.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from typing import Any

from ..errors import FilterError, Issue, describe_value, did_you_mean
from ..language.conditions import Syntax, unknown_field
from ..language.contact import CONTACT
from ..language.fields import CALENDAR_TYPES, OPERATORS, PATTERN_OPS, Field, Op, Schema
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import (
    FALSE,
    TRUE,
    And,
    Blank,
    Comparison,
    Const,
    IsNull,
    Node,
    Not,
    Or,
    Quantified,
    any_of,
)
from ..language.relations import Quantifier, Relation
from ..language.values import unique
from .declared import at_paths
from .folding import caseless, regex_folds_alike
from .logic import conjoin, not_true, unknown_when
from .reading import Path, Reading, decode, is_list, is_map

_SPELLING = {
    Op.EQUALS: "$eq",
    Op.GT: "$gt",
    Op.GTE: "$gte",
    Op.LT: "$lt",
    Op.LTE: "$lte",
    Op.IN: "$in",
    Op.NOT_IN: "$nin",
}
_COMPARE = {name: op for op, name in _SPELLING.items() if op not in (Op.IN, Op.NOT_IN)}
SYNTAX = Syntax(
    op=lambda op: _SPELLING.get(op, op.value),
    operator_names=lambda field: "$eq, $ne, $gt, $gte, $lt, $lte, $in, $nin, $regex, $not",
    describe=describe_value,
    written=lambda value: json.dumps(value, default=str),
    as_string=json.dumps,
    list_word="array",
    datetime_quotes='"',
    datetime_is_string=True,
    null_test=lambda name: f'test for null with {{"{name}": null}}',
    null_in_list=lambda name: f'to match nulls too, add null to the $in array of "{name}"',
    data_null_test="test for null with null",
    or_word="$or",
    mode_word="$options",
)
"""How MongoDB writes what the condition builder's messages name."""

_GROUPS = ("$and", "$or", "$nor")
_OPERATORS = (
    "$eq",
    "$ne",
    "$gt",
    "$gte",
    "$lt",
    "$lte",
    "$in",
    "$nin",
    "$exists",
    "$regex",
    "$options",
    "$not",
)
_META = frozenset("\\.^$|?*+()[]{}")
"""The characters a regular expression gives a meaning; escaped, each is itself."""
_END = "(?!\n)$"
"""The end of the text and nowhere else: `$` alone also matches before a final newline."""
_SLASHED = re.compile(r"\A/(.+)/([imsx]{,4})\Z", re.DOTALL)
"""`/abc/i`: a pattern some evaluators read as options and MongoDB as literal slashes."""


def read(source: object, schema: Schema = CONTACT, limits: Limits = DEFAULT_LIMITS) -> Node:
    """A MongoDB query document (JSON text or decoded) as our tree, TRUE exactly when MongoDB
    matches.

    Raises:
        FilterError: every problem found, each at its path (`$or[1].points.$gte`), including
            each operator or form that has no faithful meaning here.
    """
    reader = _Reader(schema, limits)
    data = decode(source, limits)
    if not is_map(data):
        reader.expected((), 'a query document such as {"country": "FR"}', data)
        return reader.finish(TRUE, source)
    return reader.finish(reader.document(data, (), 1), source)


class _Reader(Reading):
    def __init__(self, schema: Schema, limits: Limits) -> None:
        super().__init__(schema, limits, SYNTAX)

    def document(self, query: Mapping[Any, Any], path: Path, depth: int) -> Node:
        """A query document: each key a condition, all of them holding."""
        self.repeated_keys(query, path)
        if not self.enter(path, depth):
            return TRUE
        items = tuple(
            self.key(str(key), value, (*path, str(key)), depth) for key, value in query.items()
        )
        return conjoin(items)

    def key(self, key: str, value: Any, path: Path, depth: int) -> Node:
        if key in _GROUPS:
            return self.group(key, value, path, depth + 1)
        if key.startswith("$"):
            self.add(
                path,
                f'the operator "{key}" has no faithful meaning at the top of a query here',
                did_you_mean(key, _GROUPS) or "use $and, $or or $nor",
            )
            return TRUE
        relation = self.schema.relation(key)
        if relation is not None:
            return self.relation(relation, value, path, depth + 1)
        field = self.field(key, path)
        if field is None:
            return TRUE
        return self.condition(field, value, path, depth + 1)

    def group(self, key: str, value: Any, path: Path, depth: int) -> Node:
        """`$and`, `$or`, `$nor`: a non-empty array of query documents, as MongoDB requires."""
        if not is_list(value) or not value or not all(is_map(item) for item in value):
            self.expected(
                path,
                "a non-empty array of query documents",
                value,
                'write e.g. [{"country": "FR"}, {"points": {"$gte": 100}}]',
            )
            return TRUE
        if len(value) > self.limits.max_array:
            self.add(
                path,
                f"the array has {len(value)} documents, over the limit of {self.limits.max_array}",
                "split the audience",
            )
            return TRUE
        items = tuple(self.document(item, (*path, i), depth) for i, item in enumerate(value))
        if key == "$and":
            return conjoin(items)
        if key == "$or":
            return any_of(items)
        return conjoin(tuple(not_true(item) for item in items))

    def field(self, key: str, path: Path) -> Field | None:
        """The field a key names; dotted names and fields kept elsewhere are refused."""
        head = key.split(".")[0]
        if "." in key:
            self.dotted(head, path)
            return None
        field = self.schema.get(key)
        if field is None:
            names = (*self.schema.names, *self.schema.relation_names)
            self.add(path, *unknown_field(key, self.schema, names))
            return None
        if (
            field.type in CALENDAR_TYPES
            or field.type.element
            or field.source
            or field.type.entry.document
        ):
            self.add(
                path,
                f'"{key}" is a {field.type.value} field: MongoDB compares its values '
                "otherwise than we do (dates as BSON dates, arrays item by item)",
                "filter it in a where clause",
            )
            return None
        return field

    def dotted(self, head: str, path: Path) -> None:
        if self.schema.relation(head) is not None:
            self.add(
                path,
                f'a dotted name reads through the rows of "{head}" one key at a time',
                f'write {{"{head}": {{"$elemMatch": {{...}}}}}}',
            )
            return
        self.add(
            path,
            "a dotted name reads through arrays in MongoDB, and our JSON paths never "
            "do, so the two disagree on an array",
            "filter keys inside JSON in a where clause",
        )

    def condition(self, field: Field, value: Any, path: Path, depth: int) -> Node:
        """A field's value: a literal (equality), null, or a document of operators."""
        if not is_map(value):
            return self.equals(field, value, path)
        if not value or not all(str(key).startswith("$") for key in value):
            self.expected(
                path,
                'operators such as {"$gte": 100}; an embedded document is '
                "compared whole in MongoDB",
                value,
                "use operators",
            )
            return TRUE
        if not self.enter(path, depth):
            return TRUE
        return self.operators(field, value, path, depth)

    def operators(self, field: Field, ops: Mapping[Any, Any], path: Path, depth: int) -> Node:
        self.repeated_keys(ops, path)
        nodes = []
        for key, operand in ops.items():
            if key in ("$exists", "$options"):
                continue
            nodes.append(self.operator(field, str(key), operand, ops, (*path, str(key)), depth))
        node = conjoin(tuple(nodes))
        if "$exists" in ops:
            self.exists(ops["$exists"], node, (*path, "$exists"))
        if "$options" in ops and "$regex" not in ops:
            self.add((*path, "$options"), "$options goes beside $regex", "remove it")
        return node

    def operator(
        self, field: Field, key: str, operand: Any, ops: Mapping[Any, Any], path: Path, depth: int
    ) -> Node:
        if key in _COMPARE:
            return (
                self.equals(field, operand, path)
                if key == "$eq"
                else self.compare(field, _COMPARE[key], operand, path)
            )
        if key == "$ne":
            return not_true(self.equals(field, operand, path))
        if key == "$in":
            return self.among(field, operand, path)
        if key == "$nin":
            return self.outside(field, operand, path)
        if key == "$regex":
            return self.regex(field, operand, ops.get("$options", ""), path)
        if key == "$not":
            return self.negated(field, operand, path, depth + 1)
        self.add(
            path,
            f'the operator "{key}" has no faithful meaning here; the operators read '
            "are " + ", ".join(_OPERATORS),
            did_you_mean(key, _OPERATORS) or "write the test with those, or in a where clause",
        )
        return TRUE

    def equals(self, field: Field, value: Any, path: Path) -> Node:
        """Equality: `null` matches null and missing fields, as our null test does."""
        if is_list(value) or is_map(value):
            self.expected(path, f"a {field.type.value} or null", value)
            return TRUE
        return self.compare(field, Op.EQUALS, value, path)

    def compare(self, field: Field, op: Op, value: Any, path: Path) -> Node:
        report = self.report(path)
        if not self.conditions.accepts(field, op, report):
            return TRUE
        if is_map(value):
            self.expected(path, f"a {field.type.value}", value)
            return TRUE
        return self.conditions.comparison(field, op, value, False, report)

    def among(self, field: Field, values: Any, path: Path) -> Node:
        """`$in`: one of the values; a null among them matches null and missing fields."""
        listed = self.listed(values, path)
        if listed is None:
            return TRUE
        rest, null = listed
        if not field.accepts(Op.IN):  # booleans take no `in`: each value's equality
            equal = tuple(self.compare(field, Op.EQUALS, v, path) for v in unique(tuple(rest)))
            return any_of((*equal, IsNull(field.name))) if null else any_of(equal)
        if null and rest == [""] and field.takes_blank:
            return Blank(field.name)
        node = self.compare(field, Op.IN, rest, path) if rest or not null else FALSE
        return any_of((node, IsNull(field.name))) if null else node

    def outside(self, field: Field, values: Any, path: Path) -> Node:
        """`$nin`: none of the values, null and missing fields matching unless null is one."""
        listed = self.listed(values, path)
        if listed is None:
            return TRUE
        rest, null = listed
        if not field.accepts(Op.IN):
            return not_true(self.among(field, values, path))
        if not rest:
            return Not(IsNull(field.name)) if null else self.compare(field, Op.NOT_IN, [], path)
        node = self.compare(field, Op.NOT_IN, rest, path)
        return node if null else any_of((node, IsNull(field.name)))

    def listed(self, values: Any, path: Path) -> tuple[list[Any], bool] | None:
        """The values of `$in`/`$nin` without null, and whether null was one."""
        if not is_list(values):
            self.expected(path, "an array of values", values, 'write e.g. ["FR", "DE"]')
            return None
        return [value for value in values if value is not None], any(v is None for v in values)

    def exists(self, value: Any, beside: Node, path: Path) -> None:
        """`$exists: true` beside an operator that requires a value: it changes nothing."""
        if value is True and _requires_value(beside):
            return
        hint = (
            'for "present and not null" write {"$ne": null}'
            if value is not False
            else ('for "null or missing" write null')
        )
        self.add(
            path,
            "$exists tells a stored null from a missing key, and a record here has "
            "one null for both",
            hint,
        )

    def negated(self, field: Field, operand: Any, path: Path, depth: int) -> Node:
        """`$not`: the operators (or the regular expression) do not match."""
        if not is_map(operand) or not operand:
            self.expected(path, 'operators such as {"$gt": 5}', operand)
            return TRUE
        return not_true(self.condition(field, operand, path, depth))

    def regex(self, field: Field, pattern: Any, options: Any, path: Path) -> Node:
        """`$regex` of literal text: contains, starts with or ends with it."""
        if not PATTERN_OPS <= OPERATORS[field.type] or not isinstance(pattern, str):
            self.expected(path, "a regular expression (a string) on a string field", pattern)
            return TRUE
        if options not in ("", "i"):
            self.add(
                (*path[:-1], "$options"),
                f"the options {json.dumps(options)} have no faithful meaning here",
                'use "i", or none',
            )
            return TRUE
        shape = self.literal_pattern(pattern, path)
        if shape is None:
            return TRUE
        return self.pattern_test(field, shape, options == "i", path)

    def literal_pattern(self, pattern: str, path: Path) -> tuple[Op, str, bool] | None:
        """`(operator, text, newline)`: what a literal pattern tests; `newline` when a bare
        `$` also lets the text end before a final newline."""
        if _SLASHED.match(pattern):
            self.add(
                path,
                "/pattern/options is read as options by some evaluators and as slashes by MongoDB",
                'write the pattern alone and "$options": "i"',
            )
            return None
        start, body = pattern.startswith("^"), pattern.removeprefix("^")
        exact_end = body.endswith(_END) and not _escaped_at(body, len(body) - len(_END))
        end = exact_end or body.endswith("$") and not _escaped_at(body, len(body) - 1)
        body = body.removesuffix(_END) if exact_end else body.removesuffix("$") if end else body
        text = _unescape(body)
        if text is None or start and end:
            self.add(
                path,
                "a regular expression is read here only as literal text, anchored "
                "at the start (^abc) or at the end (abc$), or neither",
                "escape each of " + " ".join(sorted(_META)) + "; for equality use $eq",
            )
            return None
        op = Op.STARTS_WITH if start else Op.ENDS_WITH if end else Op.CONTAINS
        return op, text, end and not exact_end

    def pattern_test(
        self, field: Field, shape: tuple[Op, str, bool], folds: bool, path: Path
    ) -> Node:
        op, text, newline = shape
        if folds and not regex_folds_alike(text):
            self.add(
                path,
                "a regular expression ignores case otherwise than str.lower() for "
                f"some letters of {json.dumps(text, ensure_ascii=False)} (s and ſ, i and "
                "İ, σ and ς, ...)",
                "no faithful form exists: write contains in a where clause",
            )
            return TRUE
        if op is Op.CONTAINS and not folds and not caseless(text):
            self.add(
                path,
                "a regular expression without the option i is case-sensitive and "
                "contains ignores case here",
                'add "$options": "i", if case may be ignored',
            )
            return TRUE
        report = self.report(path)
        node = self.conditions.comparison(field, op, text, folds, report)
        if not newline:
            return node
        return any_of((node, self.conditions.comparison(field, op, text + "\n", folds, report)))

    def relation(self, relation: Relation, value: Any, path: Path, depth: int) -> Node:
        """`{"actions": {"$elemMatch": {...}}}`: some related row matches; `$not` of it: none."""
        if is_map(value) and list(value) == ["$not"] and is_map(value["$not"]):
            return not_true(self.relation(relation, value["$not"], (*path, "$not"), depth + 1))
        if not is_map(value) or list(value) != ["$elemMatch"] or not is_map(value["$elemMatch"]):
            self.expected(
                path,
                '{"$elemMatch": {...}} over the rows of "' + relation.name + '"',
                value,
                "a relation is tested row by row with $elemMatch",
            )
            return TRUE
        outer = self.schema
        self.schema = self.conditions.schema_fields = relation.schema
        try:
            where = self.document(value["$elemMatch"], (*path, "$elemMatch"), depth + 1)
        finally:
            self.schema = self.conditions.schema_fields = outer
        return Quantified(relation.name, Quantifier.SOME, where)


def _escaped_at(text: str, index: int) -> bool:
    """Whether the character at `index` follows an odd run of backslashes."""
    run = len(text[:index]) - len(text[:index].rstrip("\\"))
    return run % 2 == 1


def _unescape(body: str) -> str | None:
    """The literal text a pattern body stands for; None when it holds any other construct."""
    out, chars = [], iter(body)
    for char in chars:
        if char == "\\":
            following = next(chars, "")
            if not following or following.isalnum() or not following.isascii():
                return None
            out.append(following)
        elif char in _META:
            return None
        else:
            out.append(char)
    return "".join(out)


def _requires_value(node: Node) -> bool:
    """Whether `node` is TRUE only for a present, non-null value."""
    if isinstance(node, And):
        return any(_requires_value(item) for item in node.items)
    if isinstance(node, Not) and isinstance(node.item, IsNull):
        return True
    inner = node.item if isinstance(node, Not) else node
    return isinstance(inner, Comparison) and bool(unknown_when(inner))


def _escape(text: str) -> str:
    return "".join("\\" + char if char in _META else char for char in text)


# The writer.


def write(node: Node, schema: Schema = CONTACT) -> object:
    """Our tree as a MongoDB query document, matching exactly when the tree is TRUE.

    Raises:
        FilterError: a condition with no faithful MongoDB form, named in the message.
    """
    return _Writer(schema).true(at_paths(node, schema, "MongoDB", paths=False))


class _Writer:
    def __init__(self, schema: Schema) -> None:
        self.schema = schema

    def true(self, node: Node) -> dict[str, Any]:
        """The query matching exactly when `node` is TRUE."""
        match node:
            case And() | Or():
                return {f"${node.kind}": [self.true(item) for item in node.items]}
            case Not():
                return self.false(node.item)
            case Const():
                return {} if node.value else {"$nor": [{}]}
            case IsNull() if not node.path:
                return {self.field(node, node.field): None}
            case Blank() if not node.path:
                return {self.field(node, node.field): {"$in": [None, ""]}}
            case Comparison() if not node.path:
                return {self.field(node, node.field): self.comparison(node)}
            case Quantified() if node.quantifier in (
                Quantifier.SOME,
                Quantifier.NONE,
                Quantifier.EVERY,
            ):
                return self.quantified(node)
            case _:
                raise _refused(node, "MongoDB has no faithful form of it")

    def false(self, node: Node) -> dict[str, Any]:
        """The query matching exactly when `node` is FALSE (never for UNKNOWN)."""
        match node:
            case And() | Or():
                other = "$or" if isinstance(node, And) else "$and"
                return {other: [self.false(item) for item in node.items]}
            case Not():
                return self.true(node.item)
            case Const():
                return self.true(Const(not node.value))
            case IsNull() if not node.path:
                return {self.field(node, node.field): {"$ne": None}}
            case _:
                written = self.true(node)  # refuses first what MongoDB cannot write
                nulls = [self.true(test) for test in unknown_when(node)]
                return {"$nor": [written, *nulls]}

    def field(self, node: Node, name: str) -> str:
        found = self.schema.get(name)
        if found is None or found.type in CALENDAR_TYPES or found.type.element or found.source:
            raise _refused(node, "MongoDB compares its values otherwise than we do")
        return name

    def comparison(self, node: Comparison) -> Any:
        value = node.value
        if node.op in PATTERN_OPS:
            return self.pattern(node)
        if node.insensitive or node.op not in _SPELLING:
            raise _refused(node, "MongoDB compares text case-sensitively outside $regex")
        if node.op is Op.EQUALS:
            return value
        if node.op is Op.NOT_IN:
            return {"$nin": [*value, None] if value else []}  # type: ignore[misc]
        return {_SPELLING[node.op]: list(value) if isinstance(value, tuple) else value}

    def pattern(self, node: Comparison) -> dict[str, str]:
        text = str(node.value)
        if node.insensitive and not regex_folds_alike(text):
            raise _refused(
                node,
                "a regular expression ignores case otherwise than str.lower() "
                "for some of its letters",
            )
        body = _escape(text)
        shaped = {Op.CONTAINS: body, Op.STARTS_WITH: "^" + body, Op.ENDS_WITH: body + _END}
        written = {"$regex": shaped[node.op]}
        return {**written, "$options": "i"} if node.insensitive else written

    def quantified(self, node: Quantified) -> dict[str, Any]:
        """`some` as `$elemMatch`, `none` as `$not` of it, `every` as none of the rows for
        which the condition is not TRUE."""
        relation = self.schema.relation(node.relation)
        assert relation is not None
        where = node.where if node.quantifier is not Quantifier.EVERY else not_true(node.where)
        inner = {"$elemMatch": _Writer(relation.schema).true(where)}
        some = node.quantifier is Quantifier.SOME
        return {node.relation: inner if some else {"$not": inner}}


def _refused(node: Node, why: str) -> FilterError:
    from ..where.write import to_json

    shown = to_json(node)
    return FilterError(
        [
            Issue(
                path="",
                message=f"the condition {shown} has no faithful MongoDB form: {why}",
                suggestion="keep it in a where clause",
            )
        ]
    )
