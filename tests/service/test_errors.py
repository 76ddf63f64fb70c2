"""Error shapes: 400 (never 422), 404 for unknown routes, 405 with Allow, 413, 500, 503."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from audiencefilter.service.api.routes import lists as list_routes
from audiencefilter.service.ground import keys

from .conftest import ApiClient, Tenant, make_tenant, url_settings
from .live import free_port


def test_unknown_routes_are_404_in_the_error_shape(tenant: Tenant) -> None:
    for path in ("/v4/nothing", "/v3/contacts", "/", "/v4"):
        response = tenant.call("GET", path)
        assert response.status_code == 404, path
        message = f"No route for GET {path}"
        assert response.json() == {
            "error": 404,
            "message": message,
            "status": 404,
            "detail": message,
        }


@pytest.mark.parametrize(
    ("method", "path", "allow"),
    [
        ("PUT", "/v4/contacts", "GET, POST"),
        ("DELETE", "/v4/contacts", "GET, POST"),
        ("POST", "/v4/contacts/con_1", "GET, PATCH, DELETE"),
        ("PUT", "/v4/lists/lst_1", "GET, PATCH, DELETE"),
        ("PATCH", "/v4/actions", "GET, POST"),
        ("POST", "/v4/projects", "GET"),
        ("POST", "/health/live", "GET"),
        ("POST", "/openapi.json", "GET, HEAD"),
    ],
)
def test_wrong_method_is_405_with_every_allowed_method(
    tenant: Tenant, method: str, path: str, allow: str
) -> None:
    response = tenant.call(method, path)
    assert response.status_code == 405
    assert response.headers["allow"] == allow
    assert response.json() == {
        "error": 405,
        "message": "Method not allowed",
        "status": 405,
        "detail": "Method not allowed",
    }


def test_body_over_one_mebibyte_is_413_by_content_length(tenant: Tenant) -> None:
    lst = tenant.new_list()
    body = b'{"email": "big@example.com", "listId": "' + lst["id"].encode() + b'", "data": {"x": "'
    body += b"a" * (1024 * 1024) + b'"}}'
    response = tenant.call(
        "POST", "/v4/contacts", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    assert response.json() == {
        "error": 413,
        "message": "Request body larger than 1048576 bytes",
        "status": 413,
        "detail": "Request body larger than 1048576 bytes",
    }
    assert tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"] == []


def test_body_over_the_limit_is_413_when_streamed_without_length(tenant: Tenant) -> None:
    async def chunks() -> AsyncIterator[bytes]:
        for _ in range(20):
            yield b" " * 65536  # 1.25 MiB of JSON whitespace, no Content-Length

    response = tenant.call(
        "POST", "/v4/lists", content=chunks(), headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413


def test_body_just_under_the_limit_is_read(tenant: Tenant) -> None:
    lst = tenant.new_list()
    prefix = (
        b'{"email": "fit@example.com", "listId": "' + lst["id"].encode() + b'", "data": {"x": "'
    )
    filler = b"a" * (1024 * 1024 - len(prefix) - 3)
    response = tenant.call(
        "POST",
        "/v4/contacts",
        content=prefix + filler + b'"}}',
        headers={"Content-Type": "application/json"},
    )
    assert response.status_code == 201


@pytest.mark.parametrize(
    ("content", "content_type", "pointer"),
    [
        (b'{"name": ', "application/json", "/body"),
        (b"[1, 2]", "application/json", "/body"),
        (b'"just a string"', "application/json", "/body"),
        (b'{"name": "x"}', "text/plain", "/body"),
        (b"", "application/json", "/body"),
    ],
)
def test_unusable_bodies_are_400(
    tenant: Tenant, content: bytes, content_type: str, pointer: str
) -> None:
    response = tenant.call(
        "POST", "/v4/lists", content=content, headers={"Content-Type": content_type}
    )
    assert response.status_code == 400, response.text
    error = response.json()
    assert error["error"] == 400 and error["errors"][0]["pointer"] == pointer


def test_deeply_nested_json_is_400_not_a_crash(tenant: Tenant) -> None:
    body = b'{"name": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    response = tenant.call(
        "POST", "/v4/lists", content=body, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400


def test_validation_errors_list_every_problem_with_pointers(tenant: Tenant) -> None:
    response = tenant.call(
        "POST", "/v4/lists", json={"name": 7, "color": "blue", "columns": ["ok", 3]}
    )
    assert response.status_code == 400
    pointers = sorted(issue["pointer"] for issue in response.json()["errors"])
    assert pointers == ["/body/color", "/body/columns/1", "/body/name"]


def test_a_query_parameter_given_twice_is_400(tenant: Tenant) -> None:
    lst = tenant.new_list()
    query = f"listId={lst['id']}&limit=1&phoneNumber=a&phoneNumber=b&limit=2"
    response = tenant.call("GET", f"/v4/contacts?{query}")
    assert response.status_code == 400
    pointers = [issue["pointer"] for issue in response.json()["errors"]]
    assert pointers == ["/query/limit", "/query/phoneNumber"]
    assert tenant.call("GET", f"/v4/contacts?listId={lst['id']}&limit=1").status_code == 200


def test_no_422_for_any_malformed_request(tenant: Tenant) -> None:
    lst = tenant.new_list()
    probes: list[tuple[str, str, dict[str, Any]]] = [
        ("GET", "/v4/contacts", {"params": {"listId": lst["id"], "limit": "-1"}}),
        ("GET", "/v4/lists", {"params": {"page": "x"}}),
        ("POST", "/v4/contacts", {"json": {}}),
        ("PATCH", f"/v4/lists/{lst['id']}", {"json": {"startFrom": "1"}}),
        ("POST", "/v4/actions", {"json": {"name": "n", "increase": None, "subId": "x"}}),
        ("GET", "/v4/actions", {"params": {"subId": "x", "limit": 0}}),
    ]
    for method, path, kwargs in probes:
        response = tenant.call(method, path, **kwargs)
        assert response.status_code == 400, (method, path, response.status_code)


def test_unexpected_errors_are_500_without_details(
    app_factory: Callable[..., ApiClient], monkeypatch: pytest.MonkeyPatch
) -> None:
    api = app_factory(raise_app_exceptions=False)
    tenant = make_tenant(api)

    def explode(*_: object) -> dict[str, object]:
        raise RuntimeError("secret internal detail")

    monkeypatch.setattr(list_routes, "list_view", explode)
    response = tenant.call("POST", "/v4/lists", json={"name": "boom"})
    assert response.status_code == 500
    assert response.json() == {
        "error": 500,
        "message": "Internal server error",
        "status": 500,
        "detail": "Internal server error",
    }
    assert "secret" not in response.text and "Traceback" not in response.text


def test_unreachable_database_is_503_on_ready_and_on_requests(
    app_factory: Callable[..., ApiClient],
) -> None:
    url = f"postgresql+psycopg://nobody@127.0.0.1:{free_port()}/missing"
    api = app_factory(url_settings(url))
    assert api.get("/health/live").status_code == 200
    ready = api.get("/health/ready")
    assert ready.status_code == 503
    assert ready.json() == {
        "error": 503,
        "message": "The database is unreachable",
        "status": 503,
        "detail": "The database is unreachable",
    }
    from audiencefilter.service.ground import keys

    response = api.get("/v4/lists", headers={"apiKey": keys.generate("private")})
    assert response.status_code == 503
    assert response.json()["error"] == 503


def test_error_bodies_never_echo_a_whole_key(tenant: Tenant) -> None:
    """A key pasted into a path, a field name or a filter comes back cut to its prefix."""
    key = tenant.private_key
    lst = tenant.new_list()
    answers = [
        tenant.call("GET", f"/v4/{key}"),
        tenant.call("POST", "/v4/lists", json={"name": "x", key: 1}),
        tenant.call(
            "GET", "/v4/contacts", params={"listId": lst["id"], "filters": f'{{"{key}": 1}}'}
        ),
        tenant.call(
            "POST",
            "/v4/audiences",
            json={
                "name": "a",
                "listId": lst["id"],
                "mode": "smart",
                "filters": {key: {"equals": 1}},
            },
        ),
    ]
    for response in answers:
        assert response.status_code in (400, 404), response.text
        assert key not in response.text
        assert keys.display_prefix(key) + "…" in response.text


def _envelope(response: Any, status: int) -> dict[str, Any]:
    """The one envelope of every error body: `status`, `detail` and, when any, `errors`,
    beside the interface's `error` (the status, with `message`; or for its audience rules the
    message itself, with no `message`)."""
    assert response.status_code == status, response.text
    body: dict[str, Any] = response.json()
    assert body["status"] == status and isinstance(body["detail"], str) and body["detail"]
    if isinstance(body["error"], str):
        assert body["error"] == body["detail"] and "message" not in body
    else:
        assert body["error"] == status and body["message"] == body["detail"]
    for issue in body.get("errors", []):
        assert issue["pointer"].startswith("/") and issue["detail"]
    return body


def test_every_kind_of_refusal_answers_the_one_envelope(tenant: Tenant) -> None:
    """Refusals of the HTTP floor (key, body) and of the domain (not found, conflict, a
    counter out of range, a forbidden field, a filter) share one envelope."""
    lst = tenant.new_list(url=f"taken-{uuid.uuid4().hex[:8]}")
    contact = tenant.new_contact(lst["id"], "ann@example.com", points=2**53 - 1)
    _envelope(tenant.call("GET", "/v4/lists", headers={"apiKey": "afk_priv_x"}), 401)
    _envelope(tenant.call("POST", "/v4/contacts", json={"listId": lst["id"]}), 400)
    _envelope(tenant.call("GET", "/v4/lists/lst_nothing"), 404)
    _envelope(tenant.call("POST", "/v4/lists", json={"name": "x", "url": lst["url"]}), 409)
    action = {"subId": contact["id"], "name": "one more", "increase": 1}
    assert _envelope(tenant.call("POST", "/v4/actions", json=action), 422)["errors"]
    signup = {"listId": lst["id"], "email": "bob@example.com", "company": "x"}
    public = tenant.call("POST", "/v4/contacts", json=signup, headers=tenant.public_headers)
    assert _envelope(public, 403)["errors"][0]["pointer"] == "/body/company"
    rule = {"name": "x", "listId": lst["id"], "filters": {"pointz": 1}}
    _envelope(tenant.call("POST", "/v4/audiences", json=rule), 400)


@pytest.mark.parametrize(
    ("method", "path", "place", "field", "value", "where"),
    [
        ("POST", "/v4/audiences", "json", "filters", {"pointz": {"gte": 1}}, "pointz"),
        ("POST", "/v4/audiences", "json", "filtersText", "pointz >= 1", "pointz"),
        (
            "POST",
            "/v4/audiences/preview",
            "json",
            "filters",
            {"points": {"gtee": 1}},
            "points.gtee",
        ),
        ("PATCH", "/v4/audiences/{audience}", "json", "filtersText", "points >=", ""),
        ("GET", "/v4/contacts", "params", "filters", '{"pointz": 1}', "pointz"),
        ("GET", "/v4/contacts", "params", "filtersText", "pointz = 1", "pointz"),
    ],
)
def test_a_filter_problem_is_an_item_of_errors_pointed_at_its_field(
    tenant: Tenant, method: str, path: str, place: str, field: str, value: Any, where: str
) -> None:
    """The rules' form lists the filter's problems in `errors` too, as every 400 does, pointed
    at the field and place of the request that held the filter; `details` stays, deprecated."""
    lst = tenant.new_list()
    audience = tenant.ok("POST", "/v4/audiences", 201, json={"name": "a", "listId": lst["id"]})
    url = path.format(audience=audience["audience"]["id"])
    sent: dict[str, Any] = {field: value}
    if method != "PATCH":
        sent.update({"name": "x", "listId": lst["id"]} if path == "/v4/audiences" else {})
        sent.setdefault("listId", lst["id"])
    response = tenant.call(method, url, **{place: sent})
    body = _envelope(response, 400)
    location = "query" if place == "params" else "body"
    assert body["errors"][0]["pointer"] == f"/{location}/{field}"
    assert body["errors"][0]["path"] == body["details"][0]["path"] == where
