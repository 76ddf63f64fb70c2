"""Who is in an audience: smart members follow the data, manual members are explicit, and every
contact returned anywhere says which audiences it is in."""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import event

from audiencefilter.service.db.models import Contact

from .audience_helpers import (
    INVALID,
    audience_ids,
    contact_audiences,
    manual,
    member_emails,
    rule_body,
    rule_error,
    smart,
)
from .conftest import ApiClient, Tenant, make_tenant


def test_smart_membership_follows_a_contact_update(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "grow@example.com", points=5)
    audience = smart(tenant, lst["id"], {"points": {"gte": 10}, "country": {"not": None}})
    assert member_emails(tenant, audience["id"]) == []

    patched = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"points": 20})["contact"]
    assert audience_ids(patched) == []  # country is still null
    patched = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"country": "FR"})["contact"]
    assert audience_ids(patched) == [audience["id"]]
    assert member_emails(tenant, audience["id"]) == ["grow@example.com"]

    patched = tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"country": None})["contact"]
    assert audience_ids(patched) == []
    assert member_emails(tenant, audience["id"]) == []


def test_smart_membership_follows_points_from_actions(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "doer@example.com", points=95)
    audience = smart(tenant, lst["id"], {"points": {"gte": 100}})
    action = tenant.ok(
        "POST", "/v4/actions", 201, json={"name": "share", "increase": 10, "subId": contact["id"]}
    )["action"]
    assert member_emails(tenant, audience["id"]) == ["doer@example.com"]
    assert contact_audiences(tenant, contact["id"]) == [audience["id"]]
    tenant.ok("DELETE", f"/v4/actions/{action['id']}")
    assert member_emails(tenant, audience["id"]) == []
    assert contact_audiences(tenant, contact["id"]) == []


def test_a_deleted_contact_leaves_every_audience(tenant: Tenant) -> None:
    lst = tenant.new_list()
    keep = tenant.new_contact(lst["id"], "keep@example.com", points=50)
    gone = tenant.new_contact(lst["id"], "gone@example.com", points=60)
    audience = smart(tenant, lst["id"], {"points": {"gte": 10}})
    hand = manual(tenant, lst["id"])
    tenant.ok(
        "POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": [keep["id"], gone["id"]]}
    )
    deleted = tenant.ok("DELETE", f"/v4/contacts/{gone['id']}")["contact"]
    assert audience_ids(deleted) == [audience["id"], hand["id"]]  # as it was
    assert member_emails(tenant, audience["id"]) == ["keep@example.com"]
    assert member_emails(tenant, hand["id"]) == ["keep@example.com"]
    sizes = tenant.ok("GET", "/v4/audiences", params={"listId": lst["id"]})["audiences"]
    assert [a["subsCount"] for a in sizes] == [1, 1]


def test_manual_members_are_added_and_removed_by_id(tenant: Tenant) -> None:
    lst = tenant.new_list()
    ann = tenant.new_contact(lst["id"], "ann@example.com", points=1)
    bob = tenant.new_contact(lst["id"], "bob@example.com", points=2)
    hand = manual(tenant, lst["id"], name="Hand-picked")
    path = f"/v4/audiences/{hand['id']}/members"

    added = tenant.ok("POST", path, json={"contactIds": [ann["id"], bob["id"], ann["id"]]})
    assert added == {"audienceId": hand["id"], "added": [ann["id"], bob["id"]], "total": 2}
    again = tenant.ok("POST", path, json={"contactIds": [bob["id"]]})
    assert again == {"audienceId": hand["id"], "added": [], "total": 2}
    assert member_emails(tenant, hand["id"]) == ["bob@example.com", "ann@example.com"]
    item = {"id": hand["id"], "name": "Hand-picked", "mode": "manual"}
    assert tenant.ok("GET", f"/v4/contacts/{ann['id']}")["contact"]["audiences"] == [item]
    updated = tenant.ok("GET", f"/v4/audiences/{hand['id']}")["audience"]["updatedAt"]
    assert updated > hand["updatedAt"]

    removed = tenant.ok("DELETE", f"{path}/{ann['id']}")
    assert removed == {"audienceId": hand["id"], "removed": [ann["id"]], "total": 1}
    assert contact_audiences(tenant, ann["id"]) == []
    response = tenant.call("DELETE", f"{path}/{ann['id']}")
    assert response.status_code == 404
    assert response.json()["message"] == "This contact is not a member of this audience"


