"""A sign-up form collects one custom field: `publicFields` names `data` keys one by one.

Replay of a finding: a list whose form collects a birthday had to make all of `data` public,
and a public sign-up with `"tags": ["vip"]` landed in its private "VIP France" audience.
"""

from __future__ import annotations

import httpx

from .audience_helpers import member_emails
from .conftest import Tenant

VIP_FRANCE = {"data": {"path": ["tags"], "array_contains": "vip"}}
BIRTHDAY = {"key": "birthday", "type": "date", "label": "Birthday"}


def _birthday_list(tenant: Tenant, public: list[str], **settings: object) -> tuple[str, str]:
    """A list collecting `birthday` (a custom field), with a private VIP audience."""
    lst = tenant.new_list(**settings)["id"]
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json=BIRTHDAY)
    tenant.ok("PATCH", f"/v4/lists/{lst}", json={"publicFields": public})
    body = {"name": "VIP France", "listId": lst, "mode": "smart", "filters": VIP_FRANCE}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return lst, audience


def _sign_up(tenant: Tenant, list_id: str, **fields: object) -> httpx.Response:
    body = {"email": "mallory@example.com", "listId": list_id, **fields}
    return tenant.client.post("/v4/contacts", json=body, headers=tenant.public_headers)


def _contacts(tenant: Tenant, list_id: str) -> list[dict[str, object]]:
    return tenant.ok("GET", "/v4/contacts", params={"listId": list_id})["contacts"]  # type: ignore[no-any-return]


def test_a_birthday_form_cannot_put_a_sign_up_into_a_private_audience(tenant: Tenant) -> None:
    lst, vip = _birthday_list(tenant, ["firstName", "birthday"])
    refused = _sign_up(
        tenant, lst, firstName="Mal", data={"birthday": "1990-05-01", "tags": ["vip"]}
    )
    assert refused.status_code == 403, refused.text
    body = refused.json()
    assert "data.tags" in body["message"] and "publicFields" in body["message"]
    assert [issue["pointer"] for issue in body["errors"]] == ["/body/data/tags"]
    assert _contacts(tenant, lst) == [] and member_emails(tenant, vip) == []

    signed = _sign_up(tenant, lst, firstName="Mal", data={"birthday": "1990-05-01"})
    assert signed.status_code == 201, signed.text
    [contact] = _contacts(tenant, lst)
    assert contact["data"] == {"birthday": "1990-05-01"}
    assert member_emails(tenant, vip) == []


def test_a_data_key_may_be_named_without_declaring_a_field(tenant: Tenant) -> None:
    lst = tenant.new_list(publicFields=["data.source", "data.utm-campaign"])["id"]
    data = {"source": "footer", "utm-campaign": "spring"}
    assert _sign_up(tenant, lst, data=data).status_code == 201
    assert _contacts(tenant, lst)[0]["data"] == data
    refused = _sign_up(tenant, lst, data={"source": "x", "plan": "pro"})
    assert refused.status_code == 403
    assert [issue["pointer"] for issue in refused.json()["errors"]] == ["/body/data/plan"]


def test_a_public_custom_field_is_still_checked_against_its_type(tenant: Tenant) -> None:
    lst, _ = _birthday_list(tenant, ["data.birthday"])
    wrong = _sign_up(tenant, lst, data={"birthday": "23/11/1990"})
    assert wrong.status_code == 400
    assert wrong.json()["errors"][0]["pointer"] == "/body/data/birthday"


def test_a_list_that_ignores_other_fields_keeps_only_its_public_keys(tenant: Tenant) -> None:
    lst, vip = _birthday_list(tenant, ["birthday"], publicFieldsPolicy="ignore")
    data = {"birthday": "1990-05-01", "tags": ["vip"]}
    assert _sign_up(tenant, lst, data=data).status_code == 201
    assert _contacts(tenant, lst)[0]["data"] == {"birthday": "1990-05-01"}
    assert member_emails(tenant, vip) == []


def test_all_of_data_stays_public_when_named_whole(tenant: Tenant) -> None:
    lst, vip = _birthday_list(tenant, ["data"])
    assert _sign_up(tenant, lst, data={"tags": ["vip"]}).status_code == 201
    assert member_emails(tenant, vip) == ["mallory@example.com"]


def test_a_name_that_is_no_field_of_the_list_is_refused(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    response = tenant.call("PATCH", f"/v4/lists/{lst}", json={"publicFields": ["name", "birthdy"]})
    assert response.status_code == 409, response.text  # well formed; the list lacks the field
    [issue] = response.json()["errors"]
    assert issue["pointer"] == "/body/publicFields/1"
    assert "custom field" in issue["detail"] and "data.birthdy" in issue["detail"]
    for protected in ("points", "data.", "isVerified"):
        refused = tenant.call("PATCH", f"/v4/lists/{lst}", json={"publicFields": [protected]})
        assert refused.status_code == 400, protected
        assert refused.json()["errors"][0]["pointer"] == "/body/publicFields/0"


def _form(tenant: Tenant, list_id: str, key: str) -> httpx.Response:
    return tenant.client.get(f"/v4/lists/{list_id}/signup-form", headers={"apiKey": key})


def test_a_public_key_reads_the_fields_its_form_collects(tenant: Tenant) -> None:
    lst, _ = _birthday_list(tenant, ["data.source", "firstName", "birthday"])
    answer = _form(tenant, lst, tenant.public_key)
    assert answer.status_code == 200, answer.text
    form = answer.json()["data"]
    assert form["listId"] == lst and form["allData"] is False
    shown = [(f["key"], f["label"], f["type"], f["required"]) for f in form["fields"]]
    # email first, then what publicFields opens in its order; a custom field as declared
    assert shown == [
        ("email", "Email", "string", True),
        ("firstName", "First name", "string", False),
        ("data.source", "Source", "string", False),
        ("data.birthday", "Birthday", "date", False),
    ]
    # the private key reads the same form
    assert _form(tenant, lst, tenant.private_key).json()["data"] == form


def test_a_form_of_all_of_data_says_so(tenant: Tenant) -> None:
    lst = tenant.new_list(publicFields=["data"])["id"]
    form = _form(tenant, lst, tenant.public_key).json()["data"]
    assert form["allData"] is True
    assert [f["key"] for f in form["fields"]] == ["email"]


def test_the_form_of_another_accounts_list_is_not_found(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    lst, _ = _birthday_list(tenant, ["birthday"])
    other = other_tenant
    answer = _form(other, lst, other.public_key)
    assert answer.status_code == 404, answer.text
    # a public key still may not read the list itself
    assert other.client.get(f"/v4/lists/{lst}", headers=other.public_headers).status_code == 403
