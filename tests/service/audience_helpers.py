"""Shortcuts for the audience tests: create audiences, read members and audience ids."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from .conftest import Tenant

AUDIENCE_KEYS = {
    "id",
    "name",
    "filters",
    "filtersText",
    "mode",
    "listId",
    "createdAt",
    "updatedAt",
    "subs",
    "status",  # "built", or "building" in the background (test_audience_builds.py)
    "progress",
    "experiment",  # null, or the experiment drawing its members' groups
}
SUMMARY_KEYS = AUDIENCE_KEYS - {"subs"} | {"subsCount"}
INVALID = "Invalid filters: the value must be a valid where clause for the contact model"


def new_audience(tenant: Tenant, list_id: str, name: str = "Audience", **body: Any) -> Any:
    """Create an audience; return the whole `data` (audience, pagination, warnings)."""
    return tenant.ok("POST", "/v4/audiences", 201, json={"name": name, "listId": list_id, **body})


def smart(tenant: Tenant, list_id: str, filters: Any, name: str = "Smart") -> dict[str, Any]:
    return new_audience(tenant, list_id, name, filters=filters)["audience"]  # type: ignore[no-any-return]


def manual(tenant: Tenant, list_id: str, name: str = "Manual") -> dict[str, Any]:
    return new_audience(tenant, list_id, name, mode="manual")["audience"]  # type: ignore[no-any-return]


def member_emails(tenant: Tenant, audience_id: str, **params: Any) -> list[str]:
    audience = tenant.ok("GET", f"/v4/audiences/{audience_id}", params=params)["audience"]
    return [contact["email"] for contact in audience["subs"]]


def members_on_each(tenants: Sequence[Tenant], audiences: list[list[str]]) -> list[list[list[str]]]:
    """Each audience's members (e-mails, sorted) on each of several applications: `audiences`
    holds each audience's ids, one an application, in the order of `tenants`."""
    found = []
    for ids in audiences:
        subs = [
            t.ok("GET", f"/v4/audiences/{i}")["audience"]["subs"]
            for t, i in zip(tenants, ids, strict=True)
        ]
        found.append([sorted(s["email"] for s in side) for side in subs])
    return found


def audience_ids(contact: dict[str, Any]) -> list[str]:
    return [item["id"] for item in contact["audiences"]]


def contact_audiences(tenant: Tenant, contact_id: str) -> list[str]:
    return audience_ids(tenant.ok("GET", f"/v4/contacts/{contact_id}")["contact"])


# The audience rules the interface answers in its string form (`error` the message, no
# `message`); tests/service/test_interface_errors.py reads them from the interface itself.
STRING_FORM = frozenset(
    {
        "Name and listId are required",
        "Filters are required for smart mode",
        "Filters cannot be empty for smart mode",
        INVALID,
    }
)


def rule_error(tenant: Tenant, method: str, path: str, **kwargs: Any) -> Any:
    """Call, expect a 400 in the form of its rule, return its body."""
    response = tenant.call(method, path, **kwargs)
    assert response.status_code == 400, response.text
    body = response.json()
    assert_rule_envelope(body)
    return body


def rule_message(body: dict[str, Any]) -> str:
    """The rule a 400 names, in either form of the interface."""
    message = body["error"] if isinstance(body["error"], str) else body["message"]
    assert isinstance(message, str)
    return message


def rule_body(message: str) -> dict[str, Any]:
    """The whole body of an audience rule without filter problems: the interface's string form
    for its own rules, the schema's form (`error` the status, `message`) for the others."""
    if message in STRING_FORM:
        return {"error": message, "status": 400, "detail": message}
    return {"error": 400, "message": message, "status": 400, "detail": message}


def assert_rule_envelope(body: dict[str, Any]) -> None:
    """The rules' refusal in the form of its rule: `error` the message with no `message` for
    the interface's rules, else `error` the status and `message` the rule; `status` and
    `detail` in both, and each of the deprecated `details` again in `errors`, pointed at its
    field."""
    message = rule_message(body)
    assert body["status"] == 400 and body["detail"] == message
    if message in STRING_FORM:
        assert "message" not in body, body
    else:
        assert body["error"] == 400, body
    details = body.get("details", [])
    errors = body.get("errors", [])
    assert [(e["path"], e["detail"]) for e in errors] == [
        (d["path"], d["message"]) for d in details
    ]
    for error, detail in zip(errors, details, strict=True):
        assert error["pointer"].startswith(("/body/filters", "/query/filters")), error
        for key in ("suggestion", "line", "column"):
            assert error.get(key) == detail.get(key)