def test_members_from_elsewhere_are_refused_and_nothing_is_added(
    tenant: Tenant, other_tenant: Tenant
) -> None:
    lst, other_list = tenant.new_list(), tenant.new_list(name="Other list")
    mine = tenant.new_contact(lst["id"], "mine@example.com")
    neighbour = tenant.new_contact(other_list["id"], "neighbour@example.com")
    foreign_list = other_tenant.new_list()
    foreign = other_tenant.new_contact(foreign_list["id"], "foreign@example.com")
    hand = manual(tenant, lst["id"])
    path = f"/v4/audiences/{hand['id']}/members"

    response = tenant.call("POST", path, json={"contactIds": [mine["id"], neighbour["id"]]})
    assert response.status_code == 400
    assert response.json() == {
        "error": 400,
        "message": "Contacts must belong to the audience's list",
        "status": 400,
        "detail": "Contacts must belong to the audience's list",
        "errors": [
            {"pointer": "/body/contactIds/1", "detail": f"{neighbour['id']}: in another list"}
        ],
    }
    for ids in ([mine["id"], foreign["id"]], [mine["id"], "con_missing"], ["a b"]):
        response = tenant.call("POST", path, json={"contactIds": ids})
        assert response.status_code == 404, response.text
        body = response.json()
        assert body["message"] == "Contact not found"
        assert [issue["pointer"] for issue in body["errors"]] == [
            f"/body/contactIds/{len(ids) - 1}"
        ]
        assert "foreign@" not in response.text
    assert member_emails(tenant, hand["id"]) == []
    for bad in ({"contactIds": []}, {"contactIds": ["x"] * 1001}, {"contactIds": "x"}, {}):
        assert tenant.call("POST", path, json=bad).status_code == 400


def test_smart_audiences_have_no_editable_members(tenant: Tenant) -> None:
    lst = tenant.new_list()
    contact = tenant.new_contact(lst["id"], "c@example.com")
    audience = smart(tenant, lst["id"], {"points": 0})
    message = (
        "Members are added and removed on manual audiences only: a smart audience's filter decides"
    )
    for method, path, body in (
        ("POST", f"/v4/audiences/{audience['id']}/members", {"contactIds": [contact["id"]]}),
        ("DELETE", f"/v4/audiences/{audience['id']}/members/{contact['id']}", None),
    ):
        response = tenant.call(method, path, json=body)
        assert response.status_code == 400
        assert response.json() == {
            "error": 400,
            "message": message,
            "status": 400,
            "detail": message,
        }


def test_stored_members_come_back_when_an_audience_returns_to_manual(tenant: Tenant) -> None:
    lst = tenant.new_list()
    a = tenant.new_contact(lst["id"], "a@example.com", points=1)
    tenant.new_contact(lst["id"], "b@example.com", points=99)
    hand = manual(tenant, lst["id"])
    tenant.ok("POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": [a["id"]]})
    path = f"/v4/audiences/{hand['id']}"
    as_smart = tenant.ok("PATCH", path, json={"mode": "smart", "filters": {"points": 99}})
    assert [s["email"] for s in as_smart["audience"]["subs"]] == ["b@example.com"]
    as_manual = tenant.ok("PATCH", path, json={"mode": "manual"})
    assert [s["email"] for s in as_manual["audience"]["subs"]] == ["a@example.com"]


