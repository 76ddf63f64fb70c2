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
