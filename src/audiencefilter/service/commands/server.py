"""Running the service under uvicorn, with the checks that must happen before any worker starts.

The schema is migrated here, once, before workers exist (several processes racing to migrate one
SQLite file would trip over each other); the workers then start with migration off. Several
workers on `memory://` rate-limit storage would each count alone and let through a multiple of
the limit, so that combination is refused.

Logging is configured here, where the process starts serving, and handed to uvicorn as a
dictionary so worker processes configure theirs alike. uvicorn's access log stays off: the
service writes its own request line, which names the key only by its prefix and leaves out the
query string; `access_log=False` (`--no-access-log`) turns those lines off too.
"""

from __future__ import annotations

import os

import uvicorn

from ..app import create_app
from ..db import migrate
from ..db.engine import Database
from ..http.request_log import configure_logging
from ..settings import Settings
from .errors import CommandError

WORKER_HEALTHCHECK_SECONDS = 60
"""How long uvicorn's supervisor waits for a worker's answer before it replaces it."""


def serve(
    settings: Settings, *, host: str, port: int, workers: int = 1, access_log: bool = True
) -> None:
    if workers < 1:
        raise CommandError("--workers must be at least 1")
    if workers > 1 and settings.rate_limit_storage.startswith("memory"):
        raise CommandError(
            "memory:// rate-limit counters are per process, so several workers would each allow "
            "the full limit; set AUDIENCEFILTER_RATE_LIMIT_STORAGE=redis://HOST:PORT or use "
            "--workers 1"
        )
    log_config = configure_logging(settings, access_log=access_log)
    settings = migrated(settings)
    if workers == 1:
        uvicorn.run(
            create_app(settings),
            host=host,
            port=port,
            log_config=log_config,
            access_log=False,
            proxy_headers=False,  # TRUSTED_PROXIES decides; see client_address.py
        )
        return
    # Workers are separate processes that rebuild the app from the environment.
    os.environ["AUDIENCEFILTER_DATABASE_URL"] = settings.database_url
    os.environ["AUDIENCEFILTER_AUTO_MIGRATE"] = "false"
    uvicorn.run(
        "audiencefilter.service.app:create_app_from_env",
        factory=True,
        host=host,
        port=port,
        workers=workers,
        log_config=log_config,
        access_log=False,
        proxy_headers=False,
        # uvicorn kills a worker that does not answer its supervisor's ping within this: a
        # worker importing the app on a busy machine (load 20 on 2 cores) takes longer than
        # the default 5 s, and was killed and started again without end.
        timeout_worker_healthcheck=WORKER_HEALTHCHECK_SECONDS,
    )


def migrated(settings: Settings) -> Settings:
    """The database migrated once, before the app starts, where the settings ask it; the
    settings the app then starts with (no migration of its own: several workers would each
    run it at once)."""
    if settings.should_auto_migrate:
        database = Database.from_settings(settings)
        try:
            migrate.upgrade(database.engine)
        finally:
            database.dispose()
    return settings.model_copy(update={"auto_migrate": False})
