"""Where-clause JSON (text or an already decoded mapping) to the AST: the walker of the form.

A hand-written walker rather than a pydantic model of the where clause: it tracks the path of
every value (`OR[1].points.gte`) and keeps going after a problem, so one `FilterError` lists
everything wrong at once. The walk is bounded by `Limits` (depth, nodes, array length, text
size) so no input can recurse without end or make the parser do unbounded work.

Design choices:
- This module reads the shape of the where clause only: objects, groups (`AND`, `OR`, `NOT`),
  a field's object of operators, `not`, `mode` and a JSON field's `path`. Each condition is
  checked and built by `language.conditions`, shared with the text syntax; `JSON_SYNTAX` says
  how the JSON form writes what its messages name.
- A field and a JSON field (`{"path": [...], <operators>}`) go through the same methods; only
  the check of each comparison differs.
- Decoding is `decode.py`'s; `parse` first tries the accelerator (`fast.py`), which reads an
  ordinary valid filter much faster and gives anything else back to this reader.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..errors import FilterError, Issue, IssueCollector, describe_value, did_you_mean, join_path
from ..language.conditions import REF, Conditions, Report, Syntax, Where, shown, unknown_field
from ..language.contact import CONTACT
from ..language.fields import (
    ARRAY_OPS,
    BLANK,
    CALENDAR_TYPES,
    JSON_STRING_ALIASES,
    LIST_FIELD_OPS,
    SHORTHAND_OP,
    Field,
    ListOp,
    Op,
    Schema,
)
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import TRUE, IsNull, Node, Not, Or, all_of, any_of
from ..language.relations import Relation
from . import fast
from .decode import DuplicateKeys, as_str, load_json
from .relations import Path, read_relation

LOGICAL_KEYS = ("AND", "OR", "NOT")
_OPS_BY_NAME = {op.value: op for op in Op}
_LIST_OPS_BY_NAME = {op.value: op for op in LIST_FIELD_OPS}
_JSON_OPS_BY_NAME: dict[str, Op | ListOp] = {
    **{op.value: op for op in Op},
    **{op.value: op for op in ARRAY_OPS},
}
_GROUPS: dict[str, Callable[[tuple[Node, ...]], Node]] = {"AND": all_of, "OR": any_of}
_REPEATED_OPERATOR = 'the operator "{key}" appears more than once'
_REPEATED_OPERATOR_HINT = "keep one of them, or combine conditions with AND: [...]"

JSON_SYNTAX = Syntax(
    op=lambda op: op.value,
    operator_names=lambda field: ", ".join(field.operator_names),
    describe=describe_value,
    written=lambda value: json.dumps(value, default=str),
    as_string=json.dumps,
    list_word="array",
    datetime_quotes='"',
    datetime_is_string=True,
    null_test=lambda name: f'test for null with "{name}": null, or "not": null',
    null_in_list=lambda name: f'to match nulls too, use OR with "{name}": null',
    data_null_test='test for null with "equals": null, or "not": null',
    or_word="OR",
    mode_word="mode",
    list_op=lambda op: op.value,
)
"""How the JSON form writes what condition messages name."""


def read_where(
    where: str | bytes | Mapping[str, Any],
    schema: Schema = CONTACT,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> Node:
    """Read a where clause into its validated tree (`audiencefilter.parse` wraps it in a
    `Filter`): a reader builds nodes only and knows nothing of the facade.

    Args:
        where: JSON text, or a mapping already decoded (values may also be `datetime`s).
        schema: The fields the filter may use; the contact schema of the spec by default.
        limits: Bounds on depth, size and array length.

    Raises:
        FilterError: listing every problem found, each with its path and, for text input,
            its line and column.
    """
    if fast.ENABLED and type(where) is str:
        root = fast.read_fast(where, schema, limits)
        if root is not None:
            return root
    return read_plain(where, schema, limits)


def read_plain(where: str | bytes | Mapping[str, Any], schema: Schema, limits: Limits) -> Node:
    """`read_where` without the accelerator: the definition of the where clause."""
    source: str | None = None
    if isinstance(where, str | bytes):
        source = as_str(where)
        data = load_json(where, limits)
    else:
        data = where
    reader = _Reader(schema, limits)
    root = reader.read(data)
    if reader.issues:
        issues = reader.issues.issues
        if source is not None:
            from .positions import locate_issues

            issues = locate_issues(source, issues)
        raise FilterError(issues, source=source)
    return root


# A location (`Path`) is a linked list `((parent, "OR"), 1)`: cheap to extend, rendered only on
# error.


def render_path(path: Path) -> str:
    """`((None, "OR"), 1), "points")` -> `OR[1].points`."""
    parts: list[str | int] = []
    while path is not None:
        path, key = path
        parts.append(key)
    text = ""
    for part in reversed(parts):
        text = f"{text}[{part}]" if isinstance(part, int) else join_path(text, str(part))
    return text


class _Collector(IssueCollector):
    __slots__ = ()

    def add(self, path: Any, message: str, suggestion: str | None = None) -> None:
        rendered = path if isinstance(path, str) else render_path(path)
        self.issues.append(Issue(path=rendered, message=message, suggestion=suggestion))


def _is_map(value: object) -> bool:
    return type(value) is dict or isinstance(value, Mapping)


def _is_seq(value: object) -> bool:
    return type(value) is list or isinstance(value, list | tuple)


@dataclass(frozen=True, slots=True)
class _Tested:
    """What an object of operators tests, and how each of its operators reads: the field (and
    the keys inside it, for a JSON field), its depth, its case folding, and whether it is
    under `not`."""

    field: Field
    keys: tuple[str, ...] | None
    depth: int
    insensitive: bool
    inside_not: bool


def _operator_named(field: Field, keys: tuple[str, ...] | None, key: Any) -> Op | ListOp | None:
    """The operator `key` names among those of `field`'s kind: a list field's, a data path's,
    or a scalar field's."""
    if not isinstance(key, str):
        return None
    by_name: Mapping[str, Op | ListOp] = (
        _LIST_OPS_BY_NAME
        if field.type.element
        else _JSON_OPS_BY_NAME
        if keys is not None
        else _OPS_BY_NAME
    )
    return by_name.get(key)


