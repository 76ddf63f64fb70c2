"""Fixtures for the service tests: one app on a temporary SQLite file, tenants made on demand.

`ApiClient` drives the real ASGI application through httpx's ASGI transport on an event loop in
a background thread (an anyio blocking portal), so tests are plain functions and many threads or
tasks can call the app at once. The app's lifespan runs as under a server: the embedded database
is migrated at start.

Each test makes its own tenant (account and keys), so tests share one app without seeing each
other's data or rate-limit counters.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from functools import partial
from pathlib import Path
from typing import Any, TypeVar

import anyio.from_thread
import httpx
import pytest
from fastapi import FastAPI
from sqlalchemy.engine import make_url

from audiencefilter.service import Settings, create_app
from audiencefilter.service.db.engine import Database, make_engine
from audiencefilter.service.db.migrate import upgrade
from audiencefilter.service.db.models import new_id
from audiencefilter.service.domain.accounts import ensure_account, issue_key
from tests import scratch
from tests.servers import create_pg_database, server_url, start_postgres_for_tests

T = TypeVar("T")
BIG_LIMIT = "100000/minute"


class ApiClient:
    """A synchronous client for an ASGI app, with the app's lifespan running."""

    def __init__(self, app: FastAPI, *, raise_app_exceptions: bool = True) -> None:
        self.app = app
        _start_migrated(app.state.settings)
        self._portal_context = anyio.from_thread.start_blocking_portal()
        self.portal = self._portal_context.__enter__()
        self._lifespan = app.router.lifespan_context(app)
        self.portal.call(self._lifespan.__aenter__)
        transport = httpx.ASGITransport(app=app, raise_app_exceptions=raise_app_exceptions)
        self.http = httpx.AsyncClient(transport=transport, base_url="http://testserver")

    def run(self, function: Callable[[], Awaitable[T]]) -> T:
        """Run a coroutine function on the client's event loop."""
        return self.portal.call(function)

    def request(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        return self.portal.call(partial(self.http.request, method, url, **kwargs))

    def get(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("GET", url, **kwargs)

    def post(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("POST", url, **kwargs)

    def patch(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("PATCH", url, **kwargs)

    def delete(self, url: str, **kwargs: Any) -> httpx.Response:
        return self.request("DELETE", url, **kwargs)

    def close(self) -> None:
        self.portal.call(self.http.aclose)
        self.portal.call(self._lifespan.__aexit__, None, None, None)
        self._portal_context.__exit__(None, None, None)


@dataclass(frozen=True)
class Tenant:
    """An account with one key of each type, and shortcuts to call the app with them."""

    client: ApiClient
    account_id: str
    private_key: str
    public_key: str

    @property
    def headers(self) -> dict[str, str]:
        return {"apiKey": self.private_key}

    @property
    def public_headers(self) -> dict[str, str]:
        return {"apiKey": self.public_key}

    def call(self, method: str, url: str, **kwargs: Any) -> httpx.Response:
        headers = {**self.headers, **kwargs.pop("headers", {})}
        return self.client.request(method, url, headers=headers, **kwargs)

    def ok(self, method: str, url: str, status: int = 200, **kwargs: Any) -> Any:
        """Call and return `data`, asserting the status first."""
        response = self.call(method, url, **kwargs)
        assert response.status_code == status, response.text
        return response.json()["data"]

    def new_list(self, **fields: Any) -> dict[str, Any]:
        body = {"name": "Launch list", **fields}
        return self.ok("POST", "/v4/lists", 201, json=body)["list"]  # type: ignore[no-any-return]

    def new_contact(self, list_id: str, email: str, **fields: Any) -> dict[str, Any]:
        body = {"email": email, "listId": list_id, **fields}
        return self.ok("POST", "/v4/contacts", 201, json=body)["contact"]  # type: ignore[no-any-return]


def make_tenant(
    client: ApiClient, *, plan: str = "free", expires_at: datetime | None = None
) -> Tenant:
    """A fresh account with a private and a public key, written straight to the app's database."""
    database: Database = client.app.state.db
    with database.transaction() as session:
        account = ensure_account(session, new_id("test"), plan)  # type: ignore[arg-type]
        _, private_key = issue_key(session, account, "private", expires_at)
        _, public_key = issue_key(session, account, "public", expires_at)
        account_id = account.id
    return Tenant(client, account_id, private_key, public_key)


def sqlite_settings(path: Path, **overrides: Any) -> Settings:
    return url_settings(f"sqlite:///{path}", **overrides)


def _start_migrated(settings: Settings) -> None:
    """An app on a SQLite file not made yet starts on a copy of a database migrated to head
    (`_migrated_sqlite`); the tests that migrate a database themselves make their engines
    apart from an app, and an app on an existing file keeps it."""
    url = make_url(settings.database_url)
    if url.get_backend_name() != "sqlite" or url.database in (None, "", ":memory:"):
        return
    path = Path(url.database)
    if not path.exists():
        shutil.copyfile(_migrated_sqlite(), path)


_TEMPLATES: dict[str, Any] = {}
"""This process's databases migrated to head, copied for each new app (`_migrated_sqlite`,
`pg_migrated_database`)."""


def _migrated_sqlite() -> Path:
    """A SQLite file migrated to head once a process: a fresh file's migrations took 0.3 to
    0.5 s of every app made, a copy takes under a millisecond, and the app's own migration at
    start then finds the copy at head."""
    if "sqlite" not in _TEMPLATES:
        folder = scratch.folder("af-migrated-")
        template = folder / "migrated.db"
        engine = make_engine(url_settings(f"sqlite:///{template}"))
        try:
            upgrade(engine)
        finally:
            engine.dispose()  # the last connection closed: the WAL is checkpointed and removed
        _TEMPLATES["sqlite"] = template
    path: Path = _TEMPLATES["sqlite"]
    return path


@pytest.fixture(scope="session")
def pg_migrated_database(pg_database: Callable[[], str]) -> Callable[[], str]:
    """A factory: each call a fresh ICU PostgreSQL database already migrated to head, copied
    from one migrated once a session (`CREATE DATABASE ... TEMPLATE`), as `_migrated_sqlite`
    is for SQLite."""
    admin = server_url("postgres", "AUDIENCEFILTER_TEST_PG_URL", start_postgres_for_tests)

    def database() -> str:
        if "postgres" not in _TEMPLATES:
            url = pg_database()
            engine = make_engine(url_settings(url))
            try:
                upgrade(engine)
            finally:
                engine.dispose()
            _TEMPLATES["postgres"] = url.rsplit("/", 1)[1].split("?")[0]
        return _copied(admin, _TEMPLATES["postgres"])

    return database


def _copied(admin: str, template: str) -> str:
    """A new database copied from `template`. PostgreSQL refuses while another session is
    connected to the template: the migration's connections end as their engine is disposed,
    their server processes a moment later, so the copy is tried again (at most 100 times,
    0.05 s apart)."""
    import psycopg

    for _ in range(99):
        try:
            return create_pg_database(admin, f'TEMPLATE "{template}"')
        except psycopg.errors.ObjectInUse:
            time.sleep(0.05)
    return create_pg_database(admin, f'TEMPLATE "{template}"')


def url_settings(database_url: str, **overrides: Any) -> Settings:
    """Settings for any database URL, with limits too high to be reached, and waits for a
    connection too long to end on a machine busy with other work: a test of concurrent writes
    opens dozens of connections at once, and on two cores loaded by other work the service's
    5 s to connect and 10 s for a pooled connection are deadlines a test must not hang on (a
    503 in the test, not the answer it checks). Tests of those waits set their own."""
    values: dict[str, Any] = {
        "database_url": database_url,
        "rate_limit_free": BIG_LIMIT,
        "rate_limit_pro": BIG_LIMIT,
        "db_connect_timeout_s": 60,
        "db_pool_timeout_s": 60.0,
        **overrides,
    }
    return Settings(**values)


def settings_on(request: pytest.FixtureRequest, path: Path, **overrides: Any) -> Settings:
    """Settings on the database `request.param` names ("sqlite": a file at `path`;
    "postgres": a fresh database of the throw-away server), each migrated to head as a copy
    (`sqlite_settings`, `pg_migrated_database`), for fixtures run on both."""
    if request.param == "sqlite":
        return sqlite_settings(path, **overrides)
    pg_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
    return url_settings(pg_database(), auto_migrate=True, **overrides)


BOTH_DATABASES = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
"""The params of a fixture run on both databases (`settings_on`)."""


@contextmanager
def module_app(
    request: pytest.FixtureRequest,
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    *,
    raise_app_exceptions: bool = True,
    **overrides: Any,
) -> Iterator[ApiClient]:
    """One app for a module's tests on the database `request.param` names, closed after them:
    for tests that each work in an account or a list of their own, so that none reads what
    another left, and the module pays for one app rather than one a test."""
    path = tmp_path_factory.mktemp(name) / f"{name}.db"
    client = ApiClient(
        create_app(settings_on(request, path, **overrides)),
        raise_app_exceptions=raise_app_exceptions,
    )
    try:
        yield client
    finally:
        client.close()


@pytest.fixture(scope="session")
def client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ApiClient]:
    """The session's app on a temporary SQLite file, with limits too high to be reached; its
    tests bring time-dependent audiences up to the clock themselves (`run_once`), so no
    scheduler thread races them."""
    path = tmp_path_factory.mktemp("service") / "service.db"
    api = ApiClient(create_app(sqlite_settings(path, membership_sweep_seconds=0)))
    yield api
    api.close()


@pytest.fixture
def tenant(client: ApiClient) -> Tenant:
    return make_tenant(client)


@pytest.fixture
def other_tenant(client: ApiClient) -> Tenant:
    return make_tenant(client)


@pytest.fixture(params=BOTH_DATABASES)
def on_both(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    """A tenant of an application of its own on SQLite, then on PostgreSQL."""
    client = ApiClient(create_app(settings_on(request, tmp_path / "both.db")))
    try:
        yield make_tenant(client)
    finally:
        client.close()


@pytest.fixture
def app_factory(tmp_path: Path) -> Iterator[Callable[..., ApiClient]]:
    """Build extra apps with their own settings (closed at the end of the test)."""
    made: list[ApiClient] = []

    def build(settings: Settings | None = None, **kwargs: Any) -> ApiClient:
        overrides = {key: value for key, value in kwargs.items() if key != "raise_app_exceptions"}
        settings = settings or sqlite_settings(tmp_path / f"app{len(made)}.db", **overrides)
        api = ApiClient(
            create_app(settings), raise_app_exceptions=kwargs.get("raise_app_exceptions", True)
        )
        made.append(api)
        return api

    yield build
    for api in made:
        api.close()


def gather(client: ApiClient, calls: list[Callable[[], Awaitable[T]]]) -> list[T]:
    """Run coroutine functions concurrently on the client's loop."""

    async def run_all() -> list[T]:
        return list(await asyncio.gather(*(call() for call in calls)))

    return client.run(run_all)
