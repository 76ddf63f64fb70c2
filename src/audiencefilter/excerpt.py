"""A `FilterError` shown to a person: each problem with the line it is on and a caret under it.

    error at line 1, column 1: unknown field "emial"
      emial contains "gmail"
      ^^^^^
      hint: did you mean "email"?

One renderer for both syntaxes: issues from JSON text and from the text syntax both carry a
line and column, and the error its `.source`. The caret line copies tabs and counts wide
(East Asian) characters twice, so it stays under the right character in a terminal; a long
line (minified JSON) is cut to a window around the column.
"""

from __future__ import annotations

import re
import unicodedata

from .errors import FilterError, Issue

_WINDOW = 96
_TOKEN = re.compile(r'"(?:[^"\\\n]|\\.)*"?|`(?:[^`\\\n]|\\.)*`?|[\w.:+-]+|[<>=!&|]+|\S')


def render_error(error: FilterError, source: str | None = None) -> str:
    """Every issue of `error`, with an excerpt and caret where its position is known.

    Args:
        error: The error raised by `parse` or `parse_text`.
        source: The filter text, when the error does not carry it (`error.source`).

    Returns:
        Plain text, one block per issue, separated by blank lines.
    """
    text = source if source is not None else error.source
    lines = text.split("\n") if text is not None else []
    show_path = text is not None and text.lstrip()[:1] in ("{", "[")
    return "\n\n".join(_render_issue(issue, lines, show_path) for issue in error.errors)


def _render_issue(issue: Issue, lines: list[str], show_path: bool) -> str:
    where = []
    if issue.path and (show_path or issue.line is None):
        where.append(issue.path)
    located = issue.line is not None and 0 < issue.line <= len(lines)
    if issue.line is not None:
        where.append(f"line {issue.line}, column {issue.column}")
    head = "error"
    if where:
        head += " at " + ("{} ({})".format(*where) if len(where) == 2 else where[0])
    block = [f"{head}: {issue.message}"]
    if located:
        assert issue.line is not None
        block.extend(excerpt(lines[issue.line - 1].rstrip("\r"), (issue.column or 1) - 1))
    if issue.suggestion:
        block.append(f"  hint: {issue.suggestion}")
    return "\n".join(block)


def excerpt(line: str, index: int) -> list[str]:
    """The source line (cut to a window when long) and a caret line under `index`."""
    index = max(0, min(index, len(line)))
    start = 0
    if len(line) > _WINDOW:
        start = max(0, min(index - _WINDOW // 3, len(line) - _WINDOW))
    shown = line[start : start + _WINDOW]
    prefix = "…" if start > 0 else ""
    suffix = "…" if start + _WINDOW < len(line) else ""
    offset = index - start
    token = _TOKEN.match(shown, offset)
    length = token.end() - offset if token else 1
    pad = _pad(prefix + shown[:offset])
    caret = "^" * max(1, _width(shown[offset : offset + length]))
    return ["  " + prefix + shown + suffix, "  " + pad + caret]


def _pad(text: str) -> str:
    return "".join("\t" if ch == "\t" else " " * _char_width(ch) for ch in text)


def _width(text: str) -> int:
    return sum(_char_width(ch) for ch in text)


def _char_width(char: str) -> int:
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1
