"""A compare's work is bounded by the service's budget of algebra steps (`ANALYSIS_STEPS` over
its five questions), on SQLite and PostgreSQL: a filter of 80 two-way ORs, well within the
budget of one filter, once made one compare judge millions of conditions for 15 s and more.
The work is counted apart from the budget (tests/test_algebra_bounded.py), in the process that
answers, and stops the search past the bound."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from audiencefilter.service.domain.filter_budget import ANALYSIS_STEPS, QUESTION_STEPS
from tests.test_algebra_bounded import _counting, _PastTheBound, _Work

from .conftest import BOTH_DATABASES, ApiClient, Tenant, make_tenant, module_app

WIDE = " AND ".join(f"(points > {i} OR referrals < {i})" for i in range(80))


@pytest.fixture(scope="module", params=BOTH_DATABASES)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    """One app a database for the module: each test compares on a list of its own."""
    with module_app(
        request, tmp_path_factory, "compare_bounded", membership_sweep_seconds=0
    ) as client:
        yield client


@pytest.fixture
def owner(api: ApiClient) -> Tenant:
    return make_tenant(api)


@pytest.mark.parametrize("other", ["points >= 3", WIDE, 'country = "FR"'])
@pytest.mark.parametrize("wide_first", [True, False])
def test_a_compare_of_long_ors_stays_within_its_steps(
    owner: Tenant, other: str, wide_first: bool
) -> None:
    lst = owner.new_list()["id"]
    sides = [{"filtersText": WIDE}, {"filtersText": other}]
    a, b = sides if wide_first else sides[::-1]
    work = _Work(ANALYSIS_STEPS)
    with _counting(work):
        try:
            response = owner.call(
                "POST", "/v4/audiences/compare", json={"listId": lst, "a": a, "b": b}
            )
        except _PastTheBound as exc:
            pytest.fail(f"the compare is not bounded: {exc}")
    assert response.status_code == 200, response.text
    found = response.json()["data"]
    if found["relation"] == "unknown":
        assert f"within {QUESTION_STEPS:,} steps" in found["reason"]
    assert found["canMatch"]["a"]["holds"] is not False
