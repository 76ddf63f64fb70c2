"""What every reader of a JSON-shaped format shares: decoding, limits, paths and the issues.

A format's rule arrives as JSON text or as decoded data. Text goes through the where clause's
strict decoder (`where/decode.py`: size, depth, NaN, repeated keys); decoded data is walked
with the same bounds (`Limits`: depth, conditions, array length), so no rule can recurse
without end. Problems are collected with a path in the format's own terms
(`and[1]["<="][0]`, `$or[1].points.$gte`) and raised together as one `FilterError`.

Readers that walk a structure of their own (react-querybuilder's rule groups, sqlglot's syntax
tree) keep their place as text and their problems in a `Budget`; writers meeting a node with no
faithful form in their format `refuse` it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..errors import FilterError, Issue, describe_value, join_path
from ..language.conditions import Conditions, Report, Syntax, Where
from ..language.fields import Schema
from ..language.limits import DEFAULT_LIMITS, Limits
from ..language.nodes import Node
from ..where.decode import DuplicateKeys, load_json

Path = tuple[str | int, ...]
"""Where a value is in a rule: keys and array indexes from the top."""


def render(path: Path) -> str:
    """`("and", 1, "<=", 0)` -> `and[1]["<="][0]`."""
    text = ""
    for part in path:
        text = f"{text}[{part}]" if isinstance(part, int) else join_path(text, part)
    return text


def decode(source: object, limits: Limits) -> Any:
    """The rule as data: JSON text decoded strictly, anything else as given."""
    if isinstance(source, str | bytes):
        return load_json(source, limits)
    return source


def is_map(value: object) -> bool:
    return isinstance(value, Mapping)


def is_list(value: object) -> bool:
    return isinstance(value, list | tuple)


class Reading:
    """One read of a rule: the issues found so far and the bounds of the walk."""

    def __init__(self, schema: Schema, limits: Limits, syntax: Syntax) -> None:
        self.schema = schema
        self.limits = limits
        self.conditions = Conditions(syntax, limits.max_array, schema)
        self.issues: list[Issue] = []
        self.nodes = 0

    def add(self, path: Path, message: str, suggestion: str | None = None) -> None:
        self.issues.append(Issue(path=render(path), message=message, suggestion=suggestion))

    def report(self, path: Path) -> Report:
        """The condition builder's problems, placed relative to `path`."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            self.add((*path, *(where or ())), message, suggestion)

        return report

    def enter(self, path: Path, depth: int) -> bool:
        """Count one more condition at `depth`; False (reported) past the limits."""
        self.nodes += 1
        if depth > self.limits.max_depth:
            self.add(
                path,
                f"rules are nested deeper than {self.limits.max_depth} levels",
                "flatten the nesting: and/or take arrays of any length",
            )
            return False
        if self.nodes == self.limits.max_nodes + 1:
            self.add(
                path,
                f"the rule has more than {self.limits.max_nodes} conditions",
                "split it into several audiences, or use in lists",
            )
        return self.nodes <= self.limits.max_nodes

    def repeated_keys(self, value: Mapping[Any, Any], path: Path) -> None:
        """Report the keys a decoded object had twice: the second would silently win."""
        for key in value.duplicates if isinstance(value, DuplicateKeys) else ():
            self.add(
                (*path, key),
                f'the key "{key}" appears more than once in one object',
                "keep one of them",
            )

    def expected(self, path: Path, what: str, found: Any, suggestion: str | None = None) -> None:
        self.add(path, f"expected {what}, found {describe_value(found)}", suggestion)

    def finish(self, root: Node, source: object) -> Node:
        """The tree read, or every problem found as one `FilterError`."""
        if self.issues:
            text = source if isinstance(source, str) else None
            raise FilterError(self.issues, source=text)
        return root


Place = str
"""Where a problem is: a path such as `rules[1].rules[0].value`, or `""` for the top."""


def child(path: Place, key: str | int) -> Place:
    """`rules[1]` + `value` -> `rules[1].value`; an index is written in brackets."""
    return f"{path}[{key}]" if isinstance(key, int) else join_path(path, key)


class Budget:
    """The problems of one read and what is left of its limits (depth, conditions).

    Readers keep going after a problem, so one `FilterError` lists everything wrong at once;
    once the read is over its node limit, it stops adding conditions (reported once).
    """

    def __init__(self, limits: Limits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.issues: list[Issue] = []
        self.nodes = 0
        self.too_big = False
        self.locate: Callable[[Place], tuple[int, int] | None] = lambda _path: None

    def add(self, path: Place, message: str, suggestion: str | None = None) -> None:
        """Record one problem at `path` (with its line and column where the reader knows it)."""
        spot = self.locate(path)
        line, column = spot if spot is not None else (None, None)
        self.issues.append(
            Issue(path=path, message=message, suggestion=suggestion, line=line, column=column)
        )

    def report(self, path: Place) -> Report:
        """A report for the condition builder, whose places are relative to `path`."""

        def report(where: Where, message: str, suggestion: str | None) -> None:
            place = path
            for key in where or ():
                place = child(place, key)
            self.add(place, message, suggestion)

        return report

    def count(self, path: Place) -> bool:
        """Count one condition or group; False once the read is over the node limit."""
        self.nodes += 1
        if self.nodes <= self.limits.max_nodes:
            return True
        if not self.too_big:
            self.too_big = True
            self.add(
                path,
                f"the filter has more than {self.limits.max_nodes} conditions",
                "split it into several audiences, or use in lists",
            )
        return False

    def deeper(self, path: Place, depth: int) -> bool:
        """Whether a group at `depth` is within the nesting limit (reported if not)."""
        if depth <= self.limits.max_depth:
            return True
        self.add(
            path,
            f"groups are nested deeper than {self.limits.max_depth} levels",
            "flatten the nesting: a group takes any number of rules",
        )
        return False

    def raise_if_any(self, source: str | None = None) -> None:
        """Raise the one `FilterError` of the read, if it found any problem."""
        if self.issues:
            raise FilterError(self.issues, source=source)


def refuse(path: Place, message: str, suggestion: str | None = None) -> FilterError:
    """The error of a writer meeting a node with no faithful form in its format."""
    return FilterError([Issue(path=path, message=message, suggestion=suggestion)])
