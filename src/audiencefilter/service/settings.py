"""Service settings, read from `AUDIENCEFILTER_*` environment variables (pydantic-settings).

Nothing reads settings at import time: `create_app(settings)` receives them, so tests build apps
with their own database file and small rate limits side by side.
"""

from __future__ import annotations

from typing import Literal

from limits import parse as parse_limit
from pydantic import Field, SecretStr, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

Plan = Literal["free", "pro"]
PLANS: tuple[Plan, ...] = ("free", "pro")


class Settings(BaseSettings):
    """Every knob of the service; each is also an environment variable with the prefix."""

    model_config = SettingsConfigDict(env_prefix="AUDIENCEFILTER_", extra="ignore")

    database_url: str = Field(
        default="sqlite:///audiencefilter.db",
        description="SQLAlchemy URL; the default is a SQLite file in the working directory.",
    )
    auto_migrate: bool | None = Field(
        default=None,
        description="Run `alembic upgrade head` at start; default: only for SQLite.",
    )
    rate_limit_storage: str = Field(
        default="memory://",
        description="`limits` storage URI; `redis://host:port` shares counters between processes.",
    )
    rate_limit_free: str = "100/minute"
    rate_limit_pro: str = "1000/minute"
    cors_origins: list[str] = Field(
        default_factory=list,
        description="Browser origins allowed to call POST /v4/contacts with a public key on "
        "every list, besides each list's own `allowedOrigins`.",
    )
    public_contact_limit: str = Field(
        default="10/minute",
        description="Contacts one public key may create per client address, on top of the "
        "account's plan limit: a sign-up form cannot be scripted into a flood from one place.",
    )
    trusted_proxies: list[str] = Field(
        default_factory=list,
        description="Addresses or CIDR networks of reverse proxies whose X-Forwarded-For is "
        "believed; from anyone else the header is ignored.",
    )
    rate_limit_retry_seconds: float = Field(
        default=5.0,
        gt=0,
        description="While shared (Redis) counters are unreachable, requests are counted per "
        "process; the shared storage is tried again after this many seconds.",
    )
    idempotency_ttl_seconds: int = Field(
        default=24 * 3600,
        ge=1,
        description="How long the answer to a POST with an Idempotency-Key is kept for retries.",
    )
    log_format: Literal["json", "text"] = Field(
        default="json",
        description="Request log lines: one JSON object per request, or plain text.",
    )
    metrics_token: SecretStr | None = Field(
        default=None,
        min_length=16,
        description="The secret `GET /metrics` asks for, as `Authorization: Bearer <token>`; "
        "unset, the metrics endpoint is off.",
    )
    max_body_bytes: int = Field(default=1024 * 1024, ge=1)
    max_csv_import_bytes: int = Field(
        default=256 * 1024 * 1024,
        ge=1,
        description="The largest CSV file `POST /v4/contacts/import` takes (a 413 past it): it "
        "streams to a temporary file, not into memory, so it may exceed `max_body_bytes`.",
    )
    pages_base_url: str = Field(
        default="https://pages.example.com",
        description="Base of the public pages that referral and private links point to.",
    )
    max_audiences_per_list: int = Field(
        default=100,
        ge=1,
        description="Every contact returned carries its audiences, computed on each page: "
        "bounding their number bounds that work.",
    )
    hot_routes: bool = Field(
        default=True,
        description="Answer the plain requests of the hottest route (`PATCH /v4/contacts/{id}`) "
        "beside FastAPI's routing and dependencies, on the same rules (`api/hot_routes.py`); "
        "false sends every request through FastAPI.",
    )
    request_threads: int | None = Field(
        default=None,
        ge=1,
        description="Threads running request handlers at once (default: AnyIO's 40). Handlers "
        "are mostly Python: on few cores, fewer threads fight less over the GIL.",
    )
    heavy_requests_per_account: int = Field(
        default=2,
        ge=1,
        le=64,
        description="Heavy requests (imports, compares, estimates, previews, overlaps, "
        "exports) one account runs at once; its others wait their turn, so one account's CPU "
        "does not hold another's requests (`api/heavy.py`). Two, not one: an account's "
        "importers of one list share its turns (docs/service-internals-writes.md), and one "
        "held turn must not queue the other behind it.",
    )
    heavy_queue_per_account: int = Field(
        default=16,
        ge=0,
        le=10_000,
        description="Heavy requests of one account that may wait for a turn; past them, 429 "
        "with Retry-After.",
    )
    analysis_processes: int = Field(
        default=1,
        ge=0,
        le=64,
        description="Worker processes deciding comparisons of filters outside the server's "
        "GIL (`ground/processes.py`), started at the first compare; 0 decides them in the "
        "request's thread.",
    )
    sqlite_busy_timeout_ms: int = Field(default=15000, ge=0)
    sqlite_checkpoint_pages: int = Field(
        default=10_000,
        ge=1,
        description="Pages of WAL after which SQLite copies them back into the database file "
        "(`wal_autocheckpoint`; SQLite's own default is 1,000).",
    )
    db_prepared_statements: bool = Field(
        default=True,
        description="On PostgreSQL, prepare the service's statements planned once (found by "
        "unique keys) on the server (`db/prepared_cache.py`); false behind a pooler in "
        "transaction mode that cannot keep them (PgBouncer before 1.21, or without "
        "`max_prepared_statements`).",
    )
    db_pool_size: int = Field(default=10, ge=1)
    db_max_overflow: int = Field(default=20, ge=0)
    db_pool_timeout_s: float = Field(
        default=10.0,
        gt=0,
        description="How long a request waits for a pooled connection before a 503.",
    )
    db_connect_timeout_s: int = Field(
        default=5, ge=1, description="PostgreSQL connection timeout (seconds)."
    )
    estimate_sample_size: int = Field(
        default=5000,
        ge=1,
        description="How many contacts of a list `POST /v4/audiences/estimate` judges a filter "
        "on: the list's contacts with the smallest ids, a uniform random sample of it.",
    )
    audience_build_background_above: int = Field(
        default=20000,
        ge=0,
        description="A smart audience created, or whose filter changes, on a list of more "
        "contacts than this is built in the background: the request answers at once with the "
        "audience `building` and its progress (unless it asks `?wait=true`). 0: always built "
        "within the request. Builds run on a thread of their own, taking turns by account (or "
        "in the `sweep` command when the threads are off).",
    )
    audience_build_chunk: int = Field(
        default=20000,
        ge=1,
        description="Contacts a background build judges per step: the list's writers wait for "
        "one step's write at a time, never for the whole list.",
    )
    membership_sweep_seconds: float = Field(
        default=1.0,
        ge=0,
        description="The longest the membership scheduler waits before looking for instants "
        "due (it also wakes at the earliest one it knows of): how late an instant written by "
        "another process may be seen. 0 turns the scheduler thread off (run `sweep` from the "
        "command line instead).",
    )
    membership_residual: bool = Field(
        default=True,
        description="A write judging the audiences decided in SQL (those over actions) first "
        "substitutes the written contact's own fields in each filter (the library's residual "
        "filter): TRUE or FALSE decides without a query, and only the rest goes to SQL. Off: "
        "every such audience is judged by its whole filter in SQL. The memberships are the same "
        "either way.",
    )
    driver_statements: bool = Field(
        default=True,
        description="A write's fixed statements (a PATCH's update, its memberships, events and "
        "pairs' note, and every request's key read) run on the driver's cursor, compiled once, "
        "their parameters and rows converted as SQLAlchemy converts them: SQLAlchemy's "
        "execution of each cost more than the driver's. Off: every statement goes through "
        "SQLAlchemy's execution. The answers, memberships and events are the same either way.",
    )
    shared_import_turns: bool = Field(
        default=True,
        description="On PostgreSQL, an import turn that only updates contacts already in the "
        "list takes the list's lock shared with other such turns, locking its own contacts' "
        "rows, and waits for them only while it appends its events: imports of one list run "
        "side by side; and concurrent `PATCH /v4/contacts/{id}` of one account share a turn "
        "(one transaction, their contacts judged together, one commit). Off: every turn takes "
        "the list's lock alone and every PATCH is its own transaction. The results, "
        "memberships and events are the same either way.",
    )

    webhook_worker: bool = Field(
        default=True,
        description="Run the webhook delivery worker as a thread of the service; off, run "
        "`python -m audiencefilter.service worker` (as many as wanted) instead.",
    )
    webhook_poll_seconds: float = Field(
        default=1.0,
        gt=0,
        description="How often an idle webhook worker looks for new events and due retries.",
    )
    webhook_concurrency: int = Field(
        default=8, ge=1, le=256, description="HTTP requests one worker sends at once."
    )
    webhook_timeout_seconds: float = Field(
        default=10.0,
        gt=0,
        le=60,
        description="Time limit of one delivery attempt, all of it: connecting, sending and "
        "reading the answer (a receiver that answers byte by byte is cut off at it).",
    )
    webhook_lease_seconds: float = Field(
        default=60.0,
        gt=0,
        description="How long a worker owns a claimed delivery; a killed worker's claims are "
        "taken over after it.",
    )
    webhook_retry_base_seconds: float = Field(
        default=5.0,
        gt=0,
        description="Retry n waits a random time up to base * 2^(n-1) (full jitter), capped.",
    )
    webhook_retry_cap_seconds: float = Field(
        default=6 * 3600.0, gt=0, description="The longest wait between two attempts."
    )
    webhook_max_attempts: int = Field(
        default=15,
        ge=1,
        description="Attempts of one delivery before it is marked failed (redeliver to retry).",
    )
    webhook_disable_after_seconds: float = Field(
        default=5 * 24 * 3600.0,
        ge=0,
        description="An endpoint is disabled when it has failed for this long without a success "
        "and at least `webhook_disable_min_failures` attempts.",
    )
    webhook_disable_min_failures: int = Field(default=20, ge=1)
    webhook_secret_grace_seconds: float = Field(
        default=24 * 3600.0,
        ge=0,
        description="After a secret rotation, deliveries are also signed with the previous "
        "secret for this long.",
    )
    webhook_max_per_list: int = Field(
        default=10,
        ge=1,
        le=1000,
        description="Endpoints one list may have: each event becomes one delivery per "
        "endpoint, so this bounds how far one import fans out.",
    )
    webhook_account_share: int = Field(
        default=2,
        ge=1,
        description="Sending threads one account may hold while other accounts have deliveries "
        "due (its attempts in flight count): a silent receiver holds at most this many, and an "
        "account alone leaves this many free.",
    )
    webhook_allowed_networks: list[str] = Field(
        default_factory=list,
        description="Networks (CIDR) webhook URLs may reach although they are private, loopback "
        "or link-local, such as `127.0.0.1/32` for a receiver on the same machine.",
    )

    @field_validator("rate_limit_free", "rate_limit_pro", "public_contact_limit")
    @classmethod
    def _check_limit(cls, value: str) -> str:
        parse_limit(value)  # raises ValueError on a malformed rate string
        return value

    @field_validator("pages_base_url")
    @classmethod
    def _strip_slash(cls, value: str) -> str:
        return value.rstrip("/")

    @property
    def is_sqlite(self) -> bool:
        return self.database_url.startswith("sqlite")

    @property
    def should_auto_migrate(self) -> bool:
        return self.is_sqlite if self.auto_migrate is None else self.auto_migrate

    def rate_limit_for(self, plan: Plan) -> str:
        return self.rate_limit_pro if plan == "pro" else self.rate_limit_free