def test_every_endpoint_that_returns_contacts_says_their_audiences(tenant: Tenant) -> None:
    lst = tenant.new_list()
    vip = smart(tenant, lst["id"], {"points": {"gte": 100}}, name="VIP")
    hand = manual(tenant, lst["id"], name="Hand")
    both = [vip["id"], hand["id"]]
    created = tenant.ok(
        "POST",
        "/v4/contacts",
        201,
        json={"email": "v@example.com", "listId": lst["id"], "points": 150},
    )["contact"]
    assert audience_ids(created) == [vip["id"]]
    tenant.ok("POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": [created["id"]]})
    plain = tenant.new_contact(lst["id"], "p@example.com", points=1)
    assert audience_ids(plain) == []

    listed = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    assert {c["email"]: audience_ids(c) for c in listed} == {
        "v@example.com": both,
        "p@example.com": [],
    }
    assert audience_ids(tenant.ok("GET", f"/v4/contacts/{created['id']}")["contact"]) == both
    patched = tenant.ok("PATCH", f"/v4/contacts/{created['id']}", json={"firstName": "V"})
    assert audience_ids(patched["contact"]) == both
    for audience in (vip, hand):
        subs = tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]["subs"]
        assert [audience_ids(c) for c in subs] == [both]
    preview = tenant.ok(
        "POST", "/v4/audiences/preview", json={"listId": lst["id"], "filtersText": "points > 0"}
    )
    assert [audience_ids(c) for c in preview["contacts"]] == [both, []]
    assert audience_ids(tenant.ok("DELETE", f"/v4/contacts/{created['id']}")["contact"]) == both


def test_subs_are_paginated_like_contacts(tenant: Tenant) -> None:
    lst = tenant.new_list()
    for index in range(7):
        tenant.new_contact(lst["id"], f"m{index}@example.com", points=10 + index)
    tenant.new_contact(lst["id"], "out@example.com", points=1)
    audience = smart(tenant, lst["id"], {"points": {"gte": 10}})
    seen = []
    for page in (1, 2, 3):
        got = tenant.ok("GET", f"/v4/audiences/{audience['id']}", params={"limit": 3, "page": page})
        assert got["pagination"] == {"total": 7, "pages": 3, "currentPage": page, "perPage": 3}
        seen += [sub["email"] for sub in got["audience"]["subs"]]
    assert seen == [f"m{index}@example.com" for index in reversed(range(7))]
    past = tenant.ok("GET", f"/v4/audiences/{audience['id']}", params={"limit": 3, "page": 9})
    assert past["audience"]["subs"] == [] and past["pagination"]["total"] == 7
    by_position = tenant.ok(
        "GET", f"/v4/audiences/{audience['id']}", params={"sort": "position", "order": "asc"}
    )["audience"]["subs"]
    assert [sub["position"] for sub in by_position] == list(range(1, 8))
    everyone = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "sort": "position"})
    positions = {c["email"]: c["position"] for c in everyone["contacts"]}
    assert all(positions[sub["email"]] == sub["position"] for sub in by_position)
    for bad in ({"limit": 0}, {"limit": 20001}, {"page": 0}, {"sort": "name"}):
        assert tenant.call("GET", f"/v4/audiences/{audience['id']}", params=bad).status_code == 400


