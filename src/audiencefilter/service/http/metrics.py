"""Request durations for the metrics, by route template, method and status code.

Every label is from a bounded set, whatever a client sends: the route a template, the method
one of HTTP's or `other` (`Metrics.request`), the status a code the service answered.

Pure ASGI and outermost, like the request log, so every answer counts: 404s of unknown paths,
413s of the body limit, preflights, 500s. The route label is the matched route's template
(`/v4/contacts/{id}`), which the router leaves in the request's scope; a request no route
matched is `unmatched`, since its path could hold anything a client typed (an e-mail address,
a key pasted by mistake).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping

from fastapi import APIRouter
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from ..ground.metrics import UNMATCHED, Metrics


def templates_of(mounted: Iterable[tuple[str, APIRouter]]) -> dict[int, str]:
    """The whole template of each route of routers included under a prefix, by the route's
    identity: the router leaves the route object in the scope, whose own path lacks the
    prefix it was included under (`/contacts/{id}` of `/v4/contacts/{id}`)."""
    return {id(route): prefix + str(getattr(route, "path", "")) for prefix, router in mounted
            for route in router.routes}  # fmt: skip


def route_label(scope: Scope, templates: Mapping[int, str]) -> str:
    """The template of the route that answered, never the path it was called with."""
    route = scope.get("route")
    if route is None:
        return UNMATCHED
    template = templates.get(id(route)) or getattr(route, "path", None)
    return template if isinstance(template, str) and template else UNMATCHED


class MetricsMiddleware:
    def __init__(self, app: ASGIApp, metrics: Metrics, templates: Mapping[int, str]) -> None:
        self.app = app
        self.metrics = metrics
        self.templates = templates

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        status = 500  # an exception that escapes every handler is answered 500 further out

        async def send_counted(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = int(message["status"])
            await send(message)

        try:
            await self.app(scope, receive, send_counted)
        finally:
            seconds = time.perf_counter() - started
            self.metrics.request(
                route_label(scope, self.templates), scope["method"], status, seconds
            )
