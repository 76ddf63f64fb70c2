"""The error bodies as the interface writes them, read from the interface itself.

The interface (`interface.md`, beside the repository as `../shared/spec/interface.md`, or
where `AUDIENCEFILTER_INTERFACE_SPEC` says) has two forms of error body. Its schema's: `error`
an integer and `message` a string. And for the audience rules it lists under "Errors" a string
form: `error` holds the message and there is no `message`. Every message it lists in that form
is provoked here through each operation that can refuse with it, and its body must be that
form (the envelope's `status`, `detail`, `errors` and deprecated `details` may stand beside
it, nothing else); a message the interface adds without a way to provoke it here fails the
test, so the contract cannot grow past it unseen. The schema's form is checked where the
interface shows it: a 400 and a 401 of the contacts listing.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from .conftest import Tenant

REPOSITORY = Path(__file__).resolve().parents[2]
SPEC = Path(
    os.environ.get("AUDIENCEFILTER_INTERFACE_SPEC")
    or REPOSITORY.parent / "shared" / "spec" / "interface.md"
)
# What the envelope may add beside the interface's string form.
ENVELOPE = {"status", "detail", "errors", "details"}


def _interface() -> str:
    if not SPEC.is_file():
        if os.environ.get("CI"):
            pytest.fail(f"the interface is not at {SPEC}; set AUDIENCEFILTER_INTERFACE_SPEC")
        pytest.skip(f"the interface is not at {SPEC} (set AUDIENCEFILTER_INTERFACE_SPEC)")
    return SPEC.read_text(encoding="utf-8")


def _section(text: str, title: str) -> str:
    found = re.search(rf"^## {title}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert found, f"the interface has no section {title!r}"
    return found.group(1)


@dataclass(frozen=True)
class Named:
    """A message the interface names in the string form: exact (in backquotes), or described
    (`an invalid-filters message stating that ...`): then the body's message says `words`."""

    words: str
    exact: bool

    def said_by(self, message: str) -> bool:
        return message == self.words if self.exact else self.words in message


def string_form_messages(text: str) -> list[Named]:
    """The messages of the "Errors" section's string form: the bullets under the item that
    says `error` is a string holding the message."""
    errors = _section(text, "Errors")
    item = re.search(r"^\d+\. .*`error` as a string.*?\n((?:\s+- .*\n)+)", errors, re.MULTILINE)
    assert item, "the interface's Errors section lists no messages in the string form"
    named = []
    for bullet in re.findall(r"^\s+- (.*)$", item.group(1), re.MULTILINE):
        exact = re.fullmatch(r"`([^`]+)`", bullet.strip())
        described = re.search(r"stating that (.+?)\.?$", bullet)
        assert exact or described, f"cannot read the interface's message {bullet!r}"
        named.append(Named(exact.group(1), True) if exact else Named(described.group(1), False))
    return named


def messages_of_rules(text: str) -> set[str]:
    """The messages the endpoints' rules reject with (`rejected with the message `...``,
    `(message `...`)`), anywhere in the interface."""
    return set(re.findall(r"(?:with the message|\(message) `([^`]+)`", text))


Call = tuple[str, str, dict[str, Any]]  # method, path, httpx keyword arguments


def _audiences(tenant: Tenant) -> tuple[str, str, str]:
    """A list, a smart audience and a manual audience of it."""
    list_id = tenant.new_list()["id"]
    body = {"name": "Smart", "listId": list_id, "filters": {"points": {"gte": 1}}}
    smart = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    body = {"name": "Manual", "listId": list_id, "mode": "manual"}
    manual = tenant.ok("POST", "/v4/audiences", 201, json=body)["audience"]["id"]
    return list_id, smart, manual


def _name_and_list(list_id: str, smart: str, manual: str) -> list[Call]:
    return [
        ("POST", "/v4/audiences", {"json": {"listId": list_id, "filters": {"points": 1}}}),
        ("POST", "/v4/audiences", {"json": {"name": "No list", "mode": "manual"}}),
        ("POST", "/v4/audiences", {"json": {"name": "", "listId": list_id}}),
        ("POST", "/v4/audiences", {"json": {}}),
    ]


def _required(list_id: str, smart: str, manual: str) -> list[Call]:
    return [
        ("POST", "/v4/audiences", {"json": {"name": "S", "listId": list_id, "mode": "smart"}}),
        ("PATCH", f"/v4/audiences/{manual}", {"json": {"mode": "smart"}}),
        ("POST", "/v4/audiences/preview", {"json": {"listId": list_id}}),
    ]


