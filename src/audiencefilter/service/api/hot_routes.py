"""The hottest route answered beside FastAPI's routing and dependency solving, on the same rules.

`PATCH /v4/contacts/{id}` is the request a service embedding smart audiences sends most, and
FastAPI takes it through the route found among 24 routers (10 tries), nine dependencies solved,
a thread hop for the key's check and another for the route: 3.66 ms a PATCH on SQLite against
3.12 ms with this route, 6.13 against 5.30 on PostgreSQL, most of it the hop's wall time
(docs/performance-history-writes.md, "A hot route beside FastAPI"). The hot route stands first
in the application's router and takes only the plain request: no query, a body typed
`application/json` that reads as a JSON object `ContactUpdate` accepts. Every other request (a
bad body, a query, another content type) it hands on unread to the FastAPI route behind it,
which answers as it always has, so every refusal keeps its one source and its error body.

A plain request gets what the FastAPI route would do, by the same functions in the same order
(`deps.private_caller`: the key, its quota, private only; then `contacts.updated`, the route's
own work and answer), in one hop to the thread pool instead of two. Its body being valid, which
of the key and the body is checked first cannot show. The document (`/openapi.json`) still
describes the FastAPI route, which answers exactly as this one.

Switchable: `AUDIENCEFILTER_HOT_ROUTES=false` sends every request through FastAPI;
tests/service/test_hot_routes.py sends the same requests both ways and compares the answers.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from fastapi import FastAPI
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Match, Route
from starlette.types import ASGIApp, Receive, Scope, Send

from ..db.engine import Database
from ..http.json_guard import media_type
from ..http.middleware import replayed
from ..settings import Settings
from . import deps
from .routes.contacts import updated
from .schemas.resources import ContactUpdate

HANDED_ON = "audiencefilter.hot_route.handed_on"
"""Set in a request's scope that a hot route handed on: the router's second pass skips it."""

Plain = Callable[[Request, bytes], Any]
Answer = Callable[[Request, deps.BrowserSignUp | None, Any], Response]


class HotRoute(Route):
    """A route that answers the plain requests of one method and path, and hands the rest on
    to the router, which then finds the FastAPI route behind it."""

    def __init__(self, path: str, method: str, plain: Plain, answer: Answer, router: ASGIApp):
        super().__init__(path, _HotApp(plain, answer, router), methods=[method])
        self.include_in_schema = False
        self.method = method

    def matches(self, scope: Scope) -> tuple[Match, Scope]:
        # Another method is no match at all (not Starlette's partial one, which would answer
        # 405 where the FastAPI routes answer it their way), nor is a request handed on.
        if scope.get("method") != self.method or HANDED_ON in scope:
            return Match.NONE, {}
        return super().matches(scope)


class _HotApp:
    def __init__(self, plain: Plain, answer: Answer, router: ASGIApp) -> None:
        self.plain = plain
        self.answer = answer
        self.router = router

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        request = Request(scope, receive)
        body = await request.body()
        taken = self.plain(request, body)
        if taken is None:
            scope[HANDED_ON] = True
            await self.router(scope, replayed(body, receive), send)
            return
        sign_up = await deps.browser_sign_up(request)
        response = await run_in_threadpool(self.answer, request, sign_up, taken)
        await response(scope, receive, send)


def _json_object(request: Request, body: bytes) -> dict[str, Any] | None:
    """The body as FastAPI reads it (`json.loads`), when it is typed `application/json`, has no
    query beside it, and is a JSON object; None for anything else."""
    if request.scope.get("query_string"):
        return None
    if media_type(request.headers.get("content-type", "")) != "application/json":
        return None
    try:
        value = json.loads(body)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def plain_contact_update(request: Request, body: bytes) -> ContactUpdate | None:
    """A PATCH of a contact FastAPI would hand to its route as is; None for any other."""
    value = _json_object(request, body)
    if value is None:
        return None
    try:
        return ContactUpdate.model_validate(value)
    except ValidationError:
        return None


def contact_update(
    request: Request, sign_up: deps.BrowserSignUp | None, body: ContactUpdate
) -> Response:
    principal = deps.private_caller(request, sign_up)
    state = request.app.state
    database: Database = state.db
    settings: Settings = state.settings
    return updated(principal, database, settings, request.path_params["id"], body)


def install(app: FastAPI, prefix: str) -> None:
    """The hot routes first in `app`'s router, before the FastAPI routes they stand for."""
    hot = [HotRoute(f"{prefix}/contacts/{{id}}", "PATCH", plain_contact_update, contact_update,
                    app.router)]  # fmt: skip
    app.router.routes[0:0] = hot
