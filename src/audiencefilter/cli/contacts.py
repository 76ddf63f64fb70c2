"""Contacts read from JSON Lines, a JSON array or CSV, one at a time, in constant memory.

Each reader yields `Row`s: the record, or the reason it could not be read, with where it is
(`line 7`, `element 12`, `row 3 (line 5)`), so a bad row is reported and counted and never
silently dropped. A JSON array is decoded element by element from a bounded buffer, never
with `json.load` of the whole file. CSV cells are converted by the schema's types (a relation's
cell, `actions`, holds its rows as JSON text, as `data` holds its document): an empty
cell is null, booleans are true/false/1/0, numbers stay exact (an integer stays an int), a JSON
field's cell (`data`) holds a JSON document.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import IO, Any

import audiencefilter as af

FORMATS = ("jsonl", "json", "csv")
_CHUNK = 1 << 16
_MAX_ELEMENT = 64 << 20
_WHITESPACE = re.compile(r"[ \t\r\n]*")

_fast_loads: Callable[[bytes | str], Any] = json.loads
try:  # a faster decoder when the service extra is installed; json decides what it rejects
    from orjson import loads as _fast_loads
except ImportError:  # pragma: no cover - depends on the environment
    pass
_LONG_DIGITS = re.compile(rb"\d{19}")
"""19 digits in a row: maybe an integer beyond 64 bits (`-9223372036854775809`), which orjson
reads as a rounded float without a word, so such a line is the standard library's, which keeps
every integer exact. (The run may be inside a string or a fraction: only slower then.)"""


@dataclass(frozen=True, slots=True)
class Row:
    """One contact as read: `record`, or `error` explaining why there is none.

    `where` is built from `unit` and `number` only when asked for: most rows never need it.
    """

    unit: str
    number: int
    record: dict[str, Any] | None
    error: str | None = None

    @property
    def where(self) -> str:
        """`line 7`, `element 12`, `row 3 (line 5)`."""
        return self.unit.format(self.number)


class InputError(ValueError):
    """The contacts file cannot be read further (not a JSON array, a broken element...)."""


def format_of(path: str, explicit: str | None) -> str:
    """The format named by `--format`, or the file's extension (`.jsonl`/`.ndjson`, `.json`,
    `.csv`); JSON Lines when there is no telling."""
    if explicit:
        return explicit
    lowered = path.lower()
    if lowered.endswith(".csv"):
        return "csv"
    if lowered.endswith(".json"):
        return "json"
    return "jsonl"


def read_rows(stream: IO[bytes], fmt: str, schema: af.Schema) -> Iterator[Row]:
    """The rows of a binary stream in format `fmt` (one of `FORMATS`)."""
    if fmt == "jsonl":
        return _json_lines(stream)
    return _text_rows(stream, fmt, schema)


def _text_rows(stream: IO[bytes], fmt: str, schema: af.Schema) -> Iterator[Row]:
    text = io.TextIOWrapper(stream, encoding="utf-8-sig", newline="")
    try:
        yield from _json_array(text) if fmt == "json" else _csv_rows(text, schema)
    except UnicodeDecodeError as exc:
        raise InputError(f"the file is not UTF-8 text ({exc.reason})") from None
    finally:
        text.detach()  # the caller owns the binary stream (it may be stdin)


def _json_lines(stream: IO[bytes]) -> Iterator[Row]:
    fast = _fast_loads
    read_one = False
    for number, line in enumerate(stream, 1):
        try:
            if _LONG_DIGITS.search(line):
                raise ValueError("maybe an integer beyond 64 bits")
            value = fast(line)
        except ValueError:
            if line.isspace():
                continue
            try:  # what the fast decoder refuses or may round (NaN, long integers)
                value = json.loads(line.rstrip(b"\r\n"))
            except ValueError as exc:
                if not read_one:
                    _refuse_other_format(line)
                yield Row("line {}", number, None, f"invalid JSON ({_reason(exc)})")
                continue
        read_one = True
        if type(value) is dict:
            yield Row("line {}", number, value)
        else:
            yield _not_an_object("line {}", number, value)


def _refuse_other_format(first_line: bytes) -> None:
    """A first line that is not JSON and does not start an object or array: the file is in
    another format (CSV, usually), which would otherwise read as "0 of N, N bad rows"."""
    start = first_line.lstrip()[:1]
    if start in (b"{", b"["):
        return
    raise InputError(
        "this is not JSON Lines (the first line is not JSON): use --format csv for a CSV "
        "file with a header row, --format json for a JSON array"
    )


def _reason(exc: ValueError) -> str:
    if isinstance(exc, json.JSONDecodeError):
        return f"{exc.msg} at column {exc.colno}"
    return str(exc).splitlines()[0] if str(exc) else type(exc).__name__


def _not_an_object(unit: str, number: int, value: Any) -> Row:
    return Row(unit, number, None, f"expected a JSON object, found {type(value).__name__}")


class _ArrayReader:
    """A JSON array decoded one element at a time from a sliding buffer."""

    def __init__(self, stream: IO[str]) -> None:
        self.stream = stream
        self.buffer = ""
        self.pos = 0
        self.eof = False
        self.decoder = json.JSONDecoder()

    def fill(self) -> bool:
        """Read more text, dropping what was consumed; False at the end of the stream."""
        if self.eof:
            return False
        chunk = self.stream.read(max(_CHUNK, len(self.buffer) - self.pos))
        self.buffer = self.buffer[self.pos :] + chunk
        self.pos = 0
        self.eof = not chunk
        return bool(chunk)

    def next_char(self) -> str:
        """The next character that is not whitespace ("" at the end), left unconsumed."""
        while True:
            self.pos = _WHITESPACE.match(self.buffer, self.pos).end()  # type: ignore[union-attr]
            if self.pos < len(self.buffer) or not self.fill():
                return self.buffer[self.pos : self.pos + 1]

    def element(self) -> Any:
        """Decode the element at the cursor; more text is read while it is incomplete."""
        self.next_char()
        last_error: tuple[str, int] | None = None
        while True:
            try:
                value, end = self.decoder.raw_decode(self.buffer, self.pos)
            except json.JSONDecodeError as exc:
                error = (exc.msg, exc.pos - self.pos)
                # An error that more text does not move is in the element, not the buffer.
                if (
                    error == last_error
                    or len(self.buffer) - self.pos > _MAX_ELEMENT
                    or not self.fill()
                ):
                    raise InputError(f"invalid JSON ({exc.msg})") from None
                last_error = error
                continue
            # A number may continue past the buffer's end: decode again with more text.
            if end == len(self.buffer) and self.fill():
                continue
            self.pos = end
            return value


def _json_array(stream: IO[str]) -> Iterator[Row]:
    reader = _ArrayReader(stream)
    first = reader.next_char()
    if first != "[":
        hint = "; for one object per line, use --format jsonl" if first == "{" else ""
        raise InputError(f"expected a JSON array of contacts, starting with [{hint}")
    reader.pos += 1
    if reader.next_char() == "]":
        reader.pos += 1
        _expect_end(reader)
        return
    for index in range(1, 1 << 62):
        try:
            value = reader.element()
        except InputError as exc:
            yield Row("element {}", index, None, f"{exc}; the rest of the array cannot be read")
            return
        if isinstance(value, dict):
            yield Row("element {}", index, value)
        else:
            yield _not_an_object("element {}", index, value)
        separator = reader.next_char()
        reader.pos += 1
        if separator == "]":
            _expect_end(reader)
            return
        if separator != ",":
            found = repr(separator) if separator else "the end of the file"
            yield Row(
                "after element {}",
                index,
                None,
                f"expected , or ] in the array, found {found}; the rest cannot be read",
            )
            return


def _expect_end(reader: _ArrayReader) -> None:
    if reader.next_char():
        raise InputError("unexpected text after the end of the array")


def _csv_rows(stream: IO[str], schema: af.Schema) -> Iterator[Row]:
    """The rows of `af.read_csv`, the library's cell rules; a bad row reports its first
    bad cell."""
    try:
        rows = af.read_csv(stream, schema)
    except af.CsvError as exc:
        hint = "" if "JSON" not in str(exc) else _JSON_HINT
        raise InputError(f"{exc}{hint}") from None
    for row in rows:
        unit = f"row {{}} (line {row.line})"
        if not row.errors:
            yield Row(unit, row.number, row.record)
            continue
        first = row.errors[0]
        reason = f'field "{first.column}": {first.reason}' if first.column else first.reason
        yield Row(unit, row.number, None, reason)


_JSON_HINT = ": use --format json for an array, --format jsonl for one object per line"
