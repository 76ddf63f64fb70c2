"""Request logs: one structured line per HTTP request, and no whole API key in any log line.

`RequestLogMiddleware` is the outermost middleware, so its line covers everything the service
answers, the 413 of the body limit and the 500 of an unexpected exception included. The line is
written when the response is complete (`time` is then); `latency_ms` runs from the moment the
request reached the middleware.

What a line may say is chosen so that a log file can be kept and shared without care:

- the path without its query string: queries carry filters and e-mail addresses (personal data),
  and a path holds only opaque ids;
- the key's display prefix (`afk_priv_AbCd`, what `keys list` shows) only when the presented
  value has the shape and checksum of one of our keys; any other value is `"invalid"`, so a
  header someone filled with anything (a password pasted by mistake) is never written out;
- the key and account ids once authentication has named them (the dependency stores its
  principal in the request state).

A request id joins a line to the client's report of the call: a well-formed incoming
`X-Request-Id` (a proxy's or the client's) is kept, anything else is replaced by a fresh one,
and the id goes back in the `X-Request-Id` response header. Other lines logged while the request
runs (a traceback, a database error) carry the same id.

Redaction is the second line of defence. The service never logs a key on purpose, but a message
it does not control (a driver exception quoting a bound parameter, a path someone pasted a key
into) could hold one; `KeyRedactionFilter` cuts every whole key down to its display prefix before
any handler sees the record.

Nothing here configures logging when imported (tests capture records as they are);
`configure_logging` does it for the `serve` and `demo` commands, and `logging_config` is the same
configuration as a `dictConfig` dictionary for uvicorn, whose worker processes apply it again.
"""

from __future__ import annotations

import json
import logging
import logging.config
import re
import time
import traceback
import uuid
from contextvars import ContextVar
from datetime import UTC, datetime
from typing import Any

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..ground import keys
from ..ground.keys import FULL_KEY, redact
from ..settings import Settings
from .errors import REASONS, error_response

REQUEST_LOGGER = "audiencefilter.service.requests"
SERVICE_LOGGERS = ("audiencefilter.service", REQUEST_LOGGER)
REQUEST_ID_HEADER = "X-Request-Id"
REQUEST_ID = re.compile(r"[A-Za-z0-9._-]{1,128}")
REQUEST_FIELDS = (
    "time",
    "request_id",
    "method",
    "path",
    "status",
    "latency_ms",
    "key_prefix",
    "key_id",
    "account_id",
    "client",
    "bytes",
)

logger = logging.getLogger(REQUEST_LOGGER)
current_request_id: ContextVar[str | None] = ContextVar("current_request_id", default=None)


def _header(scope: Scope, name: bytes) -> str | None:
    for header, value in scope["headers"]:
        if header == name:
            return bytes(value).decode("latin-1")
    return None


def request_id_for(scope: Scope) -> str:
    """The client's `X-Request-Id` when it is safe to write into a log, else a new id.

    A whole key has the allowed characters too; sent as a request id (a header mix-up), it would
    be written out and echoed, so it is refused like any other unfit value.
    """
    incoming = _header(scope, b"x-request-id")
    if incoming and REQUEST_ID.fullmatch(incoming) and not FULL_KEY.search(incoming):
        return incoming
    return uuid.uuid4().hex


def key_prefix_for(scope: Scope) -> str | None:
    """What the log may say about the presented key; an empty header counts as none sent."""
    presented = _header(scope, b"apikey")
    if not presented:
        return None
    if keys.parse(presented) is None:
        return "invalid"
    return keys.display_prefix(presented)


def client_for(scope: Scope) -> str | None:
    """The client's address as the per-address limits count it, so the two can be compared.

    Behind a proxy listed in `TRUSTED_PROXIES` that is the address it forwarded for; otherwise
    the peer's own.
    """
    client = scope.get("client")
    if not client:
        return None
    proxies = getattr(getattr(scope.get("app"), "state", None), "trusted_proxies", None)
    if proxies is None:
        return str(client[0])
    return str(proxies.client_address(scope))


def _iso(moment: datetime) -> str:
    """Milliseconds and a `Z`: sortable, and the form the API's own timestamps take."""
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


