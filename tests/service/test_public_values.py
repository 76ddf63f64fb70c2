"""What a public key may send in an open key of `data`: the type its form announces, bounded.

Replay of a finding: a list opening `data.nick` (its sign-up form announces `type: string`)
stored `{"nick": {"tier": "vip"}}`, arrays, a 5,000-key object and a 900 KB string from
anyone holding the page's key, and a private audience on `data.nick.tier` then held the
stranger. Every JSON value is sent against every type a form may announce (an undeclared key's
`string`, each custom field type), on SQLite and PostgreSQL: the announced type within its
bounds is stored, anything else is a 400 naming the field, and no audience moves.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import date
from typing import Any

import pytest

from audiencefilter.service import create_app

from .audience_helpers import member_emails
from .conftest import ApiClient, Tenant, make_tenant, settings_on

MAX_PUBLIC_TEXT = 1000
MAX_PUBLIC_ITEMS = 100
MAX_PUBLIC_DATA = 16_384
"""The bounds docs/service-keys.md states for a public sign-up's values."""
ANNOUNCED = ("string", "number", "boolean", "date", "string[]", "number[]", "boolean[]")
"""What a sign-up form announces for an open key: `string` for an undeclared one, else the
custom field's type."""

VALUES: dict[str, Any] = {
    "null": None,
    "short string": "Mal",
    "string at the bound": "n" * MAX_PUBLIC_TEXT,
    "string past the bound": "n" * (MAX_PUBLIC_TEXT + 1),
    "900 KB string": "n" * 900_000,
    "date string": "1990-05-01",
    "integer": 42,
    "float": 4.5,
    "true": True,
    "empty array": [],
    "strings": ["a", "b"],
    "numbers": [1, 2.5],
    "booleans": [True, False],
    "mixed array": ["a", 1],
    "strings at the bound": ["s"] * MAX_PUBLIC_ITEMS,
    "strings past the bound": ["s"] * (MAX_PUBLIC_ITEMS + 1),
    "a long string in an array": ["n" * (MAX_PUBLIC_TEXT + 1)],
    "object": {"tier": "vip"},
    "5,000-key object": {f"k{i}": i for i in range(5000)},
}


def _is_date(value: Any) -> bool:
    try:
        return isinstance(value, str) and date.fromisoformat(value).isoformat() == value
    except ValueError:
        return False


def _scalar(kind: str, value: Any) -> bool:
    if kind == "string":
        return isinstance(value, str) and len(value) <= MAX_PUBLIC_TEXT
    if kind == "number":
        return isinstance(value, int | float) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    return _is_date(value)


def accepted(kind: str, value: Any) -> bool:
    """The oracle: null (nothing sent), or the announced type within the bounds."""
    if value is None:
        return True
    if kind.endswith("[]"):
        element = kind.removesuffix("[]")
        return (
            isinstance(value, list)
            and len(value) <= MAX_PUBLIC_ITEMS
            and all(item is None or _scalar(element, item) for item in value)
        )
    return _scalar(kind, value)


@pytest.fixture(
    scope="module", params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    path = tmp_path_factory.mktemp("public-values") / "public.db"
    settings = settings_on(
        request, path, membership_sweep_seconds=0, public_contact_limit="100000/minute"
    )
    api = ApiClient(create_app(settings))
    yield api
    api.close()


@pytest.fixture(scope="module")
def forms(api: ApiClient) -> dict[str, tuple[Tenant, str]]:
    """One list per announced type: its key `nick` open to public sign-ups (declared as a
    custom field of that type, or left undeclared for `string`)."""
    made: dict[str, tuple[Tenant, str]] = {}
    for kind in ANNOUNCED:
        tenant = make_tenant(api)
        lst = tenant.new_list(publicFields=["data.nick"])["id"]
        if kind != "string":
            field = {"key": "nick", "type": kind, "label": "Nick"}
            tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json=field)
        shown = tenant.ok("GET", f"/v4/lists/{lst}/signup-form")["fields"]
        assert [(f["key"], f["type"]) for f in shown][1:] == [("data.nick", kind)]
        made[kind] = (tenant, lst)
    return made


