"""`GET /v4/contacts?filtersText=`: the text syntax, as audiences take it, beside `filters`."""

from __future__ import annotations

from .conftest import Tenant


def _emails(tenant: Tenant, list_id: str, **params: str) -> list[str]:
    data = tenant.ok(
        "GET", "/v4/contacts", params={"listId": list_id, "sort": "email", "order": "asc", **params}
    )
    return [contact["email"] for contact in data["contacts"]]


def test_text_and_json_select_the_same_contacts(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "ada@example.com", points=120, country="FR")
    tenant.new_contact(lst["id"], "bob@example.com", points=120, country="US")
    tenant.new_contact(lst["id"], "cy@example.com", points=10, country="FR", data={"plan": "pro"})
    text = _emails(tenant, lst["id"], filtersText='points >= 100 and country in ["FR", "DE"]')
    json = _emails(
        tenant, lst["id"], filters='{"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}}'
    )
    assert text == json == ["ada@example.com"]
    assert _emails(tenant, lst["id"], filtersText='data.plan = "pro"') == ["cy@example.com"]
    assert len(_emails(tenant, lst["id"], filtersText="  ")) == 3  # blank: no condition


def test_both_forms_is_an_error(tenant: Tenant) -> None:
    lst = tenant.new_list()
    response = tenant.call(
        "GET",
        "/v4/contacts",
        params={"listId": lst["id"], "filters": "{}", "filtersText": "points > 1"},
    )
    assert response.status_code == 400
    assert response.json() == {
        "error": 400,
        "message": "Send either filters or filtersText, not both",
        "status": 400,
        "detail": "Send either filters or filtersText, not both",
    }


def test_an_invalid_text_filter_is_located(tenant: Tenant) -> None:
    lst = tenant.new_list()
    response = tenant.call(
        "GET", "/v4/contacts", params={"listId": lst["id"], "filtersText": "points >= lots"}
    )
    assert response.status_code == 400
    body = response.json()
    assert body["error"].startswith("Invalid filters") and "message" not in body
    assert body["details"][0]["line"] == 1 and body["details"][0]["column"] == 11


def test_contacts_are_listed_by_their_ids_in_one_request(tenant: Tenant) -> None:
    lst = tenant.new_list()["id"]
    made = [tenant.new_contact(lst, f"p{n}@example.com")["id"] for n in range(5)]
    other = tenant.new_list(name="Other")["id"]
    elsewhere = tenant.new_contact(other, "else@example.com")["id"]
    query = {"listId": lst, "ids": ",".join([made[1], made[3], elsewhere, "con_gone"])}
    found = tenant.ok("GET", "/v4/contacts", params=query)["contacts"]
    assert sorted(c["email"] for c in found) == ["p1@example.com", "p3@example.com"]
    many = {"listId": lst, "ids": ",".join(f"con_{n}" for n in range(101))}
    response = tenant.call("GET", "/v4/contacts", params=many)
    assert response.status_code == 400 and "at most 100" in response.text
    odd = tenant.call("GET", "/v4/contacts", params={"listId": lst, "ids": "a,'b"})
    assert odd.status_code in (400, 422)
