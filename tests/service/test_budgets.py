"""Filter budgets, decided when a filter arrives; a 503 only when the database is down.

Each test replays a defect an outside attack found: filters that validated but the engine could
not run (a 1,000-branch OR, too many bound variables), the CPU of a page with huge audiences.
"""

from __future__ import annotations

import json
import sqlite3
from typing import Any

import pytest
from sqlalchemy import create_engine, text
from sqlalchemy.exc import OperationalError

from audiencefilter import parse
from audiencefilter.language.visitor import missing_handlers
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import Audience
from audiencefilter.service.domain import filter_budget
from audiencefilter.service.domain.filter_budget import (
    FILTER_TOO_LARGE,
    LIST_MAX_CONDITIONS,
    LIST_MAX_LIVE_CONDITIONS,
    LIST_MAX_VALUES,
    LIST_TOO_LARGE,
    MAX_CONDITIONS,
    MAX_VALUES,
    Cost,
    cost_of,
)
from audiencefilter.service.domain.membership import store
from audiencefilter.service.ground.errors import AudienceRuleError
from audiencefilter.service.http.errors import is_outage

from .conftest import Tenant


def long_or(branches: int) -> dict[str, Any]:
    return {"OR": [{"points": {"equals": i}} for i in range(branches)]}


def long_in(values: int, start: int = 0) -> dict[str, Any]:
    return {"points": {"in": list(range(start, start + values))}}


def conditions(count: int) -> dict[str, Any]:
    """A filter of `count` conditions in all, shallow enough for any engine."""
    groups = [
        {"AND": [{"points": {"gte": i}}, {"points": {"lte": i + 1000}}]} for i in range(count // 3)
    ]
    return {"OR": [{"OR": groups[i : i + 50]} for i in range(0, len(groups), 50)]}


def create(tenant: Tenant, list_id: str, flt: dict[str, Any]) -> Any:
    body = {"name": "Big", "listId": list_id, "filters": json.dumps(flt)}
    return tenant.call("POST", "/v4/audiences", json=body)


def test_a_thousand_branch_or_is_refused_when_it_arrives(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "a@example.com", points=3)
    refused = create(tenant, lst["id"], long_or(1000))
    assert refused.status_code == 400, refused.text
    body = refused.json()
    assert body["message"] == FILTER_TOO_LARGE
    assert body["details"][0]["path"] == "OR"
    assert "nest" in body["details"][0]["message"]
    assert body["details"][0]["suggestion"]
    # nothing was stored: the list's audiences still read
    assert tenant.ok("GET", f"/v4/audiences?listId={lst['id']}")["audiences"] == []
    assert tenant.call("GET", f"/v4/contacts?listId={lst['id']}").status_code == 200
    # the same filter as a query of the contacts listing: a 400, never a 503
    query = tenant.call(
        "GET", "/v4/contacts", params={"listId": lst["id"], "filters": json.dumps(long_or(1000))}
    )
    assert query.status_code == 400 and query.json()["message"] == FILTER_TOO_LARGE
    # and through a PATCH and a preview
    audience = tenant.ok(
        "POST", "/v4/audiences", 201, json={"name": "S", "listId": lst["id"], "mode": "manual"}
    )["audience"]
    patch = {"mode": "smart", "filters": json.dumps(long_or(1000))}
    assert tenant.call("PATCH", f"/v4/audiences/{audience['id']}", json=patch).status_code == 400
    preview = {"listId": lst["id"], "filters": json.dumps(long_or(1000))}
    assert tenant.call("POST", "/v4/audiences/preview", json=preview).status_code == 400


def test_a_wide_or_within_the_budget_runs_on_sqlite(tenant: Tenant) -> None:
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "a@example.com", points=3)
    created = create(tenant, lst["id"], long_or(250))
    assert created.status_code == 201, created.text
    assert created.json()["data"]["audience"]["subs"][0]["email"] == "a@example.com"
    listing = tenant.ok("GET", f"/v4/audiences?listId={lst['id']}")["audiences"]
    assert [audience["subsCount"] for audience in listing] == [1]


def test_too_many_values_in_one_filter_are_refused(tenant: Tenant) -> None:
    lst = tenant.new_list()
    refused = create(tenant, lst["id"], long_in(MAX_VALUES + 1))
    assert refused.status_code == 400
    assert refused.json()["message"] == FILTER_TOO_LARGE
    assert f"budget is {MAX_VALUES}" in refused.json()["details"][0]["message"]


def test_the_list_budget_of_values_keeps_the_audience_listing_answering(tenant: Tenant) -> None:
    """25 audiences of 10,000-value lists made the listing exceed SQLite's bound variables."""
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "a@example.com", points=3)
    tries = LIST_MAX_VALUES // MAX_VALUES + 2
    statuses = [
        create(tenant, lst["id"], long_in(MAX_VALUES, start=n)).status_code for n in range(tries)
    ]
    allowed = LIST_MAX_VALUES // MAX_VALUES
    assert statuses == [201] * allowed + [400] * (tries - allowed)
    refused = create(tenant, lst["id"], long_in(10))
    assert refused.json()["message"] == LIST_TOO_LARGE
    assert f"budget is {LIST_MAX_VALUES}" in refused.json()["details"][0]["message"]
    listing = tenant.call("GET", f"/v4/audiences?listId={lst['id']}&limit=100")
    assert listing.status_code == 200
    sizes = [a["subsCount"] for a in listing.json()["data"]["audiences"]]
    assert sizes == [int(n <= 3) for n in reversed(range(allowed))]  # newest first; 3 points
    assert tenant.call("GET", f"/v4/contacts?listId={lst['id']}").status_code == 200
    # another list has its own budget
    assert create(tenant, tenant.new_list()["id"], long_in(10)).status_code == 201


