"""CORS for browser sign-ups: the settings' origins everywhere, each list's own on that list."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from .conftest import ApiClient, Tenant, make_tenant

GLOBAL = "https://global.example"
SHOP = "https://shop.example"
EXPOSED = "RateLimit, RateLimit-Policy, Retry-After, Idempotent-Replayed, X-Request-Id"


class Browser:
    def __init__(self, api: ApiClient, tenant: Tenant) -> None:
        self.api, self.tenant = api, tenant
        self.shop_list = tenant.new_list(name="Shop", allowedOrigins=[SHOP])["id"]
        self.plain_list = tenant.new_list(name="Plain")["id"]
        self.count = 0

    def preflight(self, origin: str, path: str = "/v4/contacts", **headers: str) -> httpx.Response:
        request_headers = {
            "Origin": origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "apikey, content-type",
            **headers,
        }
        return self.api.request("OPTIONS", path, headers=request_headers)

    def sign_up(self, list_id: str, origin: str | None, **extra: Any) -> httpx.Response:
        self.count += 1
        headers = {"apiKey": self.tenant.public_key}
        if origin is not None:
            headers["Origin"] = origin
        body = {"email": f"visitor{self.count}@example.com", "listId": list_id, **extra}
        return self.api.post("/v4/contacts", headers=headers, json=body)


@pytest.fixture
def browser(app_factory: Callable[..., ApiClient]) -> Browser:
    api = app_factory(cors_origins=[GLOBAL], public_contact_limit="1000/minute")
    return Browser(api, make_tenant(api))


@pytest.fixture
def limited_browser(app_factory: Callable[..., ApiClient]) -> Browser:
    api = app_factory(cors_origins=[GLOBAL], public_contact_limit="3/minute")
    return Browser(api, make_tenant(api))


def test_preflight_allows_origins_of_any_list_and_of_the_settings(browser: Browser) -> None:
    for origin in (SHOP, GLOBAL):
        answer = browser.preflight(origin)
        assert answer.status_code == 200, answer.text
        assert answer.headers["access-control-allow-origin"] == origin
        assert answer.headers["access-control-allow-methods"] == "POST"
        assert "apiKey" in answer.headers["access-control-allow-headers"]
        assert "Origin" in answer.headers["vary"]
    refused = browser.preflight("https://elsewhere.example")
    assert refused.status_code == 400
    assert "access-control-allow-origin" not in refused.headers
    assert browser.preflight(SHOP, **{"Access-Control-Request-Method": "DELETE"}).status_code == 400
    # other paths have no CORS at all
    assert "access-control-allow-origin" not in browser.preflight(SHOP, "/v4/lists").headers


def test_a_list_written_is_seen_by_the_next_preflight(browser: Browser) -> None:
    late = "http://localhost:5173"
    assert browser.preflight(late).status_code == 400
    browser.tenant.ok("PATCH", f"/v4/lists/{browser.plain_list}", json={"allowedOrigins": [late]})
    assert browser.preflight(late).status_code == 200
    browser.tenant.ok("PATCH", f"/v4/lists/{browser.plain_list}", json={"allowedOrigins": []})
    assert browser.preflight(late).status_code == 400
    browser.tenant.new_list(name="New", allowedOrigins=[late])
    assert browser.preflight(late).status_code == 200


def test_a_deleted_list_takes_its_origins_with_it(browser: Browser) -> None:
    gone = "https://gone.example"
    doomed = browser.tenant.new_list(name="Doomed", allowedOrigins=[gone])["id"]
    assert browser.preflight(gone).status_code == 200
    browser.tenant.ok("DELETE", f"/v4/lists/{doomed}")
    assert browser.preflight(gone).status_code == 400


def test_other_commits_leave_the_origins_read_alone(browser: Browser) -> None:
    """Contacts and audiences are written without a word to the origins: only the list routes
    say a list changed (the http floor listens to no session of the process)."""
    import inspect

    from audiencefilter.service.http import origins

    before = origins.generation()
    browser.tenant.new_contact(browser.plain_list, "quiet@example.com")
    assert origins.generation() == before
    assert "event.listen" not in inspect.getsource(origins)


def test_the_post_is_allowed_only_for_origins_of_its_list(browser: Browser) -> None:
    allowed = browser.sign_up(browser.shop_list, SHOP)
    assert allowed.status_code == 201, allowed.text
    assert allowed.headers["access-control-allow-origin"] == SHOP
    assert allowed.headers["access-control-expose-headers"] == EXPOSED
    assert "Origin" in allowed.headers["vary"]

    refused = browser.sign_up(browser.plain_list, SHOP)
    assert refused.status_code == 403
    message = (
        f"Origin {SHOP} may not create contacts in list {browser.plain_list}: add it "
        "to the list's allowedOrigins"
    )
    assert refused.json() == {"error": 403, "message": message, "status": 403, "detail": message}
    assert "access-control-allow-origin" not in refused.headers
    assert "ratelimit" not in refused.headers  # refused before any quota was spent

    anywhere = browser.sign_up(browser.plain_list, GLOBAL)
    assert anywhere.status_code == 201
    assert anywhere.headers["access-control-allow-origin"] == GLOBAL

    server_to_server = browser.sign_up(browser.plain_list, None)
    assert server_to_server.status_code == 201
    assert "access-control-allow-origin" not in server_to_server.headers
    assert "vary" not in server_to_server.headers

    same_origin = browser.sign_up(browser.plain_list, "http://testserver")  # the /docs page
    assert same_origin.status_code == 201


def test_errors_of_an_allowed_origin_are_readable_by_the_page(limited_browser: Browser) -> None:
    browser = limited_browser
    invalid = browser.sign_up(browser.shop_list, SHOP, points=5)
    assert invalid.status_code == 400
    assert invalid.headers["access-control-allow-origin"] == SHOP
    statuses = [browser.sign_up(browser.shop_list, SHOP).status_code for _ in range(3)]
    assert statuses == [201, 201, 429]  # the 400 above counted towards the address limit
    limited = browser.sign_up(browser.shop_list, SHOP)
    assert limited.status_code == 429
    assert limited.headers["access-control-allow-origin"] == SHOP
    assert "retry-after" in limited.headers
    # an unknown list: no list to allow the origin, the 404 stays unreadable to the page
    missing = browser.sign_up("lst_unknown", SHOP)
    assert missing.status_code in (404, 429)
    assert "access-control-allow-origin" not in missing.headers


def test_allowed_origins_are_validated_and_normalised(browser: Browser) -> None:
    lst = browser.tenant.new_list(
        allowedOrigins=["HTTPS://Shop.Example:443", "https://shop.example", "http://[::1]:8080"]
    )
    assert lst["allowedOrigins"] == ["https://shop.example", "http://[::1]:8080"]
    for bad in ("https://shop.example/", "ftp://shop.example", "*", "null", "https://a:70000"):
        answer = browser.tenant.call(
            "POST", "/v4/lists", json={"name": "x", "allowedOrigins": [bad]}
        )
        assert answer.status_code == 400, bad
        assert answer.json()["errors"][0]["pointer"] == "/body/allowedOrigins/0"
    many = [f"https://site{index}.example" for index in range(51)]
    answer = browser.tenant.call("POST", "/v4/lists", json={"name": "x", "allowedOrigins": many})
    assert answer.status_code == 400
    assert browser.tenant.new_list(allowedOrigins=many[:50])["allowedOrigins"] == many[:50]
    assert browser.tenant.new_list()["allowedOrigins"] == []
