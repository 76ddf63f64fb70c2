"""The compare answer says whether each side can select anyone at all (`canMatch`), on SQLite
and PostgreSQL: a proof names the conditions that cannot hold together, and a side that can
match comes with an example contact it selects, so the builder can warn "can never match"
while a filter is edited."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af

from .audience_helpers import manual, smart
from .conftest import ApiClient, Tenant, make_tenant, settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def owner(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> Tenant:
    settings = settings_on(request, tmp_path / "can_match.db", membership_sweep_seconds=0)
    return make_tenant(app_factory(settings))


def _compare(tenant: Tenant, a: dict[str, Any], b: dict[str, Any], **body: Any) -> Any:
    return tenant.ok("POST", "/v4/audiences/compare", json={"a": a, "b": b, **body})


def test_a_filter_that_can_never_match_is_proved_and_blames_its_conditions(
    owner: Tenant,
) -> None:
    lst = owner.new_list()
    never = {"filtersText": "points > 10 AND points < 5"}
    found = _compare(owner, never, {"filtersText": "points >= 0"}, listId=lst["id"])
    a, b = found["canMatch"]["a"], found["canMatch"]["b"]
    assert a["holds"] is False and a["witness"] is None
    assert "points" in a["reason"] and "gt 10" in a["reason"] and "lt 5" in a["reason"]
    assert b["holds"] is True and b["witness"]["points"] >= 0
    assert af.parse({"points": {"gte": 0}}).matches(b["witness"])


def test_a_saved_audience_that_can_match_comes_with_a_contact_it_selects(owner: Tenant) -> None:
    lst = owner.new_list()
    high = smart(owner, lst["id"], {"points": {"gte": 10}}, "High")
    found = _compare(owner, {"audienceId": high["id"]}, {"filtersText": 'country = "FR"'})
    a, b = found["canMatch"]["a"], found["canMatch"]["b"]
    assert a["holds"] is True and a["witness"]["points"] >= 10
    assert b["holds"] is True and b["witness"]["country"] == "FR"


def test_a_manual_audience_is_not_decided(owner: Tenant) -> None:
    lst = owner.new_list()
    picked = manual(owner, lst["id"])
    found = _compare(owner, {"audienceId": picked["id"]}, {"filtersText": "points > 1"})
    a = found["canMatch"]["a"]
    assert a["holds"] is None and a["witness"] is None and "manual" in a["reason"]
    assert found["canMatch"]["b"]["holds"] is True