def test_a_stored_audiences_page_counts_its_memberships_alone(tenant: Tenant) -> None:
    """A page shorter than a stored audience counts its members on their memberships, the
    count the audiences' list gives as `subsCount`, not by joining them to the list's
    contacts; an audience judged at the request (relative date-times) still counts its
    filter over the contacts."""
    lst = tenant.new_list()
    for index in range(9):
        tenant.new_contact(lst["id"], f"c{index}@example.com", points=index)
    stored = smart(tenant, lst["id"], {"points": {"gte": 4}}, name="stored")
    live = smart(tenant, lst["id"], {"createdAt": {"gte": {"ago": "P30D"}}}, name="live")
    listed = tenant.ok("GET", "/v4/audiences", params={"listId": lst["id"]})["audiences"]
    sizes = {a["id"]: a["subsCount"] for a in listed}
    client = tenant.client
    for audience, size in ((stored, 5), (live, 9)):
        with _statements(client) as executed:
            page = tenant.ok("GET", f"/v4/audiences/{audience['id']}", params={"limit": 2})
        assert page["pagination"]["total"] == sizes[audience["id"]] == size
        said = [" ".join(sql.lower().split()) for sql in executed]
        by_contacts = [
            sql for sql in said if sql.startswith("select count(*) as count_1 from contacts")
        ]
        by_memberships = [
            sql for sql in said if sql.startswith("select memberships.audience_id, count(")
        ]
        if audience is stored:
            assert by_memberships and not by_contacts, said
        else:
            assert by_contacts, said


