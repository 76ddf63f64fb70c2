"""The service's Prometheus metrics: one registry per application, nothing global.

Each `create_app` makes its own `Metrics` (a `CollectorRegistry` of its own), so two
applications in one process (tests, a demo beside a server) never count into each other's
series, and the exposition shows what this application saw.

Events are counted where they happen (a request answered, a webhook attempt, an import's
rows); states (queues, lags, pool use) are read when the metrics are scraped, by collectors
added with `register`, so they are never stale and cost nothing between scrapes.

**No personal data in a label.** A label value is one of a fixed set (an outcome, a status, a
method), a route template (`/v4/contacts/{id}`, never the path with its values), or an
account's opaque id. E-mail addresses, contact ids, field values, query strings and keys never
reach a label: the instruments below take no other values, `route_label` keeps to
templates, and a method outside HTTP's own is `other`.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Histogram
from prometheus_client.registry import Collector

NAMESPACE = "audiencefilter"
UNMATCHED = "unmatched"
"""The route label of a request no route matched (a 404 for an unknown path, a preflight):
the path itself could hold anything a client typed."""

METHODS = frozenset(
    ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "TRACE", "CONNECT")
)
"""The methods of HTTP (RFC 9110) a request's `method` label keeps as they are."""
OTHER_METHOD = "other"
"""The `method` label of any other method: anyone who reaches the port may invent methods
(`XQZ`, `get`), and a label value kept per invented method would grow the series forever."""

REQUEST_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0)
WEBHOOK_OUTCOMES = ("success", "http_error", "timeout", "network_error", "refused")
"""How a delivery attempt ended: a 2xx; another status; the attempt's time limit; no answer
(refused connection, reset, TLS failure); the URL refused before sending (its address is not
allowed)."""


class Metrics:
    """The instruments of one application, and the registry they are exposed from."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Histogram(
            "http_request_duration_seconds",
            "Time from a request's arrival to its complete answer, by route template, method "
            "and status code.",
            ["route", "method", "status"],
            namespace=NAMESPACE,
            buckets=REQUEST_BUCKETS,
            registry=self.registry,
        )
        self.webhook_attempts = Counter(
            "webhook_attempts",
            "Webhook delivery attempts made by this process, by outcome.",
            ["outcome"],
            namespace=NAMESPACE,
            registry=self.registry,
        )
        for outcome in WEBHOOK_OUTCOMES:
            self.webhook_attempts.labels(outcome)  # every outcome shown, at 0 until it happens
        self.import_rows = Counter(
            "import_rows",
            "Rows of contact imports, by account and by what became of each row.",
            ["account", "status"],
            namespace=NAMESPACE,
            registry=self.registry,
        )

    def request(self, route: str, method: str, status: int, seconds: float) -> None:
        """Counts a request answered: `route` a template or `UNMATCHED`, `method` folded into
        `METHODS` or `OTHER_METHOD`, `status` a three-digit code; so the series are bounded by
        the routes, whatever clients send."""
        kept = method if method in METHODS else OTHER_METHOD
        self.requests.labels(route, kept, str(status)).observe(seconds)

    def register(self, collector: Collector) -> None:
        """Adds a collector read at each scrape (the states: queues, lags, pool use)."""
        self.registry.register(collector)

    def webhook_attempt(self, outcome: str) -> None:
        self.webhook_attempts.labels(outcome).inc()

    def imported(self, account_id: str, statuses: dict[str, int]) -> None:
        """Counts an import's rows: `statuses` maps a row status (`created`, `invalid`...) to
        its number of rows."""
        for status, count in statuses.items():
            if count:
                self.import_rows.labels(account_id, status).inc(count)
