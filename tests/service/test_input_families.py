"""Input that used to become a 5xx, or to be read otherwise than written, as families:
reserved words as custom field keys, deep JSON under every content type, and numbers written
with digits other than ASCII `0-9` (event cursors, `Content-Length`, forwarded ports)."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from audiencefilter.service.domain import event_feed
from audiencefilter.service.http.client_address import parse_address

from .conftest import Tenant

DEEP = "[" * 5000 + "]" * 5000
DEEP_OBJECT = '{"a":' * 5000 + "1" + "}" * 5000
CONTENT_TYPES = [
    None,
    "text/plain",
    "text/csv",
    "application/x-www-form-urlencoded",
    "application/octet-stream",
    "application/merge-patch+json",
    "application/jsonlines",
    "application/json; charset=utf-8",
    "APPLICATION/JSON",
    "application/x-ndjson",
]
OTHER_DIGITS = ["²", "①", "١٢", "１２", "٣", "1_0", " 7", "+3", "7\n"]


@pytest.mark.parametrize("key", ["AND", "OR", "NOT", "and", "or", "not", "And", "nOt"])
def test_every_reserved_word_is_the_same_409_as_a_custom_field_key(
    tenant: Tenant, key: str
) -> None:
    lst = tenant.new_list()["id"]
    response = tenant.call("POST", f"/v4/lists/{lst}/fields", json={"key": key, "type": "string"})
    assert response.status_code == 409, response.text
    assert "word of the filter syntax" in response.json()["message"]


def _send(tenant: Tenant, method: str, url: str, body: str, media: str | None) -> Any:
    headers = {"Content-Type": media} if media is not None else {}
    request = tenant.client.http.build_request(
        method, url, content=body.encode(), headers={**tenant.headers, **headers}
    )
    if media is None:
        request.headers.pop("Content-Type", None)
    return tenant.client.portal.call(tenant.client.http.send, request)


@pytest.mark.parametrize("media", CONTENT_TYPES)
@pytest.mark.parametrize("body", [DEEP, DEEP_OBJECT], ids=["array", "object"])
@pytest.mark.parametrize("route", ["import", "contact", "list"])
def test_deep_json_under_any_content_type_is_a_clean_4xx(
    tenant: Tenant, media: str | None, body: str, route: str
) -> None:
    lst = tenant.new_list()["id"]
    method, url = {
        "import": ("POST", f"/v4/contacts/import?listId={lst}"),
        "contact": ("POST", "/v4/contacts"),
        "list": ("PATCH", f"/v4/lists/{lst}"),
    }[route]
    response = _send(tenant, method, url, body, media)
    assert 400 <= response.status_code < 500, response.text
    assert response.json()["error"] == response.status_code


def _cursor(list_id: str, number: str) -> str:
    raw = f"{list_id}:{number}".encode()
    return "ev1." + base64.urlsafe_b64encode(raw).decode().rstrip("=")


@pytest.mark.parametrize("number", OTHER_DIGITS)
def test_an_event_cursor_holding_other_digits_is_a_400(tenant: Tenant, number: str) -> None:
    list_id = tenant.new_list()["id"]
    tenant.new_contact(list_id, "ann@example.com")
    response = tenant.call(
        "GET", "/v4/events", params={"listId": list_id, "after": _cursor(list_id, number)}
    )
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["pointer"] == "/query/after"


def test_an_event_cursor_of_ascii_digits_still_reads(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    tenant.new_contact(list_id, "ann@example.com")
    assert event_feed.position_of(_cursor(list_id, "0"), list_id) == 0
    after = tenant.ok(
        "GET", "/v4/events", params={"listId": list_id, "after": _cursor(list_id, "0")}
    )
    assert after["events"]


@pytest.mark.parametrize("number", OTHER_DIGITS)
def test_a_content_length_of_other_digits_is_not_a_number(tenant: Tenant, number: str) -> None:
    """`int()` reads `١٢` as 12 and `1_0` as 10: the body limit must not."""
    from audiencefilter.service.http.middleware import BodyLimitMiddleware

    limit = BodyLimitMiddleware(lambda *_: None, max_bytes=5)  # type: ignore[arg-type, return-value]
    big = {"type": "http", "headers": [(b"content-length", ("9" * 3 + number).encode())]}
    assert limit._declared_too_large(big) is False


@pytest.mark.parametrize("port", [d for d in OTHER_DIGITS if d.strip() == d])
def test_a_forwarded_port_of_other_digits_is_no_address(port: str) -> None:
    assert parse_address(f"203.0.113.7:{port}") is None
    assert parse_address(f"[2001:db8::1]:{port}") is None
    assert parse_address("203.0.113.7:8080") is not None


@pytest.mark.parametrize("grace", ["١٢h", "１２m", "²d", "1_0s"])
def test_a_grace_of_other_digits_is_refused_by_the_command_line(grace: str) -> None:
    from audiencefilter.service.commands.main import CommandError, parse_grace

    with pytest.raises(CommandError):
        parse_grace(grace)
    assert parse_grace("12h").total_seconds() == 12 * 3600