def _empty(list_id: str, smart: str, manual: str) -> list[Call]:
    body = {"name": "S", "listId": list_id, "mode": "smart"}
    return [
        ("POST", "/v4/audiences", {"json": {**body, "filters": "{}"}}),
        ("POST", "/v4/audiences", {"json": {**body, "filters": {}}}),
        ("PATCH", f"/v4/audiences/{smart}", {"json": {"filters": ""}}),
        ("PATCH", f"/v4/audiences/{smart}", {"json": {"filtersText": " "}}),
        ("POST", "/v4/audiences/preview", {"json": {"listId": list_id, "filters": {}}}),
    ]


def _invalid(list_id: str, smart: str, manual: str) -> list[Call]:
    body = {"name": "S", "listId": list_id}
    return [
        ("POST", "/v4/audiences", {"json": {**body, "filters": '{"points": '}}),
        ("POST", "/v4/audiences", {"json": {**body, "filters": {"pointz": {"gte": 1}}}}),
        ("POST", "/v4/audiences", {"json": {**body, "filtersText": "points >="}}),
        ("PATCH", f"/v4/audiences/{smart}", {"json": {"filters": {"points": {"gtee": 1}}}}),
        ("PATCH", f"/v4/audiences/{manual}", {"json": {"filters": "[1]"}}),
        ("POST", "/v4/audiences/preview", {"json": {"listId": list_id, "filters": {"x": 1}}}),
        ("GET", "/v4/contacts", {"params": {"listId": list_id, "filters": '{"pointz": 1}'}}),
    ]


# How to provoke each message the interface names, through every operation that can refuse
# with it: by the message's words (an exact message, or the words a described one says).
PROVOKED: dict[str, Callable[[str, str, str], list[Call]]] = {
    "Name and listId are required": _name_and_list,
    "Filters are required for smart mode": _required,
    "Filters cannot be empty for smart mode": _empty,
    "the value must be a valid where clause for the contact model": _invalid,
}


def _string_form_problems(named: Named, call: Call, status: int, body: Any) -> list[str]:
    where = f"{call[0]} {call[1]} {call[2]}"
    if status != 400:
        return [f"{where}: status {status}, the interface says 400"]
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, str) or not named.said_by(error):
        return [f"{where}: `error` is {error!r}, the interface says the message {named.words!r}"]
    extra = set(body) - {"error"} - ENVELOPE
    return [f"{where}: fields beside the string `error`: {sorted(extra)}"] if extra else []


def test_the_interface_names_messages_in_the_string_form() -> None:
    text = _interface()
    named = string_form_messages(text)
    assert len(named) >= 4, named
    exact = {message.words for message in named if message.exact}
    assert messages_of_rules(text) <= exact, messages_of_rules(text) - exact


def test_every_message_of_the_string_form_is_answered_as_the_interface_writes_it(
    tenant: Tenant,
) -> None:
    named = string_form_messages(_interface())
    unprovoked = [message.words for message in named if message.words not in PROVOKED]
    assert not unprovoked, f"the interface names messages this test cannot provoke: {unprovoked}"
    ids = _audiences(tenant)
    problems = []
    for message in named:
        for call in PROVOKED[message.words](*ids):
            response = tenant.call(call[0], call[1], **call[2])
            problems += _string_form_problems(message, call, response.status_code, response.json())
    assert not problems, "\n".join(problems)


def _schema_form(response: Any, status: int) -> None:
    assert response.status_code == status, response.text
    body = response.json()
    assert type(body["error"]) is int and isinstance(body["message"], str), body
    assert body["message"], body


def test_the_contacts_listing_answers_the_schema_form(tenant: Tenant) -> None:
    """A 400 and a 401 of the contacts listing: `error` an integer, `message` a string."""
    list_id = tenant.new_list()["id"]
    _schema_form(tenant.call("GET", "/v4/contacts"), 400)  # no listId
    _schema_form(tenant.call("GET", "/v4/contacts", params={"listId": list_id, "limit": 0}), 400)
    _schema_form(
        tenant.call("GET", "/v4/contacts", params={"listId": list_id, "limit": 20001}), 400
    )
    wrong_key = {"apiKey": "afk_priv_not_a_key"}
    _schema_form(
        tenant.call("GET", "/v4/contacts", params={"listId": list_id}, headers=wrong_key), 401
    )
    _schema_form(tenant.client.request("GET", "/v4/contacts", params={"listId": list_id}), 401)
