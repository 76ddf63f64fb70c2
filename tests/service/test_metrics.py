"""`GET /metrics`: every metric is exposed, moves when its event happens, and no label holds
personal data.

On SQLite and PostgreSQL, an application on a clock the test moves (`Hands`), so ages and lags
are exact numbers of seconds, and its scheduler and webhook worker run when the test says. Real
receivers on 127.0.0.1 answer the deliveries (a 200, a 500, nothing listening, one that never
answers). The traffic carries distinctive values (an e-mail address, a name, a data value, a
filter value); after it the exposition text is searched for each of them, for every contact,
list and audience id, and every key.
"""

from __future__ import annotations

import json
import random
import string
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import text

from audiencefilter.service import create_app
from audiencefilter.service.domain.webhooks import dispatch
from audiencefilter.service.ground import clock
from audiencefilter.service.ground.metrics import WEBHOOK_OUTCOMES
from drills.receiver import Receiver

from .audience_helpers import smart
from .conftest import ApiClient, make_tenant, settings_on, sqlite_settings
from .hands import Hands
from .test_webhooks import LOCAL, new_hook, worker_of
from .webhook_receivers import Arrivals, Silent, until

TOKEN = "metrics-token-for-the-tests-0123456789"
BEARER = {"Authorization": f"Bearer {TOKEN}"}
START = datetime(2031, 5, 4, 9, 0, tzinfo=UTC)
DISTINCTIVE = ("zephyrine.quokka@example.com", "Zephyrine", "QUOKKA-7431", "Marzipanistan")
Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


@pytest.fixture
def hands() -> Hands:
    return Hands(START)


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(request: pytest.FixtureRequest, tmp_path: Path, hands: Hands) -> Iterator[ApiClient]:
    settings = settings_on(
        request,
        tmp_path / "metrics.db",
        metrics_token=TOKEN,
        webhook_allowed_networks=LOCAL,
        webhook_worker=False,
        webhook_timeout_seconds=1,
        webhook_concurrency=4,
        audience_build_background_above=2,
        audience_build_chunk=1,
    )
    client = ApiClient(create_app(settings, clock=hands))
    yield client
    client.close()


