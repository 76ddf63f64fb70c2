"""Headers every answer carries, and text people read kept free of control characters.

Every response, of a route, a static mount, an error or a middleware's refusal, says
`X-Content-Type-Options: nosniff`; every HTML or SVG one also carries a Content-Security-Policy
with `frame-ancestors 'none'` and `X-Frame-Options: DENY` (the builder's assets had no nosniff,
`favicon.svg` no policy, and any origin could frame `/docs` and `/redoc`). A custom field's
label kept a NUL: every stored human-readable text (labels, names, titles, descriptions)
refuses control characters, a paragraph keeping tab and line breaks.
"""

from __future__ import annotations

from typing import Any

import pytest

from .conftest import ApiClient, Tenant

PAGES = [
    ("GET", "/builder", {}),
    ("GET", "/builder/assets/app.js", {}),
    ("GET", "/builder/assets/builder.css", {}),
    ("GET", "/builder/assets/favicon.svg", {}),
    ("GET", "/builder/assets/missing.js", {}),
    ("GET", "/docs", {}),
    ("GET", "/redoc", {}),
    ("GET", "/docs/assets/swagger-ui.css", {}),
    ("GET", "/openapi.json", {}),
    ("GET", "/health/live", {}),
    ("GET", "/v4/lists", {}),  # no key: 401
    ("GET", "/nowhere", {}),  # 404
    ("DELETE", "/docs", {}),  # 405
    ("POST", "/v4/lists", {"content": b"x" * (2 << 20)}),  # 413 from the body limit
    (
        "OPTIONS",
        "/v4/contacts",
        {"headers": {"Origin": "https://a.example", "Access-Control-Request-Method": "POST"}},
    ),
]
DOCUMENTS = ("text/html", "image/svg+xml")


@pytest.mark.parametrize(("method", "path", "extra"), PAGES)
def test_every_response_says_nosniff_and_documents_refuse_framing(
    client: ApiClient, method: str, path: str, extra: dict[str, Any]
) -> None:
    response = client.request(method, path, **extra)
    assert response.headers.get("x-content-type-options") == "nosniff", response.status_code
    media = response.headers.get("content-type", "").split(";")[0]
    if media in DOCUMENTS:
        assert "frame-ancestors 'none'" in response.headers["content-security-policy"]
        assert response.headers["x-frame-options"] == "DENY"


def test_the_builder_keeps_its_own_stricter_policy(client: ApiClient) -> None:
    policy = client.get("/builder").headers["content-security-policy"]
    assert "script-src 'self'" in policy and "frame-ancestors 'none'" in policy


def test_an_svg_opened_alone_runs_no_script(client: ApiClient) -> None:
    policy = client.get("/builder/assets/favicon.svg").headers["content-security-policy"]
    assert "default-src 'none'" in policy


CONTROLS = ["\x00", "\x01", "\x07", "\x1b", "\x7f", "\x85", "\x9f", "\t", "\n", "\r"]
PARAGRAPH_OK = {"\t", "\n", "\r"}


def _writes(tenant: Tenant, text: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """Every write of a human-readable text: (method, path, body, the field)."""
    lst = tenant.new_list()["id"]
    contact = tenant.new_contact(lst, "ann@example.com")["id"]
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json={"key": "plan", "type": "string"})
    audience = tenant.ok(
        "POST", "/v4/audiences", 201, json={"listId": lst, "name": "a", "mode": "manual"}
    )["audience"]["id"]
    value = f"a{text}b"
    return [
        (
            "POST",
            f"/v4/lists/{lst}/fields",
            {"key": "k", "type": "string", "label": value},
            "label",
        ),
        ("PATCH", f"/v4/lists/{lst}/fields/plan", {"label": value}, "label"),
        ("POST", "/v4/lists", {"name": value}, "name"),
        ("PATCH", f"/v4/lists/{lst}", {"title": value}, "title"),
        ("PATCH", f"/v4/lists/{lst}", {"desc": value}, "desc"),
        ("POST", "/v4/audiences", {"listId": lst, "name": value, "mode": "manual"}, "name"),
        ("PATCH", f"/v4/audiences/{audience}", {"name": value}, "name"),
        (
            "POST",
            "/v4/contacts",
            {"listId": lst, "email": "b@example.com", "firstName": value},
            "firstName",
        ),
        ("PATCH", f"/v4/contacts/{contact}", {"lastName": value}, "lastName"),
        ("PATCH", f"/v4/contacts/{contact}", {"address": value}, "address"),
        ("POST", "/v4/actions", {"subId": contact, "name": value, "increase": 1}, "name"),
    ]


PARAGRAPH_FIELDS = {"desc", "address"}


@pytest.mark.parametrize("control", CONTROLS, ids=lambda c: f"U+{ord(c):04X}")
def test_a_control_character_in_text_people_read_is_refused(tenant: Tenant, control: str) -> None:
    for method, path, body, field in _writes(tenant, control):
        response = tenant.call(method, path, json=body)
        if field in PARAGRAPH_FIELDS and control in PARAGRAPH_OK:
            assert response.status_code in (200, 201), (path, field, response.text)
            continue
        assert response.status_code == 400, (path, field, response.text)
        pointers = [issue["pointer"] for issue in response.json()["errors"]]
        assert pointers == [f"/body/{field}"], (path, pointers)
        assert "control characters" in response.json()["message"], response.text
