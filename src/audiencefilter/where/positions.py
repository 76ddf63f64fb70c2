"""Line and column of a path in JSON text, so a semantic error can point at the character.

Only run when a filter read from text has problems: the fast path decodes with the `json`
module, which keeps no positions. This scanner walks text that `json` already accepted, so it
only needs to find tokens, not to validate them. It is iterative, so no nesting can exhaust
the stack.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable

from ..errors import Issue, join_path

_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_SCALAR = re.compile(r"[^\s,\]}]+")
_SPACE = re.compile(r"\s*")
_KEY_MESSAGES = ("unknown", "appears more than once", "not allowed inside", "keys must be")


def positions(text: str) -> dict[str, tuple[int, int]]:
    """Map each path to the offsets of its key (or array slot) and of its value.

    For a repeated key the last occurrence wins, which is the one `parse` reports.
    """
    found: dict[str, tuple[int, int]] = {}
    # Each frame: (path of the container, is_object, next array index)
    stack: list[list[object]] = []
    pending_key: tuple[str, int] | None = None
    pos = _SPACE.match(text, 0).end()  # type: ignore[union-attr]
    path = ""
    key_at = pos
    while pos < len(text):
        char = text[pos]
        if stack and stack[-1][1] and pending_key is None and char == '"':
            match = _STRING.match(text, pos)
            if match is None:
                break
            key = json.loads(match.group())
            pending_key = (join_path(str(stack[-1][0]), key), pos)
            pos = _SPACE.match(text, match.end()).end()  # type: ignore[union-attr]
            pos += 1  # the colon
            pos = _SPACE.match(text, pos).end()  # type: ignore[union-attr]
            continue
        if char in ",":
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            continue
        if char in "]}":
            stack.pop()
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            continue
        # A value starts here: name its path.
        if stack and stack[-1][1]:
            assert pending_key is not None
            path, key_at = pending_key
            pending_key = None
        elif stack:
            frame = stack[-1]
            index = int(frame[2])  # type: ignore[call-overload]
            frame[2] = index + 1
            path, key_at = f"{frame[0]}[{index}]", pos
        else:
            path, key_at = "", pos
        found[path] = (key_at, pos)
        if char in "{[":
            stack.append([path, char == "{", 0])
            pos = _SPACE.match(text, pos + 1).end()  # type: ignore[union-attr]
            continue
        match = _STRING.match(text, pos) if char == '"' else _SCALAR.match(text, pos)
        if match is None:
            break
        pos = _SPACE.match(text, match.end()).end()  # type: ignore[union-attr]
    return found


def line_column(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of a character offset."""
    line = text.count("\n", 0, offset) + 1
    column = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return line, column


def locate_issues(text: str, issues: Iterable[Issue]) -> list[Issue]:
    """The issues with `line` and `column` filled in wherever their path is found in `text`."""
    issues = list(issues)
    try:
        where = positions(text)
    except (ValueError, IndexError, AssertionError):  # never let locating hide the real errors
        return issues
    located = []
    for issue in issues:
        spot = _spot(issue, where)
        if spot is None or issue.line is not None:
            located.append(issue)
            continue
        line, column = line_column(text, spot)
        located.append(issue.model_copy(update={"line": line, "column": column}))
    return located


def _spot(issue: Issue, where: dict[str, tuple[int, int]]) -> int | None:
    path = issue.path
    while True:
        if path in where:
            key_at, value_at = where[path]
            on_key = path == issue.path and any(m in issue.message for m in _KEY_MESSAGES)
            return key_at if on_key or path != issue.path else value_at
        if not path:
            return None
        path = _parent(path)


def _parent(path: str) -> str:
    """`OR[1].points.gte` -> `OR[1].points` -> `OR[1]` -> `OR` -> ``."""
    if path.endswith("]"):
        depth = 0
        for index in range(len(path) - 1, -1, -1):
            if path[index] == "]":
                depth += 1
            elif path[index] == "[" and depth == 1 and not _inside_string(path, index):
                return path[:index]
            elif path[index] == "[":
                depth -= 1
        return ""
    dot = path.rfind(".")
    return path[:dot] if dot >= 0 else ""


def _inside_string(path: str, index: int) -> bool:
    return path.count('"', 0, index) % 2 == 1