def _sign_up(tenant: Tenant, list_id: str, email: str, data: dict[str, Any]) -> Any:
    body = {"email": email, "listId": list_id, "data": data}
    return tenant.client.post("/v4/contacts", json=body, headers=tenant.public_headers)


def _stored(tenant: Tenant, list_id: str, email: str) -> list[dict[str, Any]]:
    params = {"listId": list_id, "email": email}
    return tenant.ok("GET", "/v4/contacts", params=params)["contacts"]  # type: ignore[no-any-return]


CASES = [(kind, name) for kind in ANNOUNCED for name in VALUES]


@pytest.mark.parametrize(("kind", "name"), CASES, ids=[f"{k}-{n}" for k, n in CASES])
def test_an_open_key_takes_only_its_announced_type_within_bounds(
    forms: dict[str, tuple[Tenant, str]], kind: str, name: str
) -> None:
    tenant, lst = forms[kind]
    value = VALUES[name]
    email = f"{kind.replace('[]', '-list')}.{name.replace(' ', '-').replace(',', '')}@example.com"
    answer = _sign_up(tenant, lst, email, {"nick": value})
    stored = _stored(tenant, lst, email)
    if accepted(kind, value):
        assert answer.status_code == 201, answer.text
        assert [contact["data"] for contact in stored] == [{"nick": value}]
        return
    assert answer.status_code == 400, (
        f"{kind} took {name}: {answer.status_code} {answer.text[:300]}"
    )
    body = answer.json()
    assert "data.nick" in body["message"] or "data/nick" in body["message"], body["message"]
    [issue] = body["errors"]
    assert issue["pointer"] == "/body/data/nick"
    assert issue["expected"] and issue["found"] and issue["suggestion"]
    assert len(answer.text) < 4000  # the value is cut, not echoed whole
    assert stored == []  # no contact, so in no audience (the finding's test below checks one)


def test_a_private_audience_on_a_path_inside_an_open_key_never_holds_a_stranger(
    api: ApiClient,
) -> None:
    """The finding itself: `data.nick` open, a private audience on `data.nick.tier`."""
    tenant = make_tenant(api)
    lst = tenant.new_list(publicFields=["data.nick"])["id"]
    vip = {"data": {"path": ["nick", "tier"], "equals": "vip"}}
    body = {"name": "VIP", "listId": lst, "mode": "smart", "filters": vip}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    refused = _sign_up(tenant, lst, "mallory@example.com", {"nick": {"tier": "vip"}})
    assert refused.status_code == 400, refused.text
    assert member_emails(tenant, audience) == []
    assert _sign_up(tenant, lst, "mal@example.com", {"nick": "vip"}).status_code == 201
    assert member_emails(tenant, audience) == []


def test_a_list_that_ignores_other_fields_still_refuses_a_wrong_value_of_an_open_key(
    api: ApiClient,
) -> None:
    """`ignore` drops keys the list does not open; a key it opens keeps its type."""
    tenant = make_tenant(api)
    lst = tenant.new_list(publicFields=["data.nick"], publicFieldsPolicy="ignore")["id"]
    refused = _sign_up(tenant, lst, "mallory@example.com", {"nick": ["vip"], "tags": ["x"]})
    assert refused.status_code == 400, refused.text
    assert _sign_up(tenant, lst, "mal@example.com", {"nick": "M", "tags": ["x"]}).status_code == 201
    assert [c["data"] for c in _stored(tenant, lst, "mal@example.com")] == [{"nick": "M"}]


def test_all_of_data_open_is_bounded_as_a_whole(api: ApiClient) -> None:
    """A list that opens every key announces no type (`allData`), so any JSON is taken, up to
    a bound on the whole `data`."""
    tenant = make_tenant(api)
    lst = tenant.new_list(publicFields=["data"])["id"]
    within = {"tags": ["vip"], "nick": {"tier": "vip"}}
    assert _sign_up(tenant, lst, "a@example.com", within).status_code == 201
    for name in ("900 KB string", "5,000-key object"):
        sent = {"blob": VALUES[name]}
        assert len(json.dumps(sent)) > MAX_PUBLIC_DATA
        refused = _sign_up(tenant, lst, "b@example.com", sent)
        assert refused.status_code == 400, refused.text
        assert refused.json()["errors"][0]["pointer"] == "/body/data"
    assert _stored(tenant, lst, "b@example.com") == []