def test_a_large_audience_is_paged_by_walking_the_list_and_pages_alike(on_both: Tenant) -> None:
    """A page of a stored audience dense enough in its list, in the list's own order, reads
    the list's first contacts in that order up to a bound, testing each (`EXISTS`), so the
    rank index is left at the page's last member; when the bound comes first (the audience
    sits at the other end of the order), the page sorts its members after all (`IN`), as a
    small audience, a deep page or another order does at once. Every form gives the same
    pages: each is the slice of the sorted whole, ties on points and positions included."""
    lst = on_both.new_list()
    for index in range(40):
        on_both.new_contact(lst["id"], f"w{index:02}@example.com", points=index // 2)
    audiences = {
        "spread": smart(on_both, lst["id"], {"points": {"gte": 4}}, name="spread"),  # 32 of 40
        "bottom": smart(on_both, lst["id"], {"points": {"lt": 11}}, name="bottom"),  # 22 of 40
        "small": smart(on_both, lst["id"], {"points": {"gte": 18}}, name="small"),  # 4 of 40
    }
    client = on_both.client
    forms: dict[tuple[str, str, int, int], tuple[str, ...]] = {}
    for name, audience in audiences.items():
        path = f"/v4/audiences/{audience['id']}"
        for order in ("desc", "asc"):
            whole = on_both.ok("GET", path, params={"limit": 100, "order": order})["audience"]
            emails = [sub["email"] for sub in whole["subs"]]
            positions = [sub["position"] for sub in whole["subs"]]
            for limit in (1, 2, 5):
                for page in range(1, -(-len(emails) // limit) + 2):
                    params = {"limit": limit, "page": page, "order": order}
                    with _statements(client) as executed:
                        answer = on_both.ok("GET", path, params=params)
                    subs, start = answer["audience"]["subs"], (page - 1) * limit
                    assert [sub["email"] for sub in subs] == emails[start:][:limit]
                    assert [sub["position"] for sub in subs] == positions[start:][:limit]
                    assert answer["pagination"]["total"] == len(emails)
                    said = [" ".join(sql.lower().split()) for sql in executed]
                    paging = [sql for sql in said if re.search(r"limit \S+ offset \S+$", sql)]
                    forms[name, order, limit, page] = tuple(map(_paging_form, paging))
    assert forms["spread", "desc", 1, 1] == ("walk",)
    assert forms["bottom", "asc", 1, 1] == ("walk",)
    assert forms["bottom", "desc", 1, 1] == ("walk", "sort")  # its bound met: sorted after all
    assert forms["spread", "desc", 5, 6] == ("sort",)  # too deep a page to walk
    assert all(form == ("sort",) for key, form in forms.items() if key[0] == "small")
    assert set(forms.values()) == {("walk",), ("walk", "sort"), ("sort",)}


def _paging_form(statement: str) -> str:
    """Whether a page's rows statement walks the list (`EXISTS` probes up to its bound-th
    contact's keys) or sorts the audience's members (`IN` them)."""
    if "exists (select" in statement:
        assert "(contacts.points, contacts.created_at, contacts.id) " in statement, statement
        return "walk"
    assert "in (select memberships.contact_id" in statement, statement
    return "sort"


def test_preview_counts_and_pages_without_saving(tenant: Tenant) -> None:
    lst = tenant.new_list()
    for index in range(5):
        tenant.new_contact(lst["id"], f"p{index}@example.com", points=index, country="FR")
    body = {"listId": lst["id"], "filters": '{"points": {"gte": 1}}'}
    preview = tenant.ok("POST", "/v4/audiences/preview", json=body)
    assert preview["count"] == 4
    assert preview["pagination"] == {"total": 4, "pages": 1, "currentPage": 1, "perPage": 100}
    assert [c["email"] for c in preview["contacts"]] == [f"p{i}@example.com" for i in (4, 3, 2, 1)]
    assert (preview["filters"], preview["filtersText"]) == ('{"points":{"gte":1}}', "points >= 1")
    assert preview["warnings"] == []
    second = tenant.ok("POST", "/v4/audiences/preview", params={"limit": 3, "page": 2}, json=body)
    assert [c["email"] for c in second["contacts"]] == ["p1@example.com"]
    assert second["count"] == 4
    assert tenant.ok("GET", "/v4/audiences", params={"listId": lst["id"]})["audiences"] == []

    text = tenant.ok(
        "POST",
        "/v4/audiences/preview",
        json={"listId": lst["id"], "filtersText": 'points < 2 and country = "FR"'},
    )
    assert text["count"] == 2 and text["filters"] == '{"points":{"lt":2},"country":{"equals":"FR"}}'
    assert rule_error(
        tenant, "POST", "/v4/audiences/preview", json={"filters": {"points": 1}}
    ) == rule_body("listId is required")
    assert rule_error(
        tenant, "POST", "/v4/audiences/preview", json={"listId": lst["id"]}
    ) == rule_body("Filters are required for smart mode")
    assert rule_error(
        tenant, "POST", "/v4/audiences/preview", json={"listId": lst["id"], "filters": "{}"}
    ) == {
        "error": "Filters cannot be empty for smart mode",
        "status": 400,
        "detail": "Filters cannot be empty for smart mode",
    }
    invalid = rule_error(
        tenant, "POST", "/v4/audiences/preview", json={"listId": lst["id"], "filters": {"x": 1}}
    )
    assert invalid["error"] == INVALID and invalid["details"][0]["path"] == "x"


def test_contacts_listing_takes_a_where_clause(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "ann@acme.com", points=10, country="FR")
    tenant.new_contact(lst["id"], "bob@acme.com", points=20, country="DE")
    tenant.new_contact(lst["id"], "cy@other.com", points=30, country="FR")

    def emails(**params: Any) -> list[str]:
        data = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], **params})
        return [contact["email"] for contact in data["contacts"]]

    assert emails(filters='{"country": "FR"}') == ["cy@other.com", "ann@acme.com"]
    assert emails(filters='{"country": "FR"}', email="ACME") == ["ann@acme.com"]
    assert emails(filters='{"OR": [{"points": {"lt": 15}}, {"country": "DE"}]}') == [
        "bob@acme.com",
        "ann@acme.com",
    ]
    assert emails(filters="{}") == emails(filters="  ") == emails()
    total = tenant.ok(
        "GET", "/v4/contacts", params={"listId": lst["id"], "filters": '{"points": {"gt": 10}}'}
    )["pagination"]["total"]
    assert total == 2
    body = rule_error(
        tenant,
        "GET",
        "/v4/contacts",
        params={"listId": lst["id"], "filters": '{"points": {"gte": "ten"}}'},
    )
    assert body["error"] == INVALID and body["details"][0]["path"] == "points.gte"
    assert rule_error(tenant, "GET", "/v4/contacts", params={"listId": lst["id"], "filters": "x"})[
        "details"
    ][0]["message"].startswith("invalid JSON")


