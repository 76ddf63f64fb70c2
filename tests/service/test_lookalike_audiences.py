"""Audiences of one list whose conditions only Python's `==` makes equal (`True == 1`): each
keeps its own members when the list's audiences are judged together on a contact write
(`plan.Together`, one `FilterSet`), and a contact's `data` changed from `true` to `1` is
written (SQLAlchemy writes an attribute only when the new value is not `==` the old one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .audience_helpers import member_emails, smart
from .conftest import ApiClient, Tenant, make_tenant, url_settings

VALUES: dict[str, Any] = {"t": True, "one": 1, "onef": 1.0, "f": False, "zero": 0, "negz": -0.0}
CONDITIONS = {
    "is true": {"data": {"path": ["optin"], "equals": True}},
    "is 1": {"data": {"path": ["optin"], "equals": 1}},
    "not false": {"data": {"path": ["optin"], "not": False}},
    "not 0": {"data": {"path": ["optin"], "not": 0}},
    "holds true": {"data": {"path": ["flags"], "array_contains": True}},
    "holds 1": {"data": {"path": ["flags"], "array_contains": 1}},
}
EXPECTED = {
    "is true": {"t"},
    "is 1": {"one", "onef"},
    "not false": {"t", "one", "onef", "zero", "negz"},
    "not 0": {"t", "f", "one", "onef"},
    "holds true": {"t"},
    "holds 1": {"one", "onef"},
}


def _members(tenant: Tenant, audiences: dict[str, str]) -> dict[str, set[str]]:
    return {
        name: {email.split("@")[0] for email in member_emails(tenant, audience_id)}
        for name, audience_id in audiences.items()
    }


def test_audiences_on_true_and_on_1_keep_their_own_members(tenant: Tenant) -> None:
    _scenario(tenant)


def test_on_postgresql(
    app_factory: Callable[..., ApiClient], pg_migrated_database: Callable[[], str]
) -> None:
    _scenario(make_tenant(app_factory(url_settings(pg_migrated_database(), auto_migrate=True))))


def _scenario(tenant: Tenant) -> None:
    """Audiences on `true` and on `1` (and their negations, and in an array), contacts of
    each lookalike value, then each contact's value changed to another's."""
    list_id = tenant.new_list()["id"]
    audiences = {
        name: smart(tenant, list_id, where, name)["id"] for name, where in CONDITIONS.items()
    }
    contacts = {
        key: tenant.new_contact(list_id, f"{key}@example.com", data={"optin": v, "flags": [v]})
        for key, v in VALUES.items()
    }
    assert _members(tenant, audiences) == EXPECTED

    # Each contact takes the value of another: the write judges every audience again.
    keys = list(VALUES)
    for key, after in zip(keys, keys[1:] + keys[:1], strict=True):
        value = VALUES[after]
        body = {"data": {"optin": value, "flags": [value]}}
        tenant.ok("PATCH", f"/v4/contacts/{contacts[key]['id']}", json=body)
    stored = tenant.ok("GET", f"/v4/contacts/{contacts['t']['id']}")["contact"]["data"]
    assert stored == {"optin": 1, "flags": [1]} and stored["optin"] is not True
    moved = {name: {keys[keys.index(k) - 1] for k in found} for name, found in EXPECTED.items()}
    assert _members(tenant, audiences) == moved
