"""JSON as the service writes it: orjson, UTC timestamps with a `Z`; the standard library
for what orjson refuses. A ground module: responses, events and webhook bodies all use it.
"""

from __future__ import annotations

import json
import secrets
from datetime import UTC, datetime
from typing import Any

import orjson

from ... import WrittenNumber

_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z


def _written(value: Any) -> orjson.Fragment:
    """A number as it was given (`1000.00`, a `WrittenNumber`), for orjson's `default`."""
    if isinstance(value, WrittenNumber):
        return orjson.Fragment(value.text)
    raise TypeError(f"cannot serialize {type(value).__name__}")


def dumps(content: Any) -> bytes:
    try:
        return orjson.dumps(content, default=_written, option=_OPTIONS)
    except TypeError:
        # orjson stops at 64-bit integers (and 254 levels). A contact's free-form `data`, which
        # may hold any JSON number, is passed as an `orjson.Fragment` of its stored text and
        # never gets here; any other body orjson refuses goes through the standard library.
        return json.dumps(content, default=_fallback, ensure_ascii=False).encode()


def _fallback(value: Any) -> Any:
    if isinstance(value, datetime):
        moment = value if value.tzinfo else value.replace(tzinfo=UTC)
        return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")
    raise TypeError(f"cannot serialize {type(value).__name__}")


def stored(value: Any) -> str:
    """A value as a JSON column stores it: the standard library's text (`json.dumps`), each
    `WrittenNumber` (a decimal an import read, `1000.00`) as it was written rather than as its
    float (`1000.0`), so an export gives it back as given. The engine's `json_serializer`."""
    if not _holds_written(value):  # ids bound as one array, an event's payload: nothing to mark
        return json.dumps(value)
    numbers: list[str] = []
    mark = f"\x00{secrets.token_hex(8)}:"
    marked = _marked(value, mark, numbers)
    text = json.dumps(marked)
    for index, number in enumerate(numbers):
        text = text.replace(json.dumps(f"{mark}{index}"), number, 1)
    return text


def _holds_written(value: Any) -> bool:
    """Whether `value` holds a `WrittenNumber`: rarely (an import's decimals), so the common
    text is `json.dumps` alone, without a mark drawn from the system's random source and a copy
    of the value (a PATCH stores a dozen event payloads). Asked of orjson first, which refuses
    a float's subclass and writes the rest in a fifth of the time of a walk in Python; what it
    refuses for another reason (an integer past 64 bits, a key not a text) is walked."""
    try:
        orjson.dumps(value)
    except TypeError:
        return _walks_to_written(value)
    return False


def _walks_to_written(value: Any) -> bool:
    kind = type(value)
    if kind is str or kind is int or kind is bool or value is None:
        return False
    if isinstance(value, dict | list):
        for item in value.values() if isinstance(value, dict) else value:
            if _walks_to_written(item):
                return True
        return False
    return isinstance(value, WrittenNumber)


def _marked(value: Any, mark: str, numbers: list[str]) -> Any:
    """`value` with each `WrittenNumber` replaced by a text of `mark` and its index in
    `numbers`, which gets its written text; `value` itself when it holds none."""
    if isinstance(value, WrittenNumber):
        numbers.append(value.text)
        return f"{mark}{len(numbers) - 1}"
    if isinstance(value, dict):
        items = {key: _marked(item, mark, numbers) for key, item in value.items()}
        return items if numbers else value
    if isinstance(value, list):
        listed = [_marked(item, mark, numbers) for item in value]
        return listed if numbers else value
    return value