def _relative(count: int) -> dict[str, Any]:
    """A filter of about `count` conditions that changes with time alone."""
    return {"AND": [{"createdAt": {"gte": {"ago": "P30D"}}}, conditions(count)]}


def test_the_list_budget_of_time_dependent_conditions_bounds_a_page_of_contacts(
    tenant: Tenant,
) -> None:
    """Ten audiences of about 4,900 branches made one page of contacts cost seconds of CPU: a
    page runs the filters that change with time alone on every row, so they have a budget."""
    lst = tenant.new_list()
    assert create(tenant, lst["id"], long_or(4900)).status_code == 400
    per_audience = cost_of(parse(_relative(MAX_CONDITIONS - 10))).conditions
    assert per_audience <= MAX_CONDITIONS
    statuses = [
        create(tenant, lst["id"], _relative(MAX_CONDITIONS - 10)).status_code for _ in range(10)
    ]
    allowed = LIST_MAX_LIVE_CONDITIONS // per_audience
    assert statuses == [201] * allowed + [400] * (10 - allowed)
    # Filters read from stored memberships are not run by pages: the list still takes them.
    assert create(tenant, lst["id"], conditions(MAX_CONDITIONS - 10)).status_code == 201


def test_the_list_budget_of_conditions_is_fifty_thousand() -> None:
    filter_budget.check_list(Cost(LIST_MAX_CONDITIONS - 10, 0, 1), Cost(10, 0, 1))
    with pytest.raises(AudienceRuleError) as refused:
        filter_budget.check_list(Cost(LIST_MAX_CONDITIONS - 10, 0, 1), Cost(11, 0, 1))
    assert f"budget is {LIST_MAX_CONDITIONS}" in str(refused.value.details)
    assert LIST_MAX_CONDITIONS >= 50_000


def test_an_update_is_measured_without_the_audience_s_own_old_filter(tenant: Tenant) -> None:
    lst = tenant.new_list()
    first = create(tenant, lst["id"], long_in(MAX_VALUES))
    create(tenant, lst["id"], long_in(MAX_VALUES, start=1))
    audience_id = first.json()["data"]["audience"]["id"]
    patch = {"filters": json.dumps(long_in(MAX_VALUES, start=7))}
    assert tenant.call("PATCH", f"/v4/audiences/{audience_id}", json=patch).status_code == 200


def test_conditions_of_one_filter_are_bounded(tenant: Tenant) -> None:
    lst = tenant.new_list()
    refused = create(tenant, lst["id"], conditions(MAX_CONDITIONS + 30))
    assert refused.status_code == 400
    assert f"budget is {MAX_CONDITIONS}" in refused.json()["details"][0]["message"]


def test_the_costing_visitor_handles_every_node_kind() -> None:
    """The budgets read the library's cost (`Filter.cost`), whose walker knows every kind."""
    from audiencefilter.language import cost

    assert missing_handlers(cost._Costing) == []


def _engine_error(statement: str) -> OperationalError:
    engine = create_engine("sqlite://")
    try:
        with engine.connect() as connection:
            connection.execute(text(statement))
    except OperationalError as exc:
        return exc
    finally:
        engine.dispose()
    raise AssertionError("the statement ran")


@pytest.mark.parametrize(
    "statement",
    [
        "SELECT " + " OR ".join(["1 = 1"] * 1200),  # Expression tree is too large
        "SELECT * FROM no_such_table",
    ],
)
def test_an_engine_refusing_a_statement_is_no_outage(statement: str) -> None:
    error = _engine_error(statement)
    assert isinstance(error.orig, sqlite3.OperationalError)
    assert not is_outage(error)


def test_a_locked_or_unreadable_sqlite_database_is_an_outage(tmp_path: Any) -> None:
    path = tmp_path / "missing-dir" / "db.sqlite"
    engine = create_engine(f"sqlite:///{path}")
    with pytest.raises(OperationalError) as raised:
        engine.connect()
    engine.dispose()
    assert is_outage(raised.value)


def test_audiences_stored_before_the_budgets_still_list(tenant: Tenant) -> None:
    """Filters over budget already in the database: the listing splits its counting statement."""
    lst = tenant.new_list()
    tenant.new_contact(lst["id"], "a@example.com", points=3)
    database: Database = tenant.client.app.state.db
    with database.transaction() as session:
        for n in range(8):
            canonical = parse(long_in(10_000, start=n)).to_json()
            audience = Audience(listId=lst["id"], name=f"Old {n}", mode="smart", filters=canonical)
            session.add(audience)
            session.flush()
            # What migration 0004 does for the audiences it finds: store their members.
            store.refresh_audience(session, audience, "audience.created")
    listing = tenant.call("GET", f"/v4/audiences?listId={lst['id']}&limit=100")
    assert listing.status_code == 200, listing.text
    counts = {a["name"]: a["subsCount"] for a in listing.json()["data"]["audiences"]}
    assert counts == {f"Old {n}": int(n <= 3) for n in range(8)}
    page = tenant.ok("GET", f"/v4/contacts?listId={lst['id']}")
    assert len(page["contacts"][0]["audiences"]) == 4
