"""What a caller sees when a filter is wrong, or a record is.

Every problem becomes an `Issue` naming where (a path such as `OR[1].points.gte`, and for text
input a line and column), what was expected and found, and the likely fix. The parser collects
every issue it can and raises one `FilterError`, so a user fixes a filter in one round trip
instead of one error at a time.
"""

from __future__ import annotations

import difflib
import json
import re
from collections.abc import Iterable, Sequence

from pydantic import BaseModel, ConfigDict


class Issue(BaseModel):
    """One problem in a filter.

    Attributes:
        path: Where the problem is, e.g. `OR[1].points.gte`; empty for the top level.
        message: What was expected and what was found.
        suggestion: The likely fix, when one is likely (`did you mean "contains"?`).
        line: 1-based line in the input text, when the input was text.
        column: 1-based column in the input text, when the input was text.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    message: str
    suggestion: str | None = None
    line: int | None = None
    column: int | None = None

    def describe(self) -> str:
        """One line: `OR[1].points.gte: expected a number, found "ten" (did you mean ...?)`."""
        where = self.path or "top level"
        if self.line is not None:
            where += f" (line {self.line}, column {self.column})"
        text = f"{where}: {self.message}"
        if self.suggestion:
            text += f"; {self.suggestion}"
        return text


class RecordError(TypeError):
    """A record the filter cannot be evaluated on: not a mapping, or a value of the wrong type
    for a field the filter reads. The message names the field, the value found and the type
    expected. A `TypeError`: the caller passed data of the wrong type, the filter is fine."""


class FrameError(RecordError):
    """A frame's column has a type the columnar back-end cannot read as its field's type.

    A `RecordError` (so a `TypeError`): like a record with a value of the wrong type, the data
    does not fit the schema, while the filter is fine. The message names the column and the
    field, the type found, the types accepted, and a conversion that fixes it.
    """


class FilterError(ValueError):
    """A filter that cannot be used, with every problem found in it.

    Attributes:
        errors: The issues, in the order they appear in the input.
        source: The text the filter was read from, when it was text, for rendering excerpts.
    """

    def __init__(self, errors: Iterable[Issue], source: str | None = None) -> None:
        self.errors: tuple[Issue, ...] = tuple(errors)
        self.source = source
        count = len(self.errors)
        head = "invalid filter" if count == 1 else f"invalid filter ({count} problems)"
        super().__init__(head + ":\n" + "\n".join("  " + e.describe() for e in self.errors))

    def to_dicts(self) -> list[dict[str, object]]:
        """The issues as plain dicts, e.g. for an HTTP error body."""
        return [e.model_dump(exclude_none=True) for e in self.errors]


def did_you_mean(word: str, candidates: Sequence[str]) -> str | None:
    """A did-you-mean hint for a misspelt name, or None when nothing is close enough.

    Case differences are the commonest slip (`EMAIL`, `startswith`), so they are tried first.
    """
    lowered = {c.lower(): c for c in candidates}
    exact = lowered.get(word.lower())
    if exact is not None and exact != word:
        return f'did you mean "{exact}"?'
    close = difflib.get_close_matches(word, candidates, n=1, cutoff=0.6)
    if not close:
        close = difflib.get_close_matches(word.lower(), list(lowered), n=1, cutoff=0.6)
        close = [lowered[c] for c in close]
    return f'did you mean "{close[0]}"?' if close else None


class IssueCollector:
    """Gathers issues during one parse; the parser raises once at the end."""

    __slots__ = ("issues",)

    def __init__(self) -> None:
        self.issues: list[Issue] = []

    def add(self, path: str, message: str, suggestion: str | None = None) -> None:
        self.issues.append(Issue(path=path, message=message, suggestion=suggestion))

    def __bool__(self) -> bool:
        return bool(self.issues)


_IDENTIFIER = re.compile(r"[A-Za-z_$][A-Za-z0-9_$]*\Z")


def join_path(path: str, key: str) -> str:
    """`OR[1]` + `points` -> `OR[1].points`; a key that is not an identifier is quoted:
    `OR[1]["a.b"]`, so a path always reads back unambiguously."""
    if _IDENTIFIER.match(key):
        return f"{path}.{key}" if path else key
    return f"{path}[{json.dumps(key)}]"


def describe_value(value: object) -> str:
    """How a found value is named in messages: its JSON type and a short rendering."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int | float):
        return f"the number {value!r}"
    if isinstance(value, str):
        shown = value if len(value) <= 40 else value[:37] + "..."
        return f'the string "{shown}"'
    if isinstance(value, list | tuple):
        return f"an array of {len(value)} values"
    if isinstance(value, dict):
        return "an object"
    return f"a value of Python type {type(value).__name__}"