def scrape(api: ApiClient) -> tuple[str, Samples]:
    """The exposition text, and each sample's value by name and labels."""
    response = api.get("/metrics", headers=BEARER)
    assert response.status_code == 200, response.text
    assert response.headers["content-type"].startswith("text/plain; version=")
    samples: Samples = {}
    for family in text_string_to_metric_families(response.text):
        for sample in family.samples:
            samples[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return response.text, samples


def value(samples: Samples, name: str, **labels: str) -> float:
    """A sample's value; 0 for a series not shown (a counter that never moved, an account
    with nothing building)."""
    return samples.get((name, tuple(sorted(labels.items()))), 0.0)


def requests_seen(samples: Samples, route: str, method: str, status: str) -> float:
    name = "audiencefilter_http_request_duration_seconds_count"
    return value(samples, name, route=route, method=method, status=status)


def test_the_endpoint_is_off_without_its_token_and_refuses_anything_else(
    api: ApiClient, tmp_path: Path
) -> None:
    tenant = make_tenant(api)
    assert api.get("/metrics").status_code == 401
    assert api.get("/metrics", headers={"Authorization": "Bearer nope"}).status_code == 401
    refused = api.get("/metrics", headers=tenant.headers)  # an account's key does not open it
    assert refused.status_code == 401
    assert "AUDIENCEFILTER_METRICS_TOKEN" in refused.json()["message"]
    assert refused.headers["www-authenticate"].startswith("Bearer")
    assert api.get("/metrics", headers=BEARER).status_code == 200
    off = ApiClient(create_app(sqlite_settings(tmp_path / "off.db", membership_sweep_seconds=0)))
    try:
        response = off.get("/metrics", headers=BEARER)
    finally:
        off.close()
    assert response.status_code == 404
    assert "AUDIENCEFILTER_METRICS_TOKEN" in response.json()["message"]


def test_request_durations_by_route_template_method_and_status(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, DISTINCTIVE[0])
    _, before = scrape(api)
    tenant.ok("GET", f"/v4/contacts/{contact['id']}")
    assert tenant.call("GET", "/v4/contacts/con_missing").status_code == 404
    assert api.get(f"/no/such/{DISTINCTIVE[0]}").status_code == 404
    _, after = scrape(api)
    route = "/v4/contacts/{id}"
    assert (
        requests_seen(after, route, "GET", "200") == requests_seen(before, route, "GET", "200") + 1
    )
    assert (
        requests_seen(after, route, "GET", "404") == requests_seen(before, route, "GET", "404") + 1
    )
    assert requests_seen(after, "unmatched", "GET", "404") == (
        requests_seen(before, "unmatched", "GET", "404") + 1
    )
    assert requests_seen(after, "/metrics", "GET", "200") >= 1  # the first scrape
    total = "audiencefilter_http_request_duration_seconds_sum"
    assert value(after, total, route=route, method="GET", status="200") > 0


def test_import_rows_by_account_and_status(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    body = b'{"email": "a@example.com"}\n{"email": "not an address"}\n{"email": "b@example.com"}\n'
    headers = {"Content-Type": "application/x-ndjson"}
    _, before = scrape(api)
    tenant.ok(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=headers
    )
    tenant.ok(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=headers
    )
    _, after = scrape(api)
    rows = "audiencefilter_import_rows_total"
    moved = {
        status: value(after, rows, account=tenant.account_id, status=status)
        - value(before, rows, account=tenant.account_id, status=status)
        for status in ("created", "invalid", "exists")
    }
    assert moved == {"created": 2, "invalid": 2, "exists": 2}


def test_build_queue_per_account_and_scheduler_lag(api: ApiClient, hands: Hands) -> None:
    tenant, other = make_tenant(api), make_tenant(api)
    large = tenant.new_list()["id"]
    for n in range(3):  # more than audience_build_background_above
        tenant.new_contact(large, f"big{n}@example.com")
    _, idle = scrape(api)
    builds, age = (
        "audiencefilter_audience_builds",
        "audiencefilter_audience_build_oldest_age_seconds",
    )
    assert value(idle, builds, account=tenant.account_id) == 0
    building = smart(tenant, large, {"points": {"gte": 0}})
    assert building["status"] == "building"
    hands.advance(seconds=30)
    smart(tenant, large, {"points": {"gte": 1}})
    hands.advance(seconds=15)
    _, queued = scrape(api)
    assert value(queued, builds, account=tenant.account_id) == 2
    assert value(queued, age, account=tenant.account_id) == 45
    assert value(queued, builds, account=other.account_id) == 0
    lag = "audiencefilter_membership_scheduler_lag_seconds"
    assert value(queued, lag) == 0
    api.app.state.sweeper.run_once()
    _, built = scrape(api)
    assert value(built, builds, account=tenant.account_id) == 0

    small = other.new_list()["id"]
    other.new_contact(small, "recent@example.com")
    smart(other, small, {"createdAt": {"gte": {"ago": "PT1H"}}})  # the contact leaves in an hour
    api.app.state.sweeper.run_once()  # the new audience's instants worked out, as its thread would
    hands.advance(hours=1, minutes=20)
    _, late = scrape(api)
    assert value(late, lag) == pytest.approx(20 * 60, abs=1)
    api.app.state.sweeper.run_once()
    _, caught_up = scrape(api)
    assert value(caught_up, lag) == 0


def test_webhook_attempts_by_outcome_and_deliveries_due(api: ApiClient, hands: Hands) -> None:
    arrivals = Arrivals()
    healthy, failing, silent = Receiver(), Receiver(lambda _h, _b: 500), Silent(arrivals)
    try:
        tenant = make_tenant(api)
        urls = [healthy.url, failing.url, "http://127.0.0.1:9/closed", silent.url]
        for url in urls:
            list_id = tenant.new_list()["id"]
            new_hook(tenant, list_id, url, eventTypes=["contact.created"])
            tenant.new_contact(list_id, f"hook{len(url)}@example.com")
        _, before = scrape(api)
        due, waited = (
            "audiencefilter_webhook_deliveries_due",
            "audiencefilter_webhook_delivery_lag_seconds",
        )
        with clock.using(hands):
            dispatch.fan_out(api.app.state.db)
        hands.advance(seconds=12)
        _, queued = scrape(api)
        assert (value(queued, due), value(queued, waited)) == (4, 12)
        worker_of(api).run_once()
        until(lambda: bool(arrivals.of("silent")), "the silent receiver's request")
        _, after = scrape(api)
    finally:
        silent.close()
        healthy.close()
        failing.close()
    attempts = "audiencefilter_webhook_attempts_total"
    for outcome in WEBHOOK_OUTCOMES:
        assert (attempts, (("outcome", outcome),)) in before, outcome  # shown before it happens
    moved = {
        outcome: value(after, attempts, outcome=outcome) - value(before, attempts, outcome=outcome)
        for outcome in WEBHOOK_OUTCOMES
    }
    assert moved == {"success": 1, "http_error": 1, "network_error": 1, "timeout": 1, "refused": 0}
    assert (value(after, due), value(after, waited)) == (0, 0)  # retries are due later


def test_pool_use(api: ApiClient) -> None:
    _, idle = scrape(api)
    in_use = "audiencefilter_db_pool_connections_in_use"
    settings = api.app.state.settings
    limit = settings.db_pool_size + settings.db_max_overflow
    assert value(idle, "audiencefilter_db_pool_connections_limit") == limit
    assert value(idle, "audiencefilter_state_up") == 1
    with api.app.state.db.engine.connect() as held:
        held.execute(text("SELECT 1"))
        _, busy = scrape(api)
    assert value(busy, in_use) == value(idle, in_use) + 1
    _, released = scrape(api)
    assert value(released, in_use) == value(idle, in_use)
    assert value(released, "audiencefilter_db_pool_connections_idle") >= 1


def test_no_label_holds_personal_data(api: ApiClient, hands: Hands) -> None:
    """Traffic with distinctive values everywhere a client can put one; then no label value
    holds any of them, nor an id of a contact, list or audience, nor a key."""
    tenant = make_tenant(api)
    email, name, note, place = DISTINCTIVE
    list_id = tenant.new_list(name=f"List of {name}")["id"]
    contact = tenant.new_contact(list_id, email, firstName=name, country=place, data={"note": note})
    audience = smart(tenant, list_id, {"country": place, "email": {"contains": "quokka"}})
    tenant.ok("GET", f"/v4/contacts/{contact['id']}")
    tenant.call("GET", f"/v4/contacts/{email}")
    tenant.call("GET", "/v4/contacts", params={"email": email, "listId": list_id})
    tenant.call("PATCH", f"/v4/contacts/{contact['id']}", json={"lastName": note})
    rows = [{"email": f"{name}.2@example.com", "data": {"note": note}}, {"email": note}]
    body = "".join(json.dumps(row) + "\n" for row in rows)
    tenant.call(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body.encode(),
        headers={"Content-Type": "application/x-ndjson"},
    )  # fmt: skip
    api.get(f"/v4/{email}/{note}", headers=tenant.headers)
    api.get(f"/{tenant.private_key}")
    hook = Receiver()
    try:
        new_hook(tenant, list_id, hook.url + f"?who={email}", eventTypes=["contact.created"])
        tenant.new_contact(list_id, f"x.{email}")
        worker_of(api).run_once()
    finally:
        hook.close()
    exposition, samples = scrape(api)
    forbidden = [*DISTINCTIVE, contact["id"], list_id, audience["id"], tenant.private_key,
                 tenant.public_key, tenant.private_key[:14], "quokka", "@"]  # fmt: skip
    labels = {v for (_, pairs) in samples for _, v in pairs}
    assert not [(word, v) for word in forbidden for v in labels if word.lower() in v.lower()]
    assert not [word for word in forbidden if word in exposition]
    accounts = {v for (_, pairs) in samples for k, v in pairs if k == "account"}
    assert accounts == {tenant.account_id}
    routes = {v for (_, pairs) in samples for k, v in pairs if k == "route"}
    assert all(route == "unmatched" or route.startswith("/") for route in routes), routes
    assert "/v4/contacts/{id}" in routes


KNOWN_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS")
PATHS = ("/{word}/{word}", "/v4/lists", "/v4/contacts/{word}", "/metrics", "/v4/{word}")
"""Paths of each kind: unknown, a route, a route's template with any value, the metrics."""


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(string.ascii_letters) for _ in range(rng.randint(3, 12)))


def _series(api: ApiClient) -> set[tuple[str, tuple[tuple[str, str], ...]]]:
    _, samples = scrape(api)
    return {key for key in samples if key[0].startswith("audiencefilter_http_request")}


def test_invented_methods_and_paths_add_no_series(api: ApiClient) -> None:
    """Sent without a key, any method on any path: after one request of each kind, 200 more
    with other invented methods and other paths add no series (a label value per invented
    method used to be kept forever)."""
    rng = random.Random(66)
    scrape(api)  # the scrapes' own series
    for method in (*KNOWN_METHODS, "XQZ", "get"):
        for path in PATHS:
            api.request(method, path.format(word=_word(rng)))
    before = _series(api)
    for _ in range(200):
        method = rng.choice((*KNOWN_METHODS, _word(rng), _word(rng).upper()))
        api.request(method, rng.choice(PATHS).format(word=_word(rng)))
    after = _series(api)
    assert after == before, sorted(after - before)[:5]
    methods = {dict(labels)["method"] for _, labels in after}
    assert methods <= {*KNOWN_METHODS, "other"} and "other" in methods
