"""The JSON response class of the service: orjson, UTC timestamps with a `Z`.

Route handlers build plain dicts and return them in this class directly, so FastAPI skips its
response-model validation pass (the models still document the shapes in OpenAPI, and the tests
validate real responses against that document). SQLite hands back naive datetimes; they are UTC
by construction, which `OPT_NAIVE_UTC` states.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import orjson
from starlette.responses import JSONResponse as _StarletteJSONResponse

from ..domain.keys import redact

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


class JSONResponse(_StarletteJSONResponse):
    media_type = "application/json"

    def render(self, content: Any) -> bytes:
        return dumps(content)


class ErrorJSONResponse(JSONResponse):
    """An error body, with any whole API key the request carried cut to its display prefix.

    Error messages quote the request (an unknown path, a field name, a filter's field): a key
    pasted in the wrong place must not be echoed back into a browser, a proxy log or a bug report.
    """

    def render(self, content: Any) -> bytes:
        body = dumps(content)
        return redact(body.decode()).encode() if b"afk_" in body else body


def data(payload: dict[str, Any], status_code: int = 200) -> JSONResponse:
    """A success body: `{"data": payload}`."""
    return JSONResponse({"data": payload}, status_code=status_code)