BACKGROUND_THREADS = frozenset({"membership-due", "webhook-worker"})


@contextmanager
def _statements(client: ApiClient) -> Iterator[list[str]]:
    executed: list[str] = []

    def count(*args: Any) -> None:
        # The scheduler and the webhook worker query on their own turns: not the request's.
        if threading.current_thread().name not in BACKGROUND_THREADS:
            executed.append(args[2])

    engine = client.app.state.db.engine
    event.listen(engine, "before_cursor_execute", count)
    try:
        yield executed
    finally:
        event.remove(engine, "before_cursor_execute", count)


def test_statements_per_page_do_not_grow_with_page_size(
    app_factory: Callable[..., ApiClient],
) -> None:
    api = app_factory()
    tenant = make_tenant(api)
    lst = tenant.new_list()
    with api.app.state.db.transaction() as session:
        for index in range(60):
            email = f"s{index}@example.com"
            session.add(Contact(listId=lst["id"], email=email, emailKey=email, points=index % 7))
    ids = [
        c["id"] for c in tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"]})["contacts"]
    ]
    smart(tenant, lst["id"], {"points": {"gte": 3}}, name="a")
    smart(tenant, lst["id"], {"email": {"contains": "1"}}, name="b")
    hand = manual(tenant, lst["id"], name="c")
    tenant.ok("POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": ids[::2]})

    def statements(path: str, **params: Any) -> int:
        with _statements(api) as executed:
            data = tenant.ok("GET", path, params=params)
        assert data
        return len(executed)

    # Pages with more after them (a last page skips the count, whatever its size).
    for path, params, sizes in (
        ("/v4/contacts", {"listId": lst["id"]}, (5, 50)),
        (f"/v4/audiences/{hand['id']}", {}, (5, 25)),
    ):
        small, large = (statements(path, limit=size, **params) for size in sizes)
        assert small == large, path
        assert small <= 9, path  # key, list, rows, count, positions, audiences, members


def test_positions_of_sparse_pages_match_the_whole_list(
    app_factory: Callable[..., ApiClient],
) -> None:
    """Ties on points and sign-up time (only the id decides) and filtered pages that skip."""
    api = app_factory()
    tenant = make_tenant(api)
    lst = tenant.new_list(startFrom=10)
    same_time = datetime(2025, 1, 1, tzinfo=UTC)
    with api.app.state.db.transaction() as session:
        for index in range(30):
            email = f"t{index}@example.com"
            session.add(
                Contact(
                    listId=lst["id"],
                    email=email,
                    emailKey=email,
                    points=index % 4,
                    country="FR" if index % 3 == 0 else "DE",
                    createdAt=same_time if index % 2 else datetime(2024, 1, 1 + index, tzinfo=UTC),
                )
            )
    everyone = tenant.ok(
        "GET", "/v4/contacts", params={"listId": lst["id"], "sort": "position", "order": "asc"}
    )["contacts"]
    truth = {c["id"]: c["position"] for c in everyone}
    assert sorted(truth.values()) == list(range(10, 40))
    audience = smart(tenant, lst["id"], {"country": "FR"})
    pages = [
        tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "country": "fr", "limit": 3})[
            "contacts"
        ],
        tenant.ok(
            "GET",
            "/v4/contacts",
            params={"listId": lst["id"], "sort": "email", "page": 2, "limit": 7},
        )["contacts"],
        tenant.ok("GET", f"/v4/audiences/{audience['id']}", params={"limit": 4, "page": 2})[
            "audience"
        ]["subs"],
        [tenant.ok("GET", f"/v4/contacts/{everyone[17]['id']}")["contact"]],
    ]
    for page in pages:
        assert page and all(c["position"] == truth[c["id"]] for c in page)
