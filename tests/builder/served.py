"""The service for the builder's tests: uvicorn serving the app in a thread of the test process.

What a browser test exercises is the page against the HTTP API, which this serves as `serve`
does (the same app, host and uvicorn, the proxy headers ignored); a child process would import
the whole service again for each module, seconds of every module's set-up. The process's own
`serve` command is run by tests/service/test_live.py.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import uvicorn

from audiencefilter.service import Settings, create_app
from audiencefilter.service.commands.server import migrated
from tests.servers import free_port
from tests.waiting import wait_until

PREFIX = "AUDIENCEFILTER_"


@dataclass
class Served:
    url: str


def _settings(database_url: str, environment: dict[str, str]) -> Settings:
    """The settings a `serve` process would read from `environment` alone (this process's own
    `AUDIENCEFILTER_*` variables left out, as `tests/service/live.cli_env` leaves them out of a
    child's), parsed by the settings' own reading of the environment."""
    saved = {key: value for key, value in os.environ.items() if key.startswith(PREFIX)}
    for key in saved:
        del os.environ[key]
    os.environ.update({**environment, f"{PREFIX}DATABASE_URL": database_url})
    try:
        return Settings()
    finally:
        for key in [key for key in os.environ if key.startswith(PREFIX)]:
            del os.environ[key]
        os.environ.update(saved)


@contextmanager
def served(database_url: str, **environment: str) -> Iterator[Served]:
    """The service on 127.0.0.1 for the block, migrated first as `serve` migrates; stopped
    (its open connections given a second) when the block ends."""
    app = create_app(migrated(_settings(database_url, environment)))
    port = free_port()
    config = uvicorn.Config(
        app,
        host="127.0.0.1",
        port=port,
        access_log=False,
        proxy_headers=False,
        log_level="warning",
        timeout_graceful_shutdown=1,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name=f"builder-service-{port}", daemon=True)
    thread.start()
    try:
        wait_until(lambda: server.started, f"the service on port {port}", alive=thread.is_alive)
        yield Served(f"http://127.0.0.1:{port}")
    finally:
        server.should_exit = True
        thread.join(30)
