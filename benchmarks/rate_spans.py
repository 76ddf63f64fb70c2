"""CPU time by layer for `benchmarks.rate_layers`: each layer a span around the functions that
do its work, in this thread's CPU time, each span's own time without the spans inside it.

The request runs in one thread (FastAPI's thread hops made calls in place, `inline_threads`),
one at a time, so the time between a span's entry and exit is all of its work and its inner
layers', whatever `await`s it went through.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import inspect
import time
from collections import Counter
from collections.abc import Callable, Iterator
from typing import Any

from sqlalchemy import event


class Spans:
    """Own CPU seconds by layer, and by SQL statement (its first words)."""

    def __init__(self) -> None:
        self.own: Counter[str] = Counter()
        self.statements: Counter[str] = Counter()
        self.counts: Counter[str] = Counter()
        self._inner: list[float] = []
        self.statement = ""

    def enter(self) -> float:
        self._inner.append(0.0)
        return time.thread_time()

    def leave(self, layer: str, started: float) -> float:
        spent = time.thread_time() - started
        inner = self._inner.pop()
        self.own[layer] += spent - inner
        if self._inner:
            self._inner[-1] += spent
        return spent

    def clear(self) -> None:
        self.own.clear()
        self.statements.clear()
        self.counts.clear()


def _sync(spans: Spans, layer: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    def spanned(*args: Any, **kwargs: Any) -> Any:
        started = spans.enter()
        try:
            return function(*args, **kwargs)
        finally:
            spent = spans.leave(layer, started)
            if layer == SQL:
                spans.statements[spans.statement] += spent
                spans.counts[spans.statement] += 1

    return spanned


def _async(spans: Spans, layer: str, function: Callable[..., Any]) -> Callable[..., Any]:
    @functools.wraps(function)
    async def spanned(*args: Any, **kwargs: Any) -> Any:
        started = spans.enter()
        try:
            return await function(*args, **kwargs)
        finally:
            spans.leave(layer, started)

    return spanned


SQL = "SQL statements (SQLAlchemy and psycopg, this process)"

LAYERS: tuple[tuple[str, str, str], ...] = (
    ("fastapi.applications:FastAPI", "__call__", "ASGI: the app, Starlette's error middleware"),
    ("audiencefilter.service.http.metrics:MetricsMiddleware", "__call__", "metrics"),
    ("audiencefilter.service.http.request_log:RequestLogMiddleware", "__call__", "request log"),
    (
        "audiencefilter.service.http.security_headers:SecurityHeadersMiddleware",
        "__call__",
        "other middleware (headers, CORS, write share, body limit)",
    ),
    ("audiencefilter.service.http.middleware:PublicCORSMiddleware", "__call__", "*"),
    ("audiencefilter.service.http.middleware:WriteShareMiddleware", "__call__", "*"),
    ("audiencefilter.service.http.middleware:RateLimitHeadersMiddleware", "__call__", "*"),
    ("audiencefilter.service.http.middleware:BodyLimitMiddleware", "__call__", "*"),
    ("starlette.routing:Router", "__call__", "routing, FastAPI's handler"),
    (
        "fastapi.dependencies.utils",
        "solve_dependencies",
        "dependencies (FastAPI), request model",
    ),
    ("audiencefilter.service.api.deps", "_checked_key", "the key"),
    ("audiencefilter.service.api.deps", "_count", "rate limiter"),
    ("audiencefilter.service.domain.use_cases.contacts", "update", "turns of PATCHes"),
    ("audiencefilter.service.domain.use_cases.contacts", "_write_turn", "the write (ORM)"),
    ("audiencefilter.service.domain.list_lock", "contacts_to_write", "lock, owner's check"),
    ("audiencefilter.service.domain.list_write:ListWrite", "finish", "events"),
    ("audiencefilter.service.domain.membership.store", "judge_contacts", "memberships stored"),
    ("audiencefilter.service.domain.membership.store", "store_judged", "*"),
    ("audiencefilter.service.domain.membership.judge:Judge", "decide", "judging the audiences"),
    ("audiencefilter.service.domain.contact_pages:ContactPages", "one", "the answer's contact"),
    ("audiencefilter.service.http.responses:JSONResponse", "render", "the answer's JSON"),
    ("sqlalchemy.engine.base:Connection", "_commit_impl", "commit"),
    ("sqlalchemy.engine.base:Connection", "_execute_context", SQL),
    ("audiencefilter.service.db.driver_path", "_on_cursor", "*"),
)


def _owner(path: str) -> Any:
    module, _, name = path.partition(":")
    owner: Any = importlib.import_module(module)
    return getattr(owner, name) if name else owner


@contextlib.contextmanager
def instrumented(spans: Spans, engine: Any) -> Iterator[Spans]:
    """Every layer of `LAYERS` spanned (`*`: the layer of the line above), put back after."""
    undo: list[tuple[Any, str, Any]] = []
    layer = ""
    for path, attribute, name in LAYERS:
        layer = layer if name == "*" else name
        owner = _owner(path)
        original = getattr(owner, attribute)
        wrap = _async if inspect.iscoroutinefunction(original) else _sync
        setattr(owner, attribute, wrap(spans, layer, original))
        undo.append((owner, attribute, original))
    event.listen(engine, "before_cursor_execute", _naming(spans))
    try:
        yield spans
    finally:
        for owner, attribute, original in reversed(undo):
            setattr(owner, attribute, original)


def _naming(spans: Spans) -> Callable[..., None]:
    def name(_conn: Any, _cursor: Any, statement: str, *_: Any) -> None:
        spans.statement = " ".join(statement.split())[:60]

    return name


@contextlib.contextmanager
def inline_threads() -> Iterator[None]:
    """FastAPI's `run_in_threadpool` (and the hot route's) as a call in place, for the request to
    run in one thread."""

    async def in_place(function: Callable[..., Any], /, *args: Any, **kwargs: Any) -> Any:
        return function(*args, **kwargs)

    modules = [_owner("fastapi.routing"), _owner("fastapi.dependencies.utils")]
    modules.append(_owner("audiencefilter.service.api.hot_routes"))  # the PATCH's one hop
    originals = [module.run_in_threadpool for module in modules]
    for module in modules:
        module.run_in_threadpool = in_place
    try:
        yield
    finally:
        for module, original in zip(modules, originals, strict=True):
            module.run_in_threadpool = original
