"""Hostile input found by an outside attack (issue "service hardening, round three"): each is a
400 naming the place, never a 5xx; and webhook targets that smuggle a private IPv4 address
inside IPv6, or hold spaces and line breaks, are refused when registered.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from .conftest import Tenant

LONE = "\ud800"
LINES = {"Content-Type": "application/x-ndjson"}


def _raw(tenant: Tenant, method: str, url: str, body: str, **kwargs: Any) -> Any:
    headers = {"Content-Type": "application/json", **kwargs.pop("headers", {})}
    return tenant.call(method, url, content=body.encode("utf-8"), headers=headers, **kwargs)


def _surrogate_body(value: dict[str, Any]) -> str:
    # json.dumps writes the lone surrogate as the escape `\ud800`, valid JSON text.
    return json.dumps(value)


def _assert_400_at(response: Any, pointer_part: str) -> None:
    assert response.status_code == 400, response.text
    pointers = [issue.get("pointer", "") for issue in response.json().get("errors", [])]
    assert any(pointer_part in pointer for pointer in pointers), pointers


def test_a_lone_surrogate_is_a_400_everywhere(tenant: Tenant) -> None:
    lst = tenant.new_list()
    list_id = lst["id"]
    contact = tenant.new_contact(list_id, "ann@example.com")
    cases = [
        ("POST", "/v4/lists", {"name": "x" + LONE}, "name"),
        ("PATCH", f"/v4/lists/{list_id}", {"name": LONE}, "name"),
        (
            "POST",
            "/v4/contacts",
            {"listId": list_id, "email": "b@example.com", "firstName": LONE},
            "firstName",
        ),
        (
            "POST",
            "/v4/contacts",
            {"listId": list_id, "email": "c@example.com", "data": {LONE: 1}},
            "data",
        ),
        (
            "POST",
            "/v4/contacts",
            {"listId": list_id, "email": "d@example.com", "data": {"k": [LONE]}},
            "data",
        ),
        ("PATCH", f"/v4/contacts/{contact['id']}", {"lastName": LONE}, "lastName"),
        ("POST", "/v4/audiences", {"listId": list_id, "name": LONE, "mode": "manual"}, "name"),
        (
            "POST",
            "/v4/audiences",
            {"listId": list_id, "name": "a", "mode": "smart", "filters": {"firstName": LONE}},
            "filters",
        ),
        ("POST", "/v4/webhooks", {"listId": list_id, "url": "https://example.com/" + LONE}, "url"),
    ]
    for method, url, body, where in cases:
        _assert_400_at(_raw(tenant, method, url, _surrogate_body(body)), where)


def test_hostile_import_rows_are_400s_or_invalid_rows(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    url = "/v4/contacts/import"
    params = {"listId": list_id}
    huge = "1" * 5000
    deep_array = "[" * 1000 + "]" * 1000
    deep_data = '{"a":' * 3000 + "1" + "}" * 3000
    for body in (
        f'[{{"email": "a@example.com", "points": {huge}}}]',
        f'[{{"email": "a@example.com", "data": {{"x": {deep_array}}}}}]',
        f'[{{"email": "a@example.com", "data": {deep_data}}}]',
        _surrogate_body([{"email": "a@example.com", "firstName": LONE}]),
    ):
        response = _raw(tenant, "POST", url, body, params=params)
        assert response.status_code in (200, 400), response.text[:300]
        if response.status_code == 200:
            assert response.json()["data"]["invalid"] == 1
        lines = body[1:-1]
        response = tenant.call("POST", url, params=params, content=lines, headers=LINES)
        assert response.status_code in (200, 400), response.text[:300]
        if response.status_code == 200:
            assert response.json()["data"]["invalid"] == 1


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\u0085"])
def test_json_lines_rows_may_hold_unicode_line_separators(tenant: Tenant, separator: str) -> None:
    list_id = tenant.new_list()["id"]
    # In `data`: U+0085 is a control character, which a name may not hold (`ground/fields.py`).
    row = {"email": "a@example.com", "data": {"note": f"a{separator}b"}}
    rows = [row, {"email": "b@example.com"}]
    body = "\n".join(json.dumps(row, ensure_ascii=False) for row in rows)
    response = tenant.call(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=LINES
    )
    assert response.status_code == 200, response.text
    assert response.json()["data"]["created"] == 2


def test_too_many_json_lines_rows_are_refused_before_parsing(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    body = "{}\n" * 5000
    response = tenant.call(
        "POST", "/v4/contacts/import", params={"listId": list_id}, content=body, headers=LINES
    )
    assert response.status_code == 413, response.text
    assert "at most 1000 rows (MAX_IMPORT_ROWS)" in response.json()["message"]


@pytest.mark.parametrize("cursor", ["١٢٣", "²", "１２"])
def test_an_event_cursor_of_other_digits_is_a_400(tenant: Tenant, cursor: str) -> None:
    list_id = tenant.new_list()["id"]
    response = tenant.call("GET", "/v4/events", params={"listId": list_id, "after": cursor})
    assert response.status_code == 400, response.text


@pytest.mark.parametrize(
    "url",
    [
        "http://[64:ff9b::7f00:1]/hook",
        "http://[64:ff9b::a9fe:a9fe]/hook",
        "http://[64:ff9b::a00:1]/hook",
        "http://[2002:7f00:1::]/hook",
        "http://[2002:a9fe:a9fe::]/hook",
        "http://[::127.0.0.1]/hook",
        "http://[::a9fe:a9fe]/hook",
        "http://[::ffff:0:7f00:1]/hook",
        "http://example.com/a b",
        "http://example.com/a\r\nX-Injected: 1",
        "http://example.com/\tx",
    ],
)
def test_ipv4_inside_ipv6_and_unsafe_urls_are_refused(tenant: Tenant, url: str) -> None:
    lst = tenant.new_list()
    response = tenant.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["pointer"] == "/body/url"


def test_csv_export_neutralises_formulas_from_a_public_sign_up(tenant: Tenant) -> None:
    import csv
    import io

    list_id = tenant.new_list()["id"]
    names = ['=HYPERLINK("http://x")', "+1+cmd|' /C calc'!A0", "-2+3", "@SUM(A1)", "Ann"]
    for index, name in enumerate(names):
        response = tenant.call(
            "POST",
            "/v4/contacts",
            headers=tenant.public_headers,
            json={"listId": list_id, "email": f"p{index}@example.com", "firstName": name},
        )
        assert response.status_code == 201, response.text
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={
            "listId": list_id,
            "name": "all",
            "mode": "smart",
            "filters": {"email": {"contains": "@"}},
        },
    )["audience"]
    export = tenant.call("GET", f"/v4/audiences/{audience['id']}/export", params={"format": "csv"})
    rows = list(csv.DictReader(io.StringIO(export.text)))
    shown = sorted(row["firstName"] for row in rows)
    assert shown == sorted(["'" + name for name in names[:4]] + ["Ann"])


def test_a_filter_whose_canonical_form_is_over_the_text_limit_keeps_its_members(
    tenant: Tenant,
) -> None:
    """Accepted as a JSON object (201), its canonical JSON is over the 256 KiB text limit:
    it used to hold no members while its preview counted them."""
    list_id = tenant.new_list()["id"]
    tenant.new_contact(list_id, "match@example.com")
    tenant.new_contact(list_id, "other@example.com")
    padding = "x" * 90
    emails = ["match@example.com"] + [f"{padding}{i}@example.com" for i in range(3000)]
    where = {"email": {"in": emails}}
    assert len(json.dumps(where)) > 256 * 1024
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"listId": list_id, "name": "long", "mode": "smart", "filters": where},
    )["audience"]
    subs = tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]["subs"]
    assert [contact["email"] for contact in subs] == ["match@example.com"]


def test_creating_a_smart_audience_parses_and_writes_its_filter_once(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It parsed the filter twice (the request, then its stored canonical form) and wrote the
    canonical JSON twice; now once each, and before the list's lock is taken."""
    import audiencefilter as af
    from audiencefilter.service.domain import audience_filters

    list_id = tenant.new_list()["id"]
    parses: list[Any] = []
    writes: list[Any] = []
    real_parse, real_to_json = audience_filters.parse, af.Filter.to_json
    real_read = audience_filters.from_format

    def counting_parse(*args: Any, **kwargs: Any) -> Any:
        parses.append(args[0])
        return real_parse(*args, **kwargs)

    def counting_read(*args: Any, **kwargs: Any) -> Any:
        parses.append(args[0])
        return real_read(*args, **kwargs)

    def counting_to_json(self: af.Filter, **kwargs: Any) -> str:
        writes.append(self)
        return real_to_json(self, **kwargs)

    monkeypatch.setattr(audience_filters, "parse", counting_parse)
    monkeypatch.setattr(audience_filters, "from_format", counting_read)
    monkeypatch.setattr(af.Filter, "to_json", counting_to_json)
    where = {"points": {"gte": 73101}, "email": {"endsWith": "@once.example"}}
    tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"listId": list_id, "name": "once", "mode": "smart", "filters": where},
    )
    assert len(parses) == 1, parses
    assert len(writes) == 1, writes


def test_creating_a_smart_audience_costs_its_filter_once_and_the_others_not_again(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The create costed the new filter three times (the budget, the cache's weight, the list's
    room) and every other filter of the list again on each create; now the new one once and a
    stored one once per process."""
    from audiencefilter.service.domain import audience_filters, filter_budget

    list_id = tenant.new_list()["id"]
    for n in range(3):
        where = {"points": {"gte": 81000 + n}}
        body = {"listId": list_id, "name": f"other {n}", "mode": "smart", "filters": where}
        tenant.ok("POST", "/v4/audiences", 201, json=body)
    costed: list[Any] = []
    real = filter_budget.cost_of

    def counting(flt: Any) -> Any:
        costed.append(flt.to_json())
        return real(flt)

    monkeypatch.setattr(filter_budget, "cost_of", counting)
    monkeypatch.setattr(audience_filters, "cost_of", counting)
    where = {"points": {"gte": 81999}, "email": {"endsWith": "@cost.example"}}
    body = {"listId": list_id, "name": "new", "mode": "smart", "filters": where}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    assert len(costed) == 1, costed