class RequestLogMiddleware:
    """Pure ASGI: one INFO record on `audiencefilter.service.requests` per HTTP request."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        install_redaction()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        request_id = request_id_for(scope)
        # Not reset on the way out: the 500 handler runs outside this middleware, in the same
        # task, and its traceback should carry the id too. Each request runs in its own task.
        current_request_id.set(request_id)
        state: dict[str, Any] = scope.setdefault("state", {})
        state["request_id"] = request_id
        status: int | None = None
        size = 0

        async def send_logged(message: Message) -> None:
            nonlocal status, size
            if message["type"] == "http.response.start":
                status = int(message["status"])
                MutableHeaders(scope=message)[REQUEST_ID_HEADER] = request_id
            elif message["type"] == "http.response.body":
                size += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, send_logged)
        except Exception:
            if status is None:
                # Answered here rather than by the server-error handler further out, so the 500
                # carries the request id; the exception goes on for that handler to log.
                await error_response(500, REASONS[500])(scope, receive, send_logged)
            raise
        finally:
            self._log(scope, state, request_id, status, size, started)

    @staticmethod
    def _log(
        scope: Scope,
        state: dict[str, Any],
        request_id: str,
        status: int | None,
        size: int,
        started: float,
    ) -> None:
        if not logger.isEnabledFor(logging.INFO):
            return
        principal = state.get("principal")
        fields: dict[str, Any] = {
            "time": _iso(datetime.now(UTC)),
            "request_id": request_id,
            "method": scope["method"],
            "path": redact(scope["path"]),
            "status": status,
            "latency_ms": round((time.perf_counter() - started) * 1000, 1),
            "key_prefix": key_prefix_for(scope),
            "key_id": getattr(principal, "key_id", None),
            "account_id": getattr(principal, "account_id", None),
            "client": client_for(scope),
            "bytes": size,
        }
        logger.info(
            "%s %s %s %.1f ms",
            fields["method"],
            fields["path"],
            status,
            fields["latency_ms"],
            extra=fields,
        )


def is_request_record(record: logging.LogRecord) -> bool:
    return all(hasattr(record, name) for name in REQUEST_FIELDS)


def _record_time(record: logging.LogRecord) -> str:
    return _iso(datetime.fromtimestamp(record.created, UTC))


class KeyRedactionFilter(logging.Filter):
    """Rewrites a record in place so no whole key reaches a handler; never drops a record.

    On a logger it protects every handler the record reaches (a test's capture included); on a
    handler it also covers records of other libraries (uvicorn's own traceback of an exception).
    """

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except Exception:  # a malformed call: leave it to the formatter to report
            message = str(record.msg)
        if FULL_KEY.search(message):
            record.msg, record.args = redact(message), None
        if record.exc_info and not record.exc_text:
            record.exc_text = "".join(traceback.format_exception(*record.exc_info)).rstrip("\n")
        for name, value in list(vars(record).items()):
            if isinstance(value, str) and name != "msg" and FULL_KEY.search(value):
                setattr(record, name, redact(value))
        return True


def install_redaction() -> None:
    """Put one `KeyRedactionFilter` on each service logger (calling it again adds none)."""
    for name in SERVICE_LOGGERS:
        service_logger = logging.getLogger(name)
        if not any(isinstance(item, KeyRedactionFilter) for item in service_logger.filters):
            service_logger.addFilter(KeyRedactionFilter())


class JsonFormatter(logging.Formatter):
    """One JSON object per line: the request fields for request records, else the message.

    Non-ASCII characters are escaped, so a line is plain ASCII whatever the terminal or file
    encoding, and a newline in a value can never start a line of its own.
    """

    def format(self, record: logging.LogRecord) -> str:
        if is_request_record(record):
            line = {name: getattr(record, name) for name in REQUEST_FIELDS}
            return json.dumps(line, separators=(",", ":"))
        data: dict[str, Any] = {
            "time": _record_time(record),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        request_id = getattr(record, "request_id", None) or current_request_id.get()
        if request_id is not None:
            data["request_id"] = request_id
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            data["exception"] = record.exc_text
        if record.stack_info:
            data["stack"] = self.formatStack(record.stack_info)
        return json.dumps(data, separators=(",", ":"))


def _text_value(value: Any) -> str:
    if value is None:
        return "-"
    text = str(value)
    if text and text.isprintable() and " " not in text and '"' not in text:
        return text
    return json.dumps(text)


class TextFormatter(logging.Formatter):
    """One readable line per record; values with spaces or control characters are quoted."""

    def format(self, record: logging.LogRecord) -> str:
        if is_request_record(record):
            head = " ".join(
                _text_value(getattr(record, name)) for name in ("time", "method", "path", "status")
            )
            rest = " ".join(
                f"{name}={_text_value(getattr(record, name))}"
                for name in REQUEST_FIELDS
                if name not in ("time", "method", "path", "status")
            )
            return f"{head} {rest}"
        request_id = getattr(record, "request_id", None) or current_request_id.get()
        suffix = f" request_id={request_id}" if request_id else ""
        line = f"{_record_time(record)} {record.levelname} {record.name}: {record.getMessage()}"
        line += suffix
        if record.exc_info and not record.exc_text:
            record.exc_text = self.formatException(record.exc_info)
        if record.exc_text:
            line += "\n" + record.exc_text
        if record.stack_info:
            line += "\n" + self.formatStack(record.stack_info)
        return line


def logging_config(log_format: str = "json", *, access_log: bool = True) -> dict[str, Any]:
    """The service's logging as a `dictConfig` dictionary.

    Everything goes to standard error through one redacting handler: the service's loggers,
    uvicorn's, and warnings of the libraries underneath. uvicorn's access log is silenced (the
    request line replaces it); without `access_log` there are no request lines at all.
    """
    formatter = JsonFormatter if log_format == "json" else TextFormatter
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "filters": {"redact": {"()": f"{__name__}.KeyRedactionFilter"}},
        "formatters": {"service": {"()": f"{formatter.__module__}.{formatter.__qualname__}"}},
        "handlers": {
            "stderr": {
                "class": "logging.StreamHandler",
                "stream": "ext://sys.stderr",
                "formatter": "service",
                "filters": ["redact"],
            }
        },
        "loggers": {
            "audiencefilter": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            REQUEST_LOGGER: {"level": "INFO" if access_log else "WARNING"},
            "uvicorn": {"handlers": ["stderr"], "level": "INFO", "propagate": False},
            "uvicorn.access": {"handlers": [], "level": "WARNING", "propagate": False},
        },
        "root": {"handlers": ["stderr"], "level": "WARNING"},
    }


def configure_logging(settings: Settings, *, access_log: bool = True) -> dict[str, Any]:
    """Configure this process's logging; returns the configuration for uvicorn to reapply."""
    config = logging_config(settings.log_format, access_log=access_log)
    logging.config.dictConfig(config)
    install_redaction()
    return config