def _value_key_problem(field: Field, key: Any) -> tuple[str, str] | None:
    """A key of a date-time value (`ago`, `startOf`, `this`, ...) written among a date-time
    field's operators, as the message and the hint that say where it goes."""
    if field.type not in CALENDAR_TYPES:
        return None
    if key == "ago":
        return (
            '"ago" makes a value, not a condition: it follows an operator',
            'write e.g. {"gte": {"ago": "P30D"}} for "in the last 30 days"',
        )
    if key in ("startOf", "this", "last", "next"):
        return (
            f'"{key}" belongs inside a calendar value, not in the field\'s operators',
            'write e.g. {"gte": {"startOf": "month"}} or {"within": {"this": "month"}}',
        )
    return None


def _expected_json_object(field: Field, found: str) -> str:
    return f'expected {{"path": [...], <operator>: <value>}} for JSON field "{field.name}", {found}'


def _json_example(field: Field) -> str:
    return f'write e.g. {{"{field.name}": {{"path": ["plan"], "equals": "pro"}}}}'


def _json_path_hint(field: Field, value: Mapping[Any, Any]) -> str:
    """How to write a JSON field's object that lacks a path, after its first key: an operator
    (put the path beside it) or a key of the document with its value (an `equals` on it)."""
    example = next(iter(value.items()), None)
    if example is not None and example[0] in _JSON_OPS_BY_NAME:
        return f'put the key\'s path beside it: {{"path": ["plan"], "{example[0]}": ...}}'
    if example is not None and isinstance(example[0], str) and not _is_map(example[1]):
        key, literal = example
        literal_json = json.dumps(literal, ensure_ascii=False)
        return f'write {{"{field.name}": {{"path": ["{shown(key)}"], "equals": {literal_json}}}}}'
    return _json_example(field)


