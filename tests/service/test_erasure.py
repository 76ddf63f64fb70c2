"""A contact erased leaves its personal data nowhere; its export holds everything kept of it.

Replay of a finding: deleting a contact was no erasure. The feed still served its e-mail in
`contact.created` and `contact.deleted`, and redelivering an old webhook delivery sent it
again. Here a contact with a distinctive e-mail and data enters audiences, gets actions,
events, webhook deliveries (one delivered to a real receiver) and `Idempotency-Key` records
(a private create, a public sign-up, an action); then it is erased, and every row of every
table of the database (reflected, so a table added later is searched too) is read and searched
for the e-mail, its case-folded form and the contact's data and field values, on SQLite and
PostgreSQL: none is found. Audience sizes and the members at an earlier instant stay what they
were, the erased contact counted there as its opaque id.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import column, inspect, select, table

from audiencefilter.service import create_app
from audiencefilter.service.domain.webhooks.worker import WebhookWorker
from audiencefilter.service.ground import clock
from drills.receiver import Receiver
from tests.waiting import wait_until

from .audience_helpers import manual, smart
from .conftest import ApiClient, Tenant, make_tenant, settings_on

EMAIL = "Zelda.Quernwhistle+Erase@Example.ORG"
PERSONAL = {
    "firstName": "Zeldarune",
    "lastName": "Quernwhistle",
    "company": "Blorptastic Widgets",
    "city": "Frobnitzburg",
}
DATA = {"nickname": "quixotic-heron-51", "tags": ["umbrella-zx9"], "pet": {"name": "Gorbflax"}}
NEEDLES = (
    EMAIL,
    EMAIL.casefold(),
    EMAIL.lower(),
    "quernwhistle",  # the e-mail's local part, whatever the case or escaping
    *PERSONAL.values(),
    "quixotic-heron-51",
    "umbrella-zx9",
    "Gorbflax",
)
ALL_TYPES = [
    "audience.entered",
    "audience.left",
    "contact.created",
    "contact.updated",
    "contact.deleted",
    "contact.erased",
    "audience.created",
    "audience.updated",
    "audience.deleted",
]


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiClient]:
    settings = settings_on(
        request,
        tmp_path / "erasure.db",
        membership_sweep_seconds=0,
        webhook_allowed_networks=["127.0.0.1/32"],
        webhook_worker=False,
        webhook_retry_base_seconds=0.02,
        webhook_retry_cap_seconds=0.1,
        webhook_timeout_seconds=5,
    )
    api = ApiClient(create_app(settings))
    yield api
    api.close()


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    made = Receiver()
    yield made
    made.close()


def _worker(api: ApiClient) -> WebhookWorker:
    return api.app.state.webhook_worker  # type: ignore[no-any-return]


def _deliver(api: ApiClient, receiver: Receiver, count: int) -> None:
    """Runs the worker until the receiver got `count` requests."""
    wait_until(
        lambda: len(receiver.snapshot()) >= count, "the deliveries", step=_worker(api).run_once
    )


def found_anywhere(api: ApiClient, needles: tuple[str, ...] = NEEDLES) -> list[str]:
    """Every (table, needle) whose rows hold the needle, searched case-folded in each row's
    text: every table of the database, reflected, every row read whole."""
    engine = api.app.state.db.engine
    hits = []
    folded = [needle.casefold() for needle in needles]
    with engine.connect() as connection:
        names = inspect(connection).get_table_names()
        assert {"contacts", "events", "webhook_deliveries", "idempotency_keys"} <= set(names)
        for name in names:
            columns = [column["name"] for column in inspect(connection).get_columns(name)]
            rows = connection.execute(select(table(name, *(column(c) for c in columns)))).all()
            text = "\n".join(_row_text(row) for row in rows).casefold()
            hits.extend(f"{name}: {needle}" for needle in folded if needle in text)
    return hits


def _row_text(row: Any) -> str:
    """A row as text, JSON values both as Python shows them and as JSON with its escapes
    undone, so an e-mail kept inside a JSON document is found whatever the driver returns."""
    parts = []
    for value in row:
        parts.append(str(value))
        if isinstance(value, dict | list):
            parts.append(json.dumps(value, ensure_ascii=False))
        elif isinstance(value, str) and value[:1] in "[{":
            try:
                parts.append(json.dumps(json.loads(value), ensure_ascii=False))
            except ValueError:
                pass
    return " ".join(parts)


def _feed(tenant: Tenant, list_id: str) -> list[dict[str, Any]]:
    params = {"listId": list_id, "limit": 1000}
    return tenant.ok("GET", "/v4/events", params=params)["events"]  # type: ignore[no-any-return]


def _members(tenant: Tenant, audience_id: str, **params: Any) -> list[str]:
    page = tenant.ok("GET", f"/v4/audiences/{audience_id}/members", params=params)
    return [member["contactId"] for member in page["members"]]


Scene = dict[str, Any]


def _scene(api: ApiClient, receiver: Receiver) -> Scene:
    """The contact to erase, everywhere the service keeps something of it, beside another."""
    tenant = make_tenant(api)
    lst = tenant.new_list(publicFields=["firstName"])["id"]
    hook = {"listId": lst, "url": receiver.url, "eventTypes": ALL_TYPES}
    hook_id = tenant.ok("POST", "/v4/webhooks", 201, json=hook)["webhook"]["id"]
    rich = smart(tenant, lst, {"points": {"gte": 10}}, name="rich")
    # A filter names no needle: an audience's definition is the list's, never rewritten.
    nicknamed = smart(tenant, lst, {"company": {"contains": "Blorp"}}, name="blorp")
    hand = manual(tenant, lst, name="hand")
    body = {"email": EMAIL, "listId": lst, **PERSONAL, "data": DATA}
    created = tenant.call("POST", "/v4/contacts", json=body, headers={"Idempotency-Key": "c-1"})
    assert created.status_code == 201, created.text
    contact = created.json()["data"]["contact"]
    kept = tenant.new_contact(lst, "keeper@example.com", points=50, data={"nickname": "k"})
    sign_up = {"email": EMAIL.upper(), "listId": lst, "firstName": PERSONAL["firstName"]}
    public = {**tenant.public_headers, "Idempotency-Key": "s-1"}
    assert tenant.client.post("/v4/contacts", json=sign_up, headers=public).status_code == 201
    action = {"name": "referred", "increase": 20, "subId": contact["id"]}
    tenant.ok("POST", "/v4/actions", 201, json=action, headers={"Idempotency-Key": "a-1"})
    tenant.ok("PATCH", f"/v4/contacts/{contact['id']}", json={"city": PERSONAL["city"]})
    tenant.ok("POST", f"/v4/audiences/{hand['id']}/members", json={"contactIds": [contact["id"]]})
    events = _feed(tenant, lst)
    _deliver(api, receiver, len(events))
    assert any(EMAIL in received.body.decode() for received in receiver.snapshot())
    return {
        "tenant": tenant,
        "list": lst,
        "hook": hook_id,
        "contact": contact["id"],
        "kept": kept["id"],
        "audiences": [rich["id"], nicknamed["id"], hand["id"]],
        "body": body,
    }


def test_an_erased_contact_leaves_its_data_in_no_table(api: ApiClient, receiver: Receiver) -> None:
    scene = _scene(api, receiver)
    tenant, lst, contact_id = scene["tenant"], scene["list"], scene["contact"]
    audiences = scene["audiences"]
    assert found_anywhere(api), "the scene must leave the data somewhere to begin with"
    members_before = {a: _members(tenant, a) for a in audiences}
    assert all(contact_id in members for members in members_before.values())
    time.sleep(0.01)
    before = clock.now().isoformat()
    time.sleep(0.01)

    erased = tenant.ok("POST", f"/v4/lists/{lst}/contacts/{contact_id}/erase")["erasure"]
    assert erased["deleted"] is True and erased["contactId"] == contact_id
    assert erased["events"] == 2 and erased["deliveries"] == 1 and erased["answers"] == 3

    # Redelivering every old delivery sends nothing erased.
    deliveries = tenant.ok("GET", f"/v4/webhooks/{scene['hook']}/deliveries")["deliveries"]
    sent = len(receiver.snapshot())
    for delivery in deliveries:
        path = f"/v4/webhooks/{scene['hook']}/deliveries/{delivery['id']}/redeliver"
        tenant.ok("POST", path, 202)
    _deliver(api, receiver, sent + len(deliveries) + 1)  # the erasure's events come too
    resent = [received.body.decode() for received in receiver.snapshot()[sent:]]
    sent_again = "\n".join(resent).casefold()
    assert [needle for needle in NEEDLES if needle.casefold() in sent_again] == []

    assert found_anywhere(api) == []
    assert found_anywhere(api, ("keeper@example.com",)) != []  # the other contact stays

    # The feed keeps the contact's events, as an id, and says it was erased.
    mine = [event for event in _feed(tenant, lst) if event["contactId"] == contact_id]
    kinds = [event["type"] for event in mine]
    assert kinds[0] == "contact.created" and kinds[-2:] == ["contact.deleted", "contact.erased"]
    for event in mine:
        if event["type"] in ("contact.created", "contact.deleted"):
            assert event["data"] == {"email": None, "erased": True}

    # Sizes now and the members at an earlier instant stay consistent.
    for audience in audiences:
        assert _members(tenant, audience, at=before) == members_before[audience]
        assert _members(tenant, audience) == [
            member for member in members_before[audience] if member != contact_id
        ]
    assert scene["kept"] in _members(tenant, audiences[0])

    # A retry of the request that created the contact replays, erased, and creates nothing.
    again = tenant.call(
        "POST", "/v4/contacts", json=scene["body"], headers={"Idempotency-Key": "c-1"}
    )
    assert again.status_code == 201 and again.headers["Idempotent-Replayed"] == "true"
    assert again.json()["data"]["contact"] == {"id": contact_id, "listId": lst, "erased": True}
    listed = tenant.ok("GET", "/v4/contacts", params={"listId": lst})["contacts"]
    assert [contact["id"] for contact in listed] == [scene["kept"]]
    assert found_anywhere(api) == []

    # Erasing again changes nothing; another account's erasure finds nothing.
    twice = tenant.ok("POST", f"/v4/lists/{lst}/contacts/{contact_id}/erase")["erasure"]
    assert twice["deleted"] is False and twice["deliveries"] == 2
    other = make_tenant(api)
    path = f"/v4/lists/{lst}/contacts/{contact_id}/erase"
    assert other.call("POST", path).status_code == 404
    unknown = f"/v4/lists/{lst}/contacts/con_00000000000000000000/erase"
    assert tenant.call("POST", unknown).status_code == 404


def test_a_contact_deleted_earlier_is_erased_too(api: ApiClient, receiver: Receiver) -> None:
    scene = _scene(api, receiver)
    tenant, lst, contact_id = scene["tenant"], scene["list"], scene["contact"]
    tenant.ok("DELETE", f"/v4/contacts/{contact_id}")
    assert found_anywhere(api) != []  # a deletion is no erasure
    erased = tenant.ok("POST", f"/v4/lists/{lst}/contacts/{contact_id}/erase")["erasure"]
    assert erased["deleted"] is False and erased["events"] == 2
    assert found_anywhere(api) == []
    exported = tenant.ok("GET", f"/v4/lists/{lst}/contacts/{contact_id}/export")["export"]
    assert exported["contact"] is None and exported["actions"] == []
    assert exported["events"][-1]["type"] == "contact.erased"


def test_the_export_holds_everything_kept_of_the_contact(
    api: ApiClient, receiver: Receiver
) -> None:
    scene = _scene(api, receiver)
    tenant, lst, contact_id = scene["tenant"], scene["list"], scene["contact"]
    exported = tenant.ok("GET", f"/v4/lists/{lst}/contacts/{contact_id}/export")["export"]
    contact = exported["contact"]
    assert contact["email"] == EMAIL and contact["data"] == DATA
    assert {key: contact[key] for key in PERSONAL} == PERSONAL
    assert [(a["name"], a["increase"]) for a in exported["actions"]] == [("referred", 20)]
    assert sorted(m["audienceId"] for m in exported["memberships"]) == sorted(scene["audiences"])
    kinds = [event["type"] for event in exported["events"]]
    assert kinds[0] == "contact.created" and exported["events"][0]["data"] == {"email": EMAIL}
    assert kinds.count("audience.entered") == 3 and "contact.updated" in kinds
    assert all(event["contactId"] == contact_id for event in exported["events"])
    # Nothing of another contact; nothing for another account.
    kept = scene["kept"]
    assert kept not in json.dumps(exported)
    other = make_tenant(api)
    assert other.call("GET", f"/v4/lists/{lst}/contacts/{contact_id}/export").status_code == 404
    public = tenant.call(
        "GET", f"/v4/lists/{lst}/contacts/{contact_id}/export", headers=tenant.public_headers
    )
    assert public.status_code == 403
