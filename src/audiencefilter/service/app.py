"""The application factory: `create_app(settings)` wires settings, database, limiter and routes.

Nothing happens at import time. The engine and the rate limiter are built in the factory (neither
connects yet); the lifespan migrates the embedded SQLite database and disposes of the engine at
shutdown. The routes live under `/v4`; health probes and the OpenAPI document stay outside it.
"""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

from anyio import to_thread
from fastapi import Depends, FastAPI
from starlette.concurrency import run_in_threadpool

from .. import system_clock
from .api import hot_routes, openapi
from .api.deps import single_valued_query
from .api.heavy import HeavyTurns
from .api.routes import ROUTERS, builder, docs, health, metrics
from .db import migrate
from .db.engine import Database
from .domain.service_state import StateCollector
from .domain.use_cases.membership_clock import Sweeper
from .domain.webhooks.worker import WebhookWorker
from .ground.clock import Clock, ClockMiddleware
from .ground.metrics import Metrics
from .ground.processes import CpuLane
from .http import errors
from .http.client_address import TrustedProxies
from .http.metrics import MetricsMiddleware, templates_of
from .http.middleware import (
    BodyLimitMiddleware,
    PublicCORSMiddleware,
    RateLimitHeadersMiddleware,
    WriteShareMiddleware,
)
from .http.origins import OriginDirectory
from .http.ratelimit import RateLimiter
from .http.request_log import RequestLogMiddleware
from .http.responses import JSONResponse
from .http.security_headers import SecurityHeadersMiddleware
from .settings import Settings

logger = logging.getLogger("audiencefilter.service")

API_PREFIX = "/v4"
TITLE = "Contact, Audience and List Management Service"
DESCRIPTION = (
    "Lists (projects), their contacts, audiences and actions. Every `/v4` operation needs an "
    "`apiKey` header; public keys may only create contacts and read their list's sign-up "
    "form. Errors are "
    '`{"error": <status>, "message": "...", "status": <status>, "detail": "..."}`, with '
    "`errors` listing the request's problems. To build audiences by pointing and clicking, "
    "with a live preview, open [the audience builder](/builder); for a list's sign-up form, "
    "[the example form](/signup)."
)


def create_app(settings: Settings | None = None, *, clock: Clock | None = None) -> FastAPI:
    """Build the service for the given settings (read from the environment when omitted).

    `clock`, when given, is what "now" means to this application (see `ground/clock.py`).
    """
    settings = settings or Settings()
    database = Database.from_settings(settings)
    limiter = RateLimiter(settings)
    trusted_proxies = TrustedProxies(settings.trusted_proxies)
    origins = OriginDirectory(database, settings.cors_origins)
    sweeper = Sweeper(
        database,
        clock or system_clock,
        settings.membership_sweep_seconds,
        threaded=clock is None,
        build_chunk=settings.audience_build_chunk,
    )
    app_metrics = Metrics()  # this application's own registry (`ground/metrics.py`)
    app_metrics.register(StateCollector(database, settings))
    webhook_worker = WebhookWorker(database, settings, clock, app_metrics)
    lane = CpuLane(settings.analysis_processes)
    heavy = HeavyTurns(settings.heavy_requests_per_account, settings.heavy_queue_per_account, lane)

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> AsyncIterator[None]:
        if settings.request_threads is not None:
            to_thread.current_default_thread_limiter().total_tokens = settings.request_threads
        if settings.should_auto_migrate:
            await run_in_threadpool(migrate.upgrade, database.engine)
        sweeper.start()
        if settings.webhook_worker:
            webhook_worker.start()
        try:
            yield
        finally:
            webhook_worker.stop()
            sweeper.stop()
            lane.close()
            database.dispose()

    app = FastAPI(
        title=TITLE,
        version="1.0.0",
        description=DESCRIPTION,
        license_info={"name": "MIT", "identifier": "MIT"},
        default_response_class=JSONResponse,
        lifespan=lifespan,
        docs_url=None,  # /docs and /redoc come from routes/docs.py, with local assets
        redoc_url=None,
        openapi_url="/openapi.json",
    )
    app.state.settings = settings
    app.state.db = database
    app.state.limiter = limiter
    app.state.trusted_proxies = trusted_proxies
    app.state.origins = origins
    app.state.sweeper = sweeper
    app.state.webhook_worker = webhook_worker
    app.state.metrics = app_metrics
    app.state.heavy = heavy
    mounted = [(API_PREFIX, router) for router in ROUTERS]
    mounted += [("", health.router), ("", metrics.router)]
    for prefix, router in mounted:
        app.include_router(router, prefix=prefix, dependencies=[Depends(single_valued_query)])
    if settings.hot_routes:
        hot_routes.install(app, API_PREFIX)
    docs.install(app)
    builder.install(app)
    errors.install(app, mounted)
    openapi.install(app)
    # Added last is outermost: CORS answers preflights before anything else runs.
    if clock is not None:
        app.add_middleware(ClockMiddleware, clock=clock)
    app.add_middleware(
        BodyLimitMiddleware,
        max_bytes=settings.max_body_bytes,
        max_csv_bytes=settings.max_csv_import_bytes,
    )
    app.add_middleware(RateLimitHeadersMiddleware)
    app.add_middleware(WriteShareMiddleware)
    app.add_middleware(PublicCORSMiddleware, directory=origins)
    # Around everything that answers, preflights and 413s included: nosniff on every response.
    app.add_middleware(SecurityHeadersMiddleware)
    # Outermost of all: the request line covers every answer, preflights and 413s included.
    app.add_middleware(RequestLogMiddleware)
    # Around the request log too: its duration covers every answer, the logged ones included.
    app.add_middleware(MetricsMiddleware, metrics=app_metrics, templates=templates_of(mounted))
    return app


def create_app_from_env() -> FastAPI:
    """Factory for `uvicorn --factory` and multi-worker serving: settings from the environment."""
    return create_app(Settings())
