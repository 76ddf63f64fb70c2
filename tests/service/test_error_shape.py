"""Every error body has one shape: `error` is the HTTP status (a number) and `message` the
message (as `detail`), whether a key, a body, an unknown id, an audience rule or an invalid
filter refused the request. The audience rules once answered `error` as the message itself,
so a client had to tell two shapes apart; on SQLite and PostgreSQL alike."""

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


def _refusals(tenant: Tenant, lst: str) -> list[tuple[int, str, str, dict[str, Any]]]:
    """(status, method, path, body) of refusals of every kind."""
    return [
        (400, "POST", "/v4/audiences", {"listId": lst}),  # name and listId are required
        (400, "POST", "/v4/audiences", {"name": "x", "listId": lst, "filters": {}}),
        (400, "POST", "/v4/audiences/preview", {"listId": lst, "filters": {"pointz": 1}}),
        (400, "POST", "/v4/audiences/preview", {"listId": lst, "filtersText": "points >"}),
        (400, "POST", "/v4/contacts", {"listId": lst, "email": "not an email"}),
        (404, "GET", "/v4/audiences/aud_missing", {}),
    ]


def test_every_error_body_has_one_shape(tenant_on: Tenant) -> None:
    lst = tenant_on.new_list()["id"]
    for status, method, path, body in _refusals(tenant_on, lst):
        sent = {"json": body} if method != "GET" else {}
        response = tenant_on.call(method, path, **sent)
        assert response.status_code == status, (path, response.text)
        answer = response.json()
        assert type(answer["error"]) is int and answer["error"] == answer["status"] == status
        assert isinstance(answer["message"], str) and answer["message"] == answer["detail"]


def test_an_invalid_filter_keeps_its_problems_in_errors_and_details(tenant_on: Tenant) -> None:
    lst = tenant_on.new_list()["id"]
    body = {"listId": lst, "filters": {"points": {"gtee": 1}}}
    answer = tenant_on.call("POST", "/v4/audiences/preview", json=body).json()
    assert answer["error"] == 400 and answer["message"].startswith("Invalid filters")
    assert answer["errors"][0]["path"] == answer["details"][0]["path"] == "points.gtee"
