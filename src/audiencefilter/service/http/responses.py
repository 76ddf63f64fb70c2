"""The JSON response class of the service: orjson, UTC timestamps with a `Z`.

Route handlers build plain dicts and return them in this class directly, so FastAPI skips its
response-model validation pass (the models still document the shapes in OpenAPI, and the tests
validate real responses against that document). SQLite hands back naive datetimes; they are UTC
by construction, which `OPT_NAIVE_UTC` states.
"""

from __future__ import annotations

from typing import Any

from starlette.responses import JSONResponse as _StarletteJSONResponse

from ..ground.json import dumps
from ..ground.keys import redact


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
