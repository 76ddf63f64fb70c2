"""Where-clause JSON (text or an already decoded mapping) to the AST, validating as it goes.

A hand-written walker rather than a pydantic model of the where clause: it tracks the path of
every value (`OR[1].points.gte`) and keeps going after a problem, so one `FilterError` lists
everything wrong at once. The walk is bounded by `Limits` (depth, nodes, array length, text
size) so no input can recurse without end or make the parser do unbounded work.

It is on the hot path of a service that parses a filter per request, so the common case is
kept cheap (tens of microseconds for a typical filter): exact-type checks before the generic
`Mapping` ones, one dict lookup per operator key for the operators a field accepts, counters
and group-of-one rules inlined, and a JSON decoder built once. Every unusual input falls
through to the general code, which produces the messages.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from datetime import datetime
from typing import Any

from ..errors import (
    FilterError,
    Issue,
    IssueCollector,
    describe_value,
    did_you_mean,
    join_path,
)
from ..filter import Filter
from ..language.data_paths import value_type
from ..language.fields import (
    CONTACT,
    LIST_OPS,
    OPERATORS,
    ORDERING_OPS,
    PATTERN_OPS,
    Field,
    FieldType,
    Op,
    Schema,
)
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import (
    TRUE,
    Comparison,
    IsNull,
    Node,
    Not,
    Or,
    all_of,
    any_of,
)
from ..language.relative import Ago, DurationError
from ..language.values import Scalar, as_utc, is_number, parse_datetime
from . import fast
from .decode import DuplicateKeys, as_str, load_json

LOGICAL_KEYS = ("AND", "OR", "NOT")
_OPS_BY_NAME = {op.value: op for op in Op}
_EXPECTED = {
    FieldType.STRING: "a string",
    FieldType.NUMBER: "a number",
    FieldType.BOOLEAN: "true or false",
    FieldType.DATETIME: "an ISO 8601 date-time string",
}
_MODES = ("insensitive", "default")


def parse(
    where: str | bytes | Mapping[str, Any],
    schema: Schema = CONTACT,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> Filter:
    """Read a where clause into a validated `Filter`.

    Args:
        where: JSON text, or a mapping already decoded (values may also be `datetime`s).
        schema: The fields the filter may use; the contact schema of the spec by default.
        limits: Bounds on depth, size and array length.

    Returns:
        The filter, with its AST in `.root`.

    Raises:
        FilterError: listing every problem found, each with its path and, for text input,
            its line and column.
    """
    if fast.ENABLED and type(where) is str:
        root = fast.read_fast(where, schema, limits)
        if root is not None:
            return Filter(root, schema)
    return read_plain(where, schema, limits)


def read_plain(where: str | bytes | Mapping[str, Any], schema: Schema, limits: Limits) -> Filter:
    """`parse` without the accelerator: the definition of the where clause."""
    source: str | None = None
    if isinstance(where, (str, bytes)):  # noqa: UP038 - a tuple is faster than a union here
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
    return Filter(root, schema)


Path = tuple[Any, str | int] | None
"""A location as a linked list `((parent, "OR"), 1)`: cheap to extend, rendered only on error."""


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


# Types that are never a Mapping: deciding so without the slower `Mapping` ABC check.
_NOT_MAPS = frozenset({str, int, float, bool, list, tuple, type(None)})


def _is_map(value: object) -> bool:
    kind = type(value)
    return kind is dict or (kind not in _NOT_MAPS and isinstance(value, Mapping))


def _is_seq(value: object) -> bool:
    return type(value) is list or isinstance(value, list | tuple)


class _Reader:
    """One walk over decoded JSON, collecting issues instead of stopping at the first."""

    def __init__(self, schema: Schema, limits: Limits) -> None:
        self.schema = schema
        self.limits = limits
        self.issues = _Collector()
        self.nodes = 0
        self.too_big = False
        self.max_nodes = limits.max_nodes
        self.max_depth = limits.max_depth
        self.fields, self.accepted = _tables(schema)

    @property
    def key_candidates(self) -> tuple[str, ...]:
        return (*self.schema.names, *LOGICAL_KEYS)

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
        return self.nodes <= self.max_nodes or self.over_limit(path)

    def over_limit(self, path: Path) -> bool:
        """Report the node limit once; always False, for `count <= max or over_limit()`."""
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

    def where(self, obj: Mapping[Any, Any], path: Path, depth: int) -> Node:
        if type(obj) is not dict and isinstance(obj, DuplicateKeys):
            for key in obj.duplicates:
                self.issues.add(
                    (path, key),
                    f'the key "{key}" appears more than once in one object',
                    "merge the two into one, or use AND: [...]",
                )
        items: list[Node] = []
        fields = self.fields
        for key, value in obj.items():
            if self.too_big:
                break
            if type(key) is not str and not isinstance(key, str):
                self.issues.add(path, f"keys must be strings, found {describe_value(key)}", None)
                continue
            key_path = (path, key)
            field = fields.get(key)
            if field is not None:  # the common case first; no field is named AND, OR or NOT
                if self.count(key_path):
                    items.append(self.field(field, value, key_path, depth))
            elif key == "AND":
                items.append(self.group(value, key_path, depth + 1, all_of))
            elif key == "OR":
                items.append(self.group(value, key_path, depth + 1, any_of))
            elif key == "NOT":
                items.append(self.negation(value, key_path, depth + 1))
            elif key in self.schema:  # a JSON field, kept out of `fields` (see `_tables`)
                if self.count(key_path):
                    items.append(self.json_field(self.schema[key], value, key_path, depth))
            else:
                self.unknown_field(key, key_path)
        return items[0] if len(items) == 1 else all_of(tuple(items))

    def json_field(self, field: Field, value: Any, path: Path, depth: int) -> Node:
        """`{"path": [keys], <operators>}` on a JSON field: see `data_paths`."""
        if not _is_map(value):
            self.issues.add(
                path,
                f'expected {{"path": [...], <operator>: <value>}} for JSON field "{field.name}", '
                f"found {describe_value(value)}",
                f'write e.g. {{"{field.name}": {{"path": ["plan"], "equals": "pro"}}}}',
            )
            return TRUE
        keys = self.json_path(value.get("path"), (path, "path"))
        if keys is None:
            return TRUE
        nodes = self.json_operators(field, keys, value, path, depth, False, False)
        return nodes[0] if len(nodes) == 1 else all_of(tuple(nodes))

    def json_path(self, value: Any, path: Path) -> tuple[str, ...] | None:
        if not _is_seq(value) or not value or not all(isinstance(k, str) for k in value):
            self.issues.add(
                path,
                f"expected a non-empty array of keys (strings), found {describe_value(value)}",
                'write e.g. "path": ["plan"] or "path": ["address", "city"]',
            )
            return None
        for key in value:
            if "\x00" in key or not _is_valid_unicode(key):
                self.issues.add(path, "a key holds NUL or a lone surrogate", None)
                return None
        return tuple(value)

    def json_operators(
        self,
        field: Field,
        keys: tuple[str, ...],
        obj: Mapping[Any, Any],
        path: Path,
        depth: int,
        inherited: bool,
        inside_not: bool,
    ) -> list[Node]:
        if isinstance(obj, DuplicateKeys):
            for key in obj.duplicates:
                self.issues.add((path, key), f'the operator "{key}" appears more than once', None)
        insensitive = inherited
        if "mode" in obj:
            string = Field(field.name, FieldType.STRING)
            insensitive = self.mode(string, obj["mode"], (path, "mode"), inside_not)
        nodes: list[Node] = []
        for key, value in obj.items():
            key_path = (path, key)
            if key == "mode":
                continue
            if key == "path":
                if inside_not:
                    self.issues.add(
                        key_path, "path is not allowed inside not", "put path beside not"
                    )
                continue
            if key == "not":
                if self.deeper(key_path, depth + 1) and self.count(key_path):
                    if value is None:
                        nodes.append(Not(IsNull(field.name, keys)))
                    elif _is_map(value):
                        negated = self.json_operators(
                            field, keys, value, key_path, depth + 1, insensitive, True
                        )
                        nodes.append(all_of(tuple(Not(node) for node in negated)))
                    else:
                        node = self.json_comparison(
                            field, keys, Op.EQUALS, value, key_path, insensitive
                        )
                        nodes.append(Not(node) if node is not TRUE else TRUE)
                continue
            op = _OPS_BY_NAME.get(key) if isinstance(key, str) else None
            if op is None:
                self.issues.add(
                    key_path,
                    f'unknown operator "{_shown(str(key))}" for JSON field "{field.name}"; '
                    "expected one of " + ", ".join(field.operator_names),
                    did_you_mean(str(key), field.operator_names),
                )
            elif self.count(key_path):
                nodes.append(self.json_comparison(field, keys, op, value, key_path, insensitive))
        return nodes

    def json_comparison(
        self, field: Field, keys: tuple[str, ...], op: Op, value: Any, path: Path, insensitive: bool
    ) -> Node:
        if op in LIST_OPS:
            if not _is_seq(value):
                self.issues.add(
                    path,
                    f"{op.value} takes an array of strings, numbers or booleans, "
                    f"found {describe_value(value)}",
                    _wrap_hint(value),
                )
                return TRUE
            if len(value) > self.limits.max_array:
                self.issues.add(
                    path,
                    f"the array has {len(value)} values, over the limit of {self.limits.max_array}",
                    "split the audience",
                )
                return TRUE
            items = [self.json_literal(op, item, (path, i)) for i, item in enumerate(value)]
            literals = tuple(item for item in items if item is not None)
            if len(literals) != len(items):
                return TRUE
            kinds = {value_type(item) for item in literals}
            if len(kinds) > 1:
                self.issues.add(
                    path,
                    f"the values of {op.value} must all have one JSON type, found "
                    + " and ".join(sorted(k.value for k in kinds)),
                    "split it into several conditions joined with OR",
                )
                return TRUE
            string = kinds == {FieldType.STRING}
            return Comparison(field.name, op, literals, string and insensitive, keys)
        if value is None:
            if op is Op.EQUALS:
                return IsNull(field.name, keys)
            self.issues.add(
                path,
                f"{op.value} does not take null",
                'test for null with "equals": null, or "not": null',
            )
            return TRUE
        literal = self.json_literal(op, value, path)
        if literal is None:
            return TRUE
        kind = value_type(literal)
        insensitive = kind is FieldType.STRING and (insensitive or op is Op.CONTAINS)
        return Comparison(field.name, op, literal, insensitive, keys)

    def json_literal(self, op: Op, value: Any, path: Path) -> Scalar | None:
        """A string, number or boolean that `op` can compare with; None after an issue."""
        if value is None:
            self.issues.add(path, f"null is not allowed inside {op.value}", None)
            return None
        literal: Scalar
        if isinstance(value, str):
            if not _is_valid_unicode(value):
                self.issues.add(path, "the string holds a lone surrogate, not valid Unicode", None)
                return None
            literal = value
        elif isinstance(value, bool):
            literal = value
        elif is_number(value):
            literal = int(value) if isinstance(value, int) else float(value)
        else:
            self.issues.add(
                path,
                f"expected a string, a number or a boolean, found {describe_value(value)}",
                "JSON fields compare one value at a time; arrays and objects are not compared",
            )
            return None
        kind = value_type(literal)
        if op not in OPERATORS[kind]:
            self.issues.add(
                path,
                f"{op.value} does not apply to a {kind.value} value ({describe_value(value)})",
                f"with a {kind.value}, use " + ", ".join(sorted(o.value for o in OPERATORS[kind])),
            )
            return None
        return literal

    def unknown_field(self, key: str, path: Path) -> None:
        hint = did_you_mean(key, self.key_candidates)
        if hint is None:
            hint = "filterable fields are " + ", ".join(self.schema.names)
        self.issues.add(path, f'unknown field "{_shown(key)}"', hint)

    def where_items(self, value: Any, path: Path, depth: int) -> list[Node] | None:
        """The where objects of a group: an array of them or a single one."""
        if (depth > self.max_depth and not self.deeper(path, depth)) or not self.count(path):
            return None
        if _is_map(value):
            return [self.where(value, path, depth)]
        if _is_seq(value):
            items = []
            for index, item in enumerate(value):
                item_path = (path, index)
                if type(item) is dict or _is_map(item):
                    items.append(self.where(item, item_path, depth))
                else:
                    self.issues.add(
                        item_path, f"expected a where object, found {describe_value(item)}", None
                    )
                if self.too_big:
                    break
            return items
        self.issues.add(
            path,
            "expected an array of where objects or one where object, found "
            f"{describe_value(value)}",
            None,
        )
        return None

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
        if value is None:
            return IsNull(field.name)
        if _is_map(value):
            nodes = self.operators(field, value, path, depth, False, False)
            return nodes[0] if len(nodes) == 1 else all_of(tuple(nodes))
        return self.comparison(field, Op.EQUALS, value, path, False)

    def operators(
        self,
        field: Field,
        obj: Mapping[Any, Any],
        path: Path,
        depth: int,
        inherited: bool,
        inside_not: bool,
    ) -> list[Node]:
        if type(obj) is not dict and isinstance(obj, DuplicateKeys):
            for key in obj.duplicates:
                self.issues.add(
                    (path, key),
                    f'the operator "{key}" appears more than once',
                    "keep one of them, or combine conditions with AND: [...]",
                )
        insensitive = inherited
        if "mode" in obj:
            insensitive = self.mode(field, obj["mode"], (path, "mode"), inside_not)
        nodes: list[Node] = []
        accepted = self.accepted[field.name]
        for key, value in obj.items():
            known = accepted.get(key)
            if known is not None:
                key_path = (path, key)
                if self.count(key_path):
                    nodes.append(self.comparison(field, known, value, key_path, insensitive))
                continue
            if key == "mode":
                continue
            key_path = (path, key)
            if key == "not":
                if self.deeper(key_path, depth + 1) and self.count(key_path):
                    if value is None:  # `field_not` inlined for `not: null`
                        nodes.append(Not(IsNull(field.name)))
                    else:
                        nodes.append(self.field_not(field, value, key_path, depth + 1, insensitive))
                continue
            op = _OPS_BY_NAME.get(key) if isinstance(key, str) else None
            if op is None and key == "ago" and field.type is FieldType.DATETIME:
                self.issues.add(
                    key_path,
                    '"ago" makes a value, not a condition: it follows an operator',
                    'write e.g. {"gte": {"ago": "P30D"}} for "in the last 30 days"',
                )
            elif op is None:
                hint = did_you_mean(str(key), field.operator_names)
                self.issues.add(
                    key_path,
                    f'unknown operator "{_shown(str(key))}" for {field.type.value} field '
                    f'"{field.name}"; expected one of ' + ", ".join(field.operator_names),
                    hint,
                )
            elif not field.accepts(op):
                self.issues.add(key_path, _misplaced_operator(field, op), _operator_hint(field))
            elif self.count(key_path):
                nodes.append(self.comparison(field, op, value, key_path, insensitive))
        return nodes

    def mode(self, field: Field, value: Any, path: Path, inside_not: bool) -> bool:
        if inside_not:
            self.issues.add(
                path,
                "mode is not allowed inside not",
                "put mode beside not, in the field's object; not inherits it",
            )
        elif field.type is not FieldType.STRING:
            self.issues.add(
                path,
                f'mode applies to string fields; "{field.name}" is a {field.type.value} field',
                "remove mode",
            )
        elif value not in _MODES:
            self.issues.add(
                path,
                f'expected "insensitive" or "default", found {describe_value(value)}',
                did_you_mean(str(value), _MODES),
            )
        return value == "insensitive" and field.type is FieldType.STRING

    def field_not(
        self, field: Field, value: Any, path: Path, depth: int, insensitive: bool
    ) -> Node:
        if value is None:
            return Not(IsNull(field.name))
        if _is_map(value):
            negated = self.operators(field, value, path, depth, insensitive, True)
            return all_of(tuple(Not(node) for node in negated))
        return Not(self.comparison(field, Op.EQUALS, value, path, insensitive))

    def comparison(self, field: Field, op: Op, value: Any, path: Path, insensitive: bool) -> Node:
        insensitive = field.type is FieldType.STRING and (insensitive or op is Op.CONTAINS)
        if op is Op.IN or op is Op.NOT_IN:
            return Comparison(field.name, op, self.array(field, op, value, path), insensitive)
        if value is None:
            if op is Op.EQUALS:
                return IsNull(field.name)
            self.issues.add(
                path,
                f"{op.value} does not take null",
                f'test for null with "{field.name}": null, or "not": null',
            )
            return TRUE
        literal = self.literal(field, value, path)
        return TRUE if literal is None else Comparison(field.name, op, literal, insensitive)

    def array(self, field: Field, op: Op, value: Any, path: Path) -> tuple[Scalar, ...]:
        if not _is_seq(value):
            self.issues.add(
                path,
                f"{op.value} takes an array of "
                f"{_EXPECTED[field.type].removeprefix('a ').removeprefix('an ')}s, "
                f"found {describe_value(value)}",
                _wrap_hint(value),
            )
            return ()
        if len(value) > self.limits.max_array:
            self.issues.add(
                path,
                f"the array has {len(value)} values, over the limit of {self.limits.max_array}",
                "split the audience",
            )
            return ()
        items: list[Scalar] = []
        for index, item in enumerate(value):
            item_path = (path, index)
            if item is None:
                self.issues.add(
                    item_path,
                    f"null is not allowed inside {op.value}",
                    f'to match nulls too, use OR with "{field.name}": null',
                )
                continue
            literal = self.literal(field, item, item_path)
            if isinstance(literal, Ago):
                self.issues.add(
                    item_path,
                    f"a relative date-time is not allowed inside {op.value}: a list holds "
                    "fixed values",
                    "compare with equals, or combine conditions with OR",
                )
            elif literal is not None:
                items.append(literal)
        return tuple(items)

    def relative(self, value: Mapping[Any, Any], path: Path) -> Ago | None:
        """`{"ago": "<ISO 8601 duration>"}`: a date-time relative to the moment of evaluation."""
        text = value.get("ago")
        if type(value) is not dict and isinstance(value, DuplicateKeys):
            self.issues.add((path, "ago"), 'the key "ago" appears more than once', None)
            return None
        if len(value) != 1 or not isinstance(text, str):
            self.issues.add(
                path,
                'expected a date-time, or {"ago": "<ISO 8601 duration>"} for one relative to '
                f"now, found {describe_value(value)}",
                'write e.g. {"ago": "P30D"} for 30 days ago',
            )
            return None
        try:
            return Ago.parse(text)
        except DurationError as exc:
            self.issues.add((path, "ago"), str(exc), exc.suggestion)
            return None

    def literal(self, field: Field, value: Any, path: Path) -> Scalar | Ago | None:
        kind = field.type
        exact = type(value)
        if (
            (exact is str and kind is FieldType.STRING and value.isascii())
            or (exact is int and kind is FieldType.NUMBER)
            or (exact is bool and kind is FieldType.BOOLEAN)
        ):
            plain: Scalar = value  # an exact int, bool or ASCII str of its type is its own literal
            return plain
        if kind is FieldType.STRING and isinstance(value, str):
            if _is_valid_unicode(value):
                return value
            self.issues.add(path, "the string holds a lone surrogate, not valid Unicode", None)
            return None
        if kind is FieldType.NUMBER and is_number(value):
            return int(value) if isinstance(value, int) else float(value)
        if kind is FieldType.BOOLEAN and isinstance(value, bool):
            return value
        if kind is FieldType.DATETIME:
            if _is_map(value):
                return self.relative(value, path)
            try:
                if isinstance(value, str):
                    return parse_datetime(value)
                if isinstance(value, datetime):
                    return as_utc(value)
            except ValueError as exc:
                self.issues.add(
                    path,
                    f"expected an ISO 8601 date-time, found {describe_value(value)}: {exc}",
                    'write e.g. "2025-01-31", "2025-01-31T09:30:00Z" or '
                    '"2025-01-31T09:30:00+02:00"',
                )
                return None
        self.issues.add(
            path,
            f"expected {_EXPECTED[kind]} for {kind.value} field "
            f'"{field.name}", found {describe_value(value)}',
            _type_hint(kind, value),
        )
        return None


_Tables = tuple[Mapping[str, Field], Mapping[str, Mapping[Any, Op]]]
# By identity, holding the schema so its id cannot be reused: hashing a schema costs more than
# building the tables' lookups saves. Schemas are few; past 64 the tables are just rebuilt.
_TABLES: dict[int, tuple[Schema, _Tables]] = {}


def _tables(schema: Schema) -> _Tables:
    """Per schema, once: fields by name, and for each field its accepted operators by name."""
    cached = _TABLES.get(id(schema))
    if cached is not None and cached[0] is schema:
        return cached[1]
    fields = {f.name: f for f in schema.fields if f.type is not FieldType.JSON}
    accepted = {
        f.name: {op.value: op for op in _OPS_BY_NAME.values() if f.accepts(op)}
        for f in schema.fields
    }
    if len(_TABLES) < 64:
        _TABLES[id(schema)] = (schema, (fields, accepted))
    return fields, accepted


def _shown(text: str) -> str:
    """A name as it can be printed: lone surrogates escaped, long names cut."""
    text = text.encode("utf-8", "backslashreplace").decode("utf-8")
    return text if len(text) <= 60 else text[:57] + "..."


def _is_valid_unicode(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def _misplaced_operator(field: Field, op: Op) -> str:
    if op in ORDERING_OPS:
        applies = "number and date-time fields"
    elif op in PATTERN_OPS:
        applies = "string fields"
    else:
        applies = "string, number and date-time fields"
    return f'{op.value} applies to {applies}; "{field.name}" is a {field.type.value} field'


def _operator_hint(field: Field) -> str:
    return f'"{field.name}" takes ' + ", ".join(field.operator_names)


def _type_hint(kind: FieldType, value: Any) -> str | None:
    if kind is FieldType.NUMBER and isinstance(value, str) and is_number(_try_number(value)):
        return f"write the number without quotes: {value.strip()}"
    if kind is FieldType.NUMBER and isinstance(value, float):
        return "NaN and Infinity are not numbers a filter can compare with"
    if kind is FieldType.BOOLEAN and isinstance(value, str) and value.lower() in ("true", "false"):
        return f"write {value.lower()} without quotes"
    if kind is FieldType.STRING and isinstance(value, bool | int | float):
        return f"write it as a string: {json.dumps(json.dumps(value))}"
    return None


def _wrap_hint(value: Any) -> str | None:
    if isinstance(value, str | int | float | bool) and not isinstance(value, float | bool):
        return f"write [{json.dumps(value)}]"
    return None


def _try_number(text: str) -> object:
    try:
        return json.loads(text)
    except ValueError:
        return None
