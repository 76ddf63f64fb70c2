"""An erased person stays erased: the list suppresses their e-mails until told otherwise.

Replay of a finding: re-importing the master file after an erasure made the person again
(`created: 1`, a new id). Here a contact is erased, then every way in is tried with its e-mail
(in another case too): a JSON import in both modes, a CSV import, a dry run, a private create,
a public sign-up and a `PATCH` of another contact; none makes or moves a contact to it, each
says so as its kind of answer does. The suppression keeps no address (every table is searched
for it), and an explicit removal lets the e-mail in again. On SQLite and PostgreSQL.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on
from .test_erasure import found_anywhere

EMAIL = "Ysolde.Brackenfurrow@Example.ORG"
CSV = {"Content-Type": "text/csv"}


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    return app_factory(settings_on(request, tmp_path / "suppress.db", membership_sweep_seconds=0))


def _erased(api: ApiClient) -> tuple[Tenant, str]:
    """A tenant whose list had a contact with `EMAIL`, erased."""
    tenant = make_tenant(api)
    lst = tenant.new_list()["id"]
    contact = tenant.new_contact(lst, EMAIL, firstName="Ysolde")
    tenant.new_contact(lst, "keeper@example.com")
    tenant.ok("POST", f"/v4/lists/{lst}/contacts/{contact['id']}/erase")
    return tenant, lst


def _emails(tenant: Tenant, list_id: str) -> list[str]:
    found = tenant.ok("GET", "/v4/contacts", params={"listId": list_id})["contacts"]
    return sorted(contact["email"].lower() for contact in found)


def _import(tenant: Tenant, list_id: str, rows: list[dict[str, Any]], **params: Any) -> Any:
    query = {"listId": list_id, **params}
    return tenant.ok("POST", "/v4/contacts/import", params=query, json=rows)


@pytest.mark.parametrize("mode", ["create", "upsert"])
@pytest.mark.parametrize("spelling", [EMAIL, EMAIL.lower(), EMAIL.upper()])
def test_an_import_answers_suppressed_and_writes_nothing(
    api: ApiClient, mode: str, spelling: str
) -> None:
    tenant, lst = _erased(api)
    rows = [{"email": spelling, "firstName": "Again"}, {"email": "new@example.com"}]
    rows.append({"email": spelling.swapcase()})
    answer = _import(tenant, lst, rows, mode=mode)
    statuses = [result["status"] for result in answer["results"]]
    assert statuses == ["suppressed", "created", "suppressed"]
    assert answer["suppressed"] == 2 and answer["created"] == 1
    assert _emails(tenant, lst) == ["keeper@example.com", "new@example.com"]


@pytest.mark.parametrize("dry_run", [False, True])
def test_a_csv_import_counts_the_suppressed_rows(api: ApiClient, dry_run: bool) -> None:
    tenant, lst = _erased(api)
    text = f"email,firstName\n{EMAIL},Again\nfresh@example.com,Fresh\n"
    params = {"listId": lst, "dryRun": str(dry_run).lower()}
    response = tenant.call(
        "POST", "/v4/contacts/import", params=params, content=text.encode(), headers=CSV
    )
    assert response.status_code == 200, response.text
    if not dry_run:
        summary = response.json()["data"]
        assert summary["suppressed"] == 1 and summary["created"] == 1, summary
        assert _emails(tenant, lst) == ["fresh@example.com", "keeper@example.com"]


def test_a_private_create_is_a_conflict_naming_the_way_back(api: ApiClient) -> None:
    tenant, lst = _erased(api)
    response = tenant.call("POST", "/v4/contacts", json={"email": EMAIL.lower(), "listId": lst})
    assert response.status_code == 409, response.text
    assert "suppress" in response.text and "/suppressions/remove" in response.text
    assert _emails(tenant, lst) == ["keeper@example.com"]


def test_a_sign_up_answers_as_ever_and_creates_nothing(api: ApiClient) -> None:
    tenant, lst = _erased(api)
    body = {"email": EMAIL, "listId": lst}
    response = tenant.client.post("/v4/contacts", json=body, headers=tenant.public_headers)
    other = {"email": "unknown@example.com", "listId": lst}
    answered = tenant.client.post("/v4/contacts", json=other, headers=tenant.public_headers)
    assert response.status_code == answered.status_code == 201
    assert response.json()["data"]["contact"].keys() == answered.json()["data"]["contact"].keys()
    assert _emails(tenant, lst) == ["keeper@example.com", "unknown@example.com"]


def test_an_update_to_a_suppressed_email_is_a_conflict(api: ApiClient) -> None:
    tenant, lst = _erased(api)
    keeper = tenant.ok("GET", "/v4/contacts", params={"listId": lst})["contacts"][0]
    response = tenant.call("PATCH", f"/v4/contacts/{keeper['id']}", json={"email": EMAIL})
    assert response.status_code == 409, response.text
    assert _emails(tenant, lst) == ["keeper@example.com"]


def test_the_suppression_keeps_no_address(api: ApiClient) -> None:
    tenant, lst = _erased(api)
    assert found_anywhere(api, (EMAIL, "brackenfurrow")) == []
    check = tenant.ok("POST", f"/v4/lists/{lst}/suppressions/check", json={"email": EMAIL})
    assert check["suppression"]["suppressed"] is True


def test_a_removal_lets_the_email_in_again(
    api: ApiClient, caplog: pytest.LogCaptureFixture
) -> None:
    tenant, lst = _erased(api)
    path = f"/v4/lists/{lst}/suppressions"
    with caplog.at_level("WARNING", logger="audiencefilter.service.suppression"):
        removed = tenant.ok("POST", f"{path}/remove", json={"email": EMAIL.upper()})
    assert removed["suppression"] == {"listId": lst, "suppressed": False, "removed": True}
    assert any("suppression removed" in record.message for record in caplog.records)
    assert not any(EMAIL.lower() in record.message.lower() for record in caplog.records)
    assert _import(tenant, lst, [{"email": EMAIL}])["created"] == 1
    again = tenant.ok("POST", f"{path}/remove", json={"email": EMAIL})
    assert again["suppression"]["removed"] is False


def test_suppression_is_the_lists_own(api: ApiClient) -> None:
    tenant, lst = _erased(api)
    other_list = tenant.new_list(name="Other")["id"]
    assert _import(tenant, other_list, [{"email": EMAIL}])["created"] == 1
    stranger = make_tenant(api)
    response = stranger.call("POST", f"/v4/lists/{lst}/suppressions/check", json={"email": EMAIL})
    assert response.status_code == 404
