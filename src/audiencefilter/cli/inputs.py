"""Where the command line's filter, schema and record come from, and which syntax a filter is in.

A filter is an argument (`'points > 10'`), a file (`@filter.txt` or `--file filter.json`) or
standard input (`-`, or nothing when input is piped). JSON is recognised by its first
character (`{` or `[`: no text filter starts with either); `--syntax` overrides the guess.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import audiencefilter as af


class UsageError(Exception):
    """A command line that cannot be carried out: the message says what to change."""


def read_text(argument: str | None, file: str | None, what: str = "filter") -> str:
    """The text named by `argument` (literal, `@path` or `-`) or `--file`, else piped stdin."""
    if file is not None and argument is not None:
        raise UsageError(f"give the {what} as an argument or with --file, not both")
    if file is not None:
        return _read_path(file)
    if argument is None:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(f"give a {what}: as an argument, @file, --file PATH, or on stdin")
        return _read_path("-")
    if argument == "-" or argument.startswith("@"):
        return _read_path(argument.removeprefix("@") or "-")
    return argument


def _read_path(path: str) -> str:
    try:
        if path == "-":
            data = sys.stdin.buffer.read()
        else:
            data = Path(path).read_bytes()
    except OSError as exc:
        raise UsageError(f"cannot read {path}: {exc.strerror or exc}") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise UsageError(f"{path} is not UTF-8 text ({exc.reason} at byte {exc.start})") from None


def detect_syntax(text: str, requested: str = "auto") -> str:
    """`json` or `text`: as requested, or guessed from the first character."""
    if requested != "auto":
        return requested
    return "json" if text.lstrip()[:1] in ("{", "[") else "text"


def load_filter(text: str, syntax: str, schema: af.Schema) -> af.Filter:
    """Read `text` in `syntax` (`json`, `text`, or a format's name, for `convert`); raises
    FilterError (with `.source`) when it is invalid."""
    if syntax == "json":
        return af.parse(text, schema)
    if syntax == "text":
        return af.parse_text(text, schema)
    return af.from_format(text, syntax, schema)


def load_schema(path: str | None, *, replace: bool = False) -> af.Schema:
    """The contact schema extended by the fields of a JSON file `{"field": "type", ...}` (a
    contact export has more columns than the contact fields, and keeps its `actions`), or,
    with `replace`, the file's fields alone."""
    if path is None:
        return af.CONTACT
    mapping = _json_object(_read_path(path), f"schema {path}")
    try:
        if not replace:
            return af.CONTACT.with_fields(**mapping)
        return af.Schema.from_mapping(mapping, name=Path(path).stem)
    except (ValueError, TypeError) as exc:
        raise UsageError(f"schema {path}: {exc}") from None


def load_record(argument: str) -> dict[str, Any]:
    """A record given as JSON text or `@path`."""
    return _json_object(read_text(argument, None, "record"), "record")


def _json_object(text: str, what: str) -> dict[str, Any]:
    try:
        value = json.loads(text)
    except json.JSONDecodeError as exc:
        raise UsageError(
            f"{what} is not valid JSON: {exc.msg} at line {exc.lineno}, column {exc.colno}"
        ) from None
    if not isinstance(value, dict):
        raise UsageError(f"{what} must be a JSON object")
    return value
