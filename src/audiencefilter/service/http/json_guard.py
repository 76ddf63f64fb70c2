"""JSON that Python decodes but the service cannot keep, found before any route reads it.

Three things in a syntactically valid JSON body used to become a 500 far from where they were
sent: a lone surrogate escape (`"\\ud800"`: decodes to a `str` no UTF-8 encoder, database or
error page can write), an integer of more digits than Python converts (4,300: `ValueError`),
and nesting deeper than the decoder recurses (`RecursionError`). Each is a 400 naming its
place, for every route at once, JSON Lines bodies included (by line).

Every body is looked at, whatever its `Content-Type` says: FastAPI decodes a body sent with
none as JSON, and the import reads any type but JSON Lines as a JSON array, so a guard that
trusted the header let a deep body through as `text/plain`. A body of JSON Lines
(`LINES_TYPES`, the one list the import reads) is looked at line by line.

Most bodies hold none of them, and telling so is cheap: a byte scan for a surrogate escape, a
long run of digits or many brackets. Only a body that shows one is decoded here (a second
time) to find where it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from ..ground.errors import ValidationIssue

MAX_DIGITS = 4300  # Python's default int_max_str_digits
MAX_DEPTH = 200
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")
_LONG_DIGITS = re.compile(rb"\d{%d}" % MAX_DIGITS)
_NOT_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_INNERMOST = re.compile(rb"[\[{][\]}]")
LINES_TYPES = ("application/x-ndjson", "application/jsonl", "application/jsonlines")
"""The media types of JSON Lines bodies (one document per line); every other body is read as
one JSON document by whichever route decodes it."""


class _Huge:
    """An integer literal kept as text: too many digits to convert."""

    def __init__(self, digits: str) -> None:
        self.digits = digits


def _integer(text: str) -> int | _Huge:
    return _Huge(text) if len(text.lstrip("-")) >= MAX_DIGITS else int(text)


def _suspicious(body: bytes) -> bool:
    return bool(
        _SURROGATE_ESCAPE.search(body)
        or _LONG_DIGITS.search(body)
        or _nesting_over(body, MAX_DEPTH)
    )


def _nesting_over(body: bytes, limit: int) -> bool:
    """Whether brackets nest more than `limit` deep, without a decoder: each pass removes the
    innermost pairs, so a flat body is done in two passes. Brackets inside strings count too,
    which only ever makes a body decoded here that did not need to be."""
    brackets = body.translate(None, _NOT_BRACKETS)
    for _ in range(limit):
        brackets, removed = _INNERMOST.subn(b"", brackets)
        if not brackets or not removed:
            return False
    return True


def media_type(content_type: str) -> str:
    """The media type of a `Content-Type` header, without parameters, lower case."""
    return content_type.split(";")[0].strip().lower()


def problems(body: bytes, content_type: str) -> list[ValidationIssue]:
    """What in a body (JSON Lines by line, any other as JSON) the service cannot keep, each
    with its place; nothing for a body that is not JSON at all (its route says so)."""
    if not _suspicious(body):
        return []
    if media_type(content_type) not in LINES_TYPES:
        return _document_problems(body, "/body")
    found: list[ValidationIssue] = []
    for number, line in enumerate(body.split(b"\n"), 1):
        if _suspicious(line):
            found += _document_problems(line, f"/body/line {number}")
    return found


def _document_problems(text: bytes, where: str) -> list[ValidationIssue]:
    try:
        value = json.loads(text, parse_int=_integer)
    except RecursionError:
        return [_too_deep(where)]
    except ValueError:
        return []  # not JSON at all: the route says so in its own words
    return list(_walk(value, where, 0))


def _walk(value: Any, where: str, depth: int) -> Iterator[ValidationIssue]:
    if depth > MAX_DEPTH:
        yield _too_deep(where)
        return
    if isinstance(value, str):
        if _has_lone_surrogate(value):
            yield _surrogate(where)
    elif isinstance(value, _Huge):
        yield _huge(where, value)
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from _walk(item, f"{where}/{index}", depth + 1)
    elif isinstance(value, dict):
        yield from _walk_object(value, where, depth)


def _walk_object(value: dict[str, Any], where: str, depth: int) -> Iterator[ValidationIssue]:
    for key, item in value.items():
        place = f"{where}/{_escaped(key)}"
        if _has_lone_surrogate(key):
            yield _surrogate(place, "key")
        else:
            yield from _walk(item, place, depth + 1)


def _escaped(key: str) -> str:
    safe = key.encode("utf-8", "backslashreplace").decode("utf-8")
    return safe.replace("~", "~0").replace("/", "~1")


def _has_lone_surrogate(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return True
    return False


def _surrogate(where: str, what: str = "string") -> ValidationIssue:
    return ValidationIssue(
        pointer=where,
        detail=f"expected valid Unicode text, found a {what} holding a lone surrogate "
        "(an unpaired \\ud800-\\udfff escape)",
        expected="valid Unicode text",
        found="a lone surrogate",
        suggestion="send the character itself, or its escaped surrogate pair",
    )


def _huge(where: str, value: _Huge) -> ValidationIssue:
    digits = len(value.digits.lstrip("-"))
    return ValidationIssue(
        pointer=where,
        detail=f"expected a number of fewer than {MAX_DIGITS} digits, found one of {digits}",
        expected=f"a number of fewer than {MAX_DIGITS} digits",
        found=f"a number of {digits} digits",
    )


def _too_deep(where: str) -> ValidationIssue:
    return ValidationIssue(
        pointer=where,
        detail=f"expected JSON nested at most {MAX_DEPTH} levels deep, found deeper nesting",
        expected=f"at most {MAX_DEPTH} levels of nesting",
        found="deeper nesting",
    )
