"""JSON as the service writes it: orjson, UTC timestamps with a `Z`; the standard library
for what orjson refuses. A ground module: responses, events and webhook bodies all use it.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NAIVE_UTC | orjson.OPT_UTC_Z


def dumps(content: Any) -> bytes:
    try:
        return orjson.dumps(content, option=_OPTIONS)
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
