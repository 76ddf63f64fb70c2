"""Every error body has one of the interface's two forms, in the one envelope (`status`,
`detail`): the audience rules the interface names (and an invalid filter) answer `error` as
the message itself with no `message`; every other refusal, a key, a body, an unknown id or a
rule of the service's own, answers `error` the HTTP status (a number) and `message` the
message. On SQLite and PostgreSQL alike; tests/service/test_interface_errors.py reads the
rules of the first form from the interface."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from .conftest import ApiClient, Tenant, make_tenant, settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def tenant_on(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    api = app_factory(settings_on(request, tmp_path / "errors.db", membership_sweep_seconds=0))
    return make_tenant(api)


def _refusals(lst: str) -> list[tuple[int, bool, str, str, dict[str, Any]]]:
    """(status, whether in the string form, method, path, body) of refusals of every kind."""
    return [
        (400, True, "POST", "/v4/audiences", {"listId": lst}),  # name and listId are required
        (400, True, "POST", "/v4/audiences", {"name": "x", "listId": lst, "filters": {}}),
        (400, True, "POST", "/v4/audiences/preview", {"listId": lst, "filters": {"pointz": 1}}),
        (400, True, "POST", "/v4/audiences/preview", {"listId": lst, "filtersText": "points >"}),
        (400, False, "POST", "/v4/audiences/preview", {"filters": {"points": 1}}),  # listId
        (400, False, "POST", "/v4/contacts", {"listId": lst, "email": "not an email"}),
        (404, False, "GET", "/v4/audiences/aud_missing", {}),
    ]


def test_every_error_body_has_the_form_of_its_refusal(tenant_on: Tenant) -> None:
    lst = tenant_on.new_list()["id"]
    for status, string_form, method, path, body in _refusals(lst):
        sent = {"json": body} if method != "GET" else {}
        response = tenant_on.call(method, path, **sent)
        assert response.status_code == status, (path, response.text)
        answer = response.json()
        assert answer["status"] == status and isinstance(answer["detail"], str), answer
        if string_form:
            assert answer["error"] == answer["detail"] and "message" not in answer, answer
        else:
            assert type(answer["error"]) is int and answer["error"] == status, answer
            assert answer["message"] == answer["detail"], answer


def test_an_invalid_filter_keeps_its_problems_in_errors_and_details(tenant_on: Tenant) -> None:
    lst = tenant_on.new_list()["id"]
    body = {"listId": lst, "filters": {"points": {"gtee": 1}}}
    answer = tenant_on.call("POST", "/v4/audiences/preview", json=body).json()
    assert answer["error"].startswith("Invalid filters") and "message" not in answer
    assert answer["errors"][0]["path"] == answer["details"][0]["path"] == "points.gtee"