class _Reader:
    """One walk over decoded JSON, collecting issues instead of stopping at the first."""

    def __init__(self, schema: Schema, limits: Limits) -> None:
        self.schema = schema
        self.limits = limits
        self.issues = _Collector()
        self.conditions = Conditions(JSON_SYNTAX, limits.max_array, schema)
        self.nodes = 0
        self.too_big = False

    def at(self, path: Path) -> Report:
        """A report of the condition builder's problems, placed relative to `path`."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            place = path
            for key in where or ():
                place = (place, key)
            self.issues.add(place, message, suggestion)

        return report

    def read(self, data: Any) -> Node:
        if not _is_map(data):
            self.issues.add(
                None,
                f'expected a where object such as {{"email": ...}}, found {describe_value(data)}',
                None,
            )
            return TRUE
        return self.where(data, None, 0)

    def count(self, path: Path) -> bool:
        """Count one node; False once the filter is over the node limit (reported once)."""
        self.nodes += 1
        if self.nodes <= self.limits.max_nodes:
            return True
        if not self.too_big:
            self.too_big = True
            self.issues.add(
                path,
                f"the filter has more than {self.limits.max_nodes} conditions",
                "split it into several audiences or use `in` lists",
            )
        return False

    def deeper(self, path: Path, depth: int) -> bool:
        if depth <= self.limits.max_depth:
            return True
        self.issues.add(
            path,
            f"groups are nested deeper than {self.limits.max_depth} levels",
            "flatten the nesting: AND/OR take arrays of any length",
        )
        return False

    def repeated(self, obj: Mapping[Any, Any], path: Path, what: str, suggestion: str) -> None:
        """Report the keys a decoded object had more than once (`what`: how to name one)."""
        for key in obj.duplicates if isinstance(obj, DuplicateKeys) else ():
            self.issues.add((path, key), what.format(key=key), suggestion)

    def where(self, obj: Mapping[Any, Any], path: Path, depth: int) -> Node:
        self.repeated(
            obj,
            path,
            'the key "{key}" appears more than once in one object',
            "merge the two into one, or use AND: [...]",
        )
        items: list[Node] = []
        for key, value in obj.items():
            if self.too_big:
                break
            if not isinstance(key, str):
                self.issues.add(path, f"keys must be strings, found {describe_value(key)}", None)
                continue
            node = self.where_key(key, value, (path, key), depth)
            if node is not None:
                items.append(node)
        return items[0] if len(items) == 1 else all_of(tuple(items))

    def where_key(self, key: str, value: Any, path: Path, depth: int) -> Node | None:
        """One key of a where object: a field, a relation, or a group; None when it makes no
        condition (an unknown name, or a field past the node limit)."""
        field = self.schema.get(key)
        if field is not None:  # no field is named AND, OR or NOT
            return self.field(field, value, path, depth) if self.count(path) else None
        if (relation := self.schema.relation(key)) is not None:
            return read_relation(self, relation, value, path, depth + 1)
        if key in _GROUPS:
            return self.group(value, path, depth + 1, _GROUPS[key])
        if key == "NOT":
            return self.negation(value, path, depth + 1)
        known = (*self.schema.names, *self.schema.relation_names, *LOGICAL_KEYS)
        message, hint = unknown_field(key, self.schema, known)
        self.issues.add(path, message, hint)
        return None

    def related(self, relation: Relation, value: Any, path: Path, depth: int) -> Node:
        """A where object over `relation`'s rows, read against its schema."""
        if not _is_map(value):
            self.issues.add(
                path,
                f'expected a where object over the fields of "{relation.name}", found '
                f"{describe_value(value)}",
                f"{relation.name} has " + ", ".join(relation.schema.names),
            )
            return TRUE
        outer = self.schema
        # Field names and field references inside read the related row (semantics-relations.md).
        self.schema = self.conditions.schema_fields = relation.schema
        try:
            return self.where(value, path, depth)
        finally:
            self.schema = self.conditions.schema_fields = outer

    def where_items(self, value: Any, path: Path, depth: int) -> list[Node] | None:
        """The where objects of a group: an array of them or a single one."""
        if not self.deeper(path, depth) or not self.count(path):
            return None
        if _is_map(value):
            return [self.where(value, path, depth)]
        if _is_seq(value):
            return self.where_array(value, path, depth)
        self.issues.add(
            path,
            "expected an array of where objects or one where object, found "
            f"{describe_value(value)}",
            None,
        )
        return None

    def where_array(self, value: Sequence[Any], path: Path, depth: int) -> list[Node]:
        """The where objects of a group's array, up to the node limit."""
        items = []
        for index, item in enumerate(value):
            item_path = (path, index)
            if _is_map(item):
                items.append(self.where(item, item_path, depth))
            else:
                message = f"expected a where object, found {describe_value(item)}"
                self.issues.add(item_path, message, None)
            if self.too_big:
                break
        return items

    def group(
        self, value: Any, path: Path, depth: int, combine: Callable[[tuple[Node, ...]], Node]
    ) -> Node:
        items = self.where_items(value, path, depth)
        if items is None:
            return TRUE
        return items[0] if len(items) == 1 else combine(tuple(items))

    def negation(self, value: Any, path: Path, depth: int) -> Node:
        items = self.where_items(value, path, depth)
        if not items:  # `NOT: []` negates nothing: TRUE, like an empty AND.
            return TRUE
        return Not(items[0] if len(items) == 1 else Or(tuple(items)))

    def field(self, field: Field, value: Any, path: Path, depth: int) -> Node:
        """A field's value: a literal, null, or an object of operators; for a JSON field,
        `{"path": [keys], <operators>}` (see `data_paths`)."""
        keys: tuple[str, ...] | None = None
        if field.type.entry.document:
            keys = self.json_field_keys(field, value, path)
            if keys is None:
                return TRUE
        elif value is None:
            return IsNull(field.name)
        elif not _is_map(value):
            return self.comparison(field, keys, SHORTHAND_OP, value, path, False)
        nodes = self.operators(field, keys, value, path, depth, False, False)
        return nodes[0] if len(nodes) == 1 else all_of(tuple(nodes))

    def json_field_keys(self, field: Field, value: Any, path: Path) -> tuple[str, ...] | None:
        """The `path` of a JSON field's object, which must hold one and an operator beside it;
        None after a problem."""
        if not _is_map(value):
            found = f"found {describe_value(value)}"
            self.issues.add(path, _expected_json_object(field, found), _json_example(field))
            return None
        if "path" not in value:
            self.json_without_path(field, value, path)
            return None
        keys = self.conditions.data_keys(value.get("path"), self.at((path, "path")))
        if keys is not None and all(key in ("path", "mode") for key in value):
            self.json_without_operator(field, keys, path)
            return None
        return keys

    def json_without_path(self, field: Field, value: Mapping[Any, Any], path: Path) -> None:
        """`{"data": {"plan": "pro"}}`: a key of the document written as if it were a field."""
        found = f'found an object of the keys {_keys(value)} and no "path"'
        self.issues.add(
            (path, "path"), _expected_json_object(field, found), _json_path_hint(field, value)
        )

    def json_without_operator(self, field: Field, keys: tuple[str, ...], path: Path) -> None:
        """A path and no condition on it: refused, as Prisma refuses it, rather than read as
        TRUE (which would select every contact, a null document included)."""
        names = ", ".join(sorted(_JSON_OPS_BY_NAME))
        shown_path = json.dumps(list(keys), ensure_ascii=False)
        self.issues.add(
            path,
            f'expected an operator beside "path" for JSON field "{field.name}", found none',
            f'add a condition, e.g. {{"path": {shown_path}, "equals": "pro"}}; the operators '
            f"are {names}",
        )

    def operators(
        self,
        field: Field,
        keys: tuple[str, ...] | None,
        obj: Mapping[Any, Any],
        path: Path,
        depth: int,
        inherited: bool,
        inside_not: bool,
    ) -> list[Node]:
        """The conditions of an object of operators, in the order written."""
        self.repeated(obj, path, _REPEATED_OPERATOR, _REPEATED_OPERATOR_HINT)
        insensitive = self.object_mode(field, obj, path, inherited, inside_not)
        tested = _Tested(field, keys, depth, insensitive, inside_not)
        nodes = (self.operator(tested, key, value, (path, key)) for key, value in obj.items())
        return [node for node in nodes if node is not None]

    def object_mode(
        self, field: Field, obj: Mapping[Any, Any], path: Path, inherited: bool, inside_not: bool
    ) -> bool:
        """The case folding of an object of operators: its own `mode`, else the one it
        inherits."""
        if "mode" not in obj:
            return inherited
        return self.conditions.mode(field, obj["mode"], inside_not, self.at((path, "mode")))

    def operator(self, tested: _Tested, key: Any, value: Any, path: Path) -> Node | None:
        """One key of an object of operators; None when it makes no condition (`mode`, a
        JSON field's `path`) or after a problem."""
        if key == "mode":
            return None
        if key == "path" and tested.keys is not None:
            if tested.inside_not:
                self.issues.add(path, "path is not allowed inside not", "put path beside not")
            return None
        if key == "not":
            return self.not_operator(tested, value, path)
        if key == BLANK or key in JSON_STRING_ALIASES:
            return self.string_test(tested, key, value, path) if self.count(path) else None
        return self.named_operator(tested, key, value, path)

    def not_operator(self, tested: _Tested, value: Any, path: Path) -> Node | None:
        """A field's `not`, one level deeper."""
        depth = tested.depth + 1
        if not self.deeper(path, depth) or not self.count(path):
            return None
        return self.negated(replace(tested, depth=depth), value, path)

    def string_test(self, tested: _Tested, key: str, value: Any, path: Path) -> Node:
        """`blank`, or a JSON string alias (`string_contains`, ...)."""
        field, keys, report = tested.field, tested.keys, self.at(path)
        if key == BLANK:
            return self.conditions.blank(field, keys, value, report)
        return self.conditions.json_alias(field, keys, key, value, tested.insensitive, report)

    def named_operator(self, tested: _Tested, key: Any, value: Any, path: Path) -> Node | None:
        """A comparison operator (`gte`, `hasSome`, `array_contains`, ...) that `key` names;
        None after a problem."""
        field, keys = tested.field, tested.keys
        op = _operator_named(field, keys, key)
        if op is None:
            self.unknown_operator(field, key, path)
            return None
        if (
            keys is None
            and isinstance(op, Op)
            and not self.conditions.accepts(field, op, self.at(path))
        ):
            return None
        if not self.count(path):
            return None
        return self.comparison(field, keys, op, value, path, tested.insensitive)

    def negated(self, tested: _Tested, value: Any, path: Path) -> Node:
        """A field's `not` (at `tested`'s depth): null, a literal, or an object of operators,
        each negated."""
        field, keys, insensitive = tested.field, tested.keys, tested.insensitive
        if value is None:
            return Not(IsNull(field.name, keys or ()))
        if _is_map(value) and REF not in value:
            negated = self.operators(field, keys, value, path, tested.depth, insensitive, True)
            return all_of(tuple(Not(node) for node in negated))
        # A literal, or `not: {"_ref": ...}`: a field reference.
        node = self.comparison(field, keys, SHORTHAND_OP, value, path, insensitive)
        return TRUE if node is TRUE else Not(node)

    def comparison(
        self,
        field: Field,
        keys: tuple[str, ...] | None,
        op: Op | ListOp,
        value: Any,
        path: Path,
        insensitive: bool,
    ) -> Node:
        report = self.at(path)
        if keys is not None and isinstance(op, ListOp):
            return self.conditions.data_array(field, keys, op, value, insensitive, report)
        if field.type.element is not None:
            listed = ListOp(op.value)
            return self.conditions.list_condition(field, listed, value, insensitive, report)
        assert isinstance(op, Op)
        if keys is None:
            return self.conditions.comparison(field, op, value, insensitive, report)
        return self.conditions.data_comparison(field, keys, op, value, insensitive, report)

    def unknown_operator(self, field: Field, key: Any, path: Path) -> None:
        if isinstance(key, str) and self.conditions.misplaced_list_operator(
            field, key, self.at(path)
        ):
            return
        misplaced = _value_key_problem(field, key)
        if misplaced is not None:
            self.issues.add(path, *misplaced)
            return
        kind = "JSON" if field.type.entry.document else field.type.value
        self.issues.add(
            path,
            f'unknown operator "{shown(str(key))}" for {kind} field "{field.name}"; '
            "expected one of " + ", ".join(field.operator_names),
            operator_alias(str(key), field.operator_names)
            or did_you_mean(str(key), field.operator_names),
        )


