"""Issue 26, "one account's work stalls another's writes": heavy evaluation of an audience's
members runs outside the write transaction, an action reads none of its contact's history, and
creating an audience measures its filter once.

Every test here counts (calls, rows, statements, work done under the write lock); none times.
"""

from __future__ import annotations

from typing import Any

import pytest

from audiencefilter.service.domain import filter_budget

from .conftest import Tenant


def _count_costings(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each measure of a filter's cost appends to the list returned."""
    made: list[int] = []
    real = filter_budget._Costing

    class Counting(real):  # type: ignore[misc, valid-type]
        def __init__(self) -> None:
            made.append(1)
            super().__init__()

    monkeypatch.setattr(filter_budget, "_Costing", Counting)
    return made


def test_creating_a_smart_audience_measures_its_filter_once(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """It was measured three times: the budget of one filter, the weight of the cached stored
    form, and the budget of the list; the cost measured first now goes through."""
    list_id = tenant.new_list()["id"]
    costings = _count_costings(monkeypatch)
    where: dict[str, Any] = {"points": {"gte": 81731}, "email": {"endsWith": "@cost.example"}}
    body = {"listId": list_id, "name": "once", "mode": "smart", "filters": where}
    tenant.ok("POST", "/v4/audiences", 201, json=body)
    assert len(costings) == 1


def _give_actions(tenant: Tenant, contact_id: str, count: int) -> None:
    """`count` actions of the contact, written straight to the database (their points too)."""
    from audiencefilter.service.db.models import Action, Contact

    database = tenant.client.app.state.db
    with database.transaction() as session:
        session.add_all(Action(name="visit", increase=1, subId=contact_id) for _ in range(count))
        session.get(Contact, contact_id).points += count


def _count_action_rows(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The number of action rows each in-memory load of related rows brought into Python."""
    from audiencefilter.service.domain import relations

    loaded: list[int] = []
    real = relations.related_rows

    def counting(*args: Any, **kwargs: Any) -> Any:
        found = real(*args, **kwargs)
        loaded.append(sum(len(rows) for rows in found.get(relations.ACTIONS, {}).values()))
        return found

    monkeypatch.setattr(relations, "related_rows", counting)
    return loaded


def test_an_action_loads_none_of_its_contacts_history(
    tenant: Tenant, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each action reloaded every action of its contact to judge the list's behaviour
    audiences in memory (4x the cost at 1,000 actions); they are judged in SQL now."""
    list_id = tenant.new_list()["id"]
    contact = tenant.new_contact(list_id, "busy@example.com")
    _give_actions(tenant, contact["id"], 1000)
    regulars = {"name": "regulars", "listId": list_id, "filtersText": "count(actions) >= 1001"}
    audience = tenant.ok("POST", "/v4/audiences", 201, json=regulars)["audience"]
    loaded = _count_action_rows(monkeypatch)
    action = {"name": "visit", "increase": 1, "subId": contact["id"]}
    tenant.ok("POST", "/v4/actions", 201, json=action)
    assert sum(loaded) == 0
    members = tenant.ok("GET", f"/v4/audiences/{audience['id']}")["audience"]["subs"]
    assert [member["id"] for member in members] == [contact["id"]]