def _keys(value: Mapping[Any, Any]) -> str:
    keys = [json.dumps(str(key), ensure_ascii=False) for key in list(value)[:5]]
    return ", ".join(keys) + (", ..." if len(value) > 5 else "")


_ALIASES = {
    "gt": ("greaterthan", "greater", "above", "morethan", "after"),
    "gte": ("greaterthanorequal", "greaterthanorequalto", "greaterorequal", "ge", "atleast"),
    "lt": ("lessthan", "less", "below", "fewerthan", "before"),
    "lte": ("lessthanorequal", "lessthanorequalto", "lessorequal", "le", "atmost"),
    "equals": ("eq", "equal", "is", "eql"),
    "not": ("ne", "neq", "notequal", "notequals", "isnot", "different"),
    "in": ("oneof", "anyof", "includedin"),
    "notIn": ("nin", "noneof", "notoneof"),
    "contains": ("contain", "includes", "include", "like", "substring"),
    "startsWith": ("beginswith", "prefix", "startswith", "begins"),
    "endsWith": ("endswith", "suffix", "ends"),
}
_ALIAS_OF = {alias: name for name, aliases in _ALIASES.items() for alias in aliases}


def operator_alias(key: str, names: tuple[str, ...]) -> str | None:
    """`greater_than`, `$gte`, `not_equal`: another library's spelling of one of ours."""
    folded = "".join(c for c in key.lower() if c.isalnum())
    name = _ALIAS_OF.get(folded) or next((n for n in names if n.lower() == folded), None)
    if name is None or name not in names:
        return None
    return f'did you mean "{name}"?'
