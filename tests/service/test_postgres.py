"""The service on PostgreSQL: the longest values the schemas allow fit the columns."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from pydantic import BaseModel

import audiencefilter as af
from audiencefilter.service.api.schemas.resources import ContactCreate, ListCreate
from audiencefilter.service.ground.fields import NO_NUL, ONE_LINE, PARAGRAPHS

from .conftest import ApiClient, make_tenant, url_settings

FREE_TEXT = (NO_NUL, ONE_LINE, PARAGRAPHS)


def _longest(model: type[BaseModel]) -> dict[str, Any]:
    """Every free-text field at its maximum length (patterned fields are set by the caller)."""
    values = {}
    for name, prop in model.model_json_schema()["properties"].items():
        for option in prop.get("anyOf", [prop]):
            if option.get("type") == "string" and "maxLength" in option:
                if option.get("pattern", NO_NUL) in FREE_TEXT:
                    values[name] = "é" * option["maxLength"]
    return values


@pytest.mark.postgres
def test_longest_allowed_values_fit_on_postgres(
    app_factory: Callable[..., ApiClient], pg_migrated_database: Callable[[], str]
) -> None:
    settings = url_settings(pg_migrated_database(), auto_migrate=True)
    api = app_factory(settings)
    tenant = make_tenant(api)
    zone = max(sorted(af.zone_names()), key=len)  # the longest name a list's zone may take
    list_body = {**_longest(ListCreate), "url": "a" * 64, "color": "#abcdef", "timeZone": zone}
    lst = tenant.ok("POST", "/v4/lists", 201, json=list_body)["list"]
    assert lst["legal"] == list_body["legal"]
    contact_body = {
        **_longest(ContactCreate),
        "email": "a" * 120 + "@" + "b" * 133,
        "listId": lst["id"],
        "points": 2**53 - 1,
        "referrals": 2**53 - 1,
        "data": {"big": 2**63 - 1, "small": -(2**63), "deep": [[[[1.5]]]]},
    }
    contact = tenant.ok("POST", "/v4/contacts", 201, json=contact_body)["contact"]
    assert contact["address"] == contact_body["address"]
    assert contact["data"] == contact_body["data"]
    assert contact["points"] == 2**53 - 1
    found = tenant.ok("GET", "/v4/contacts", params={"listId": lst["id"], "city": "É" * 10})[
        "contacts"
    ]
    assert [item["id"] for item in found] == [contact["id"]]


@pytest.mark.postgres
@pytest.mark.parametrize("prepared", [True, False])
def test_connections_prepare_statements_planned_once_alone_unless_told_not_to(
    pg_database: Callable[[], str], prepared: bool
) -> None:
    """psycopg remembers each query's text and prepares it server-side; the service prepares
    its short statements planned once alone (`db/prepared_cache.py`), and none with
    `DB_PREPARED_STATEMENTS=false` (a pooler in transaction mode that cannot keep them)."""
    from sqlalchemy import text

    from audiencefilter.service.db import prepared_cache
    from audiencefilter.service.db.engine import make_engine

    engine = make_engine(url_settings(pg_database(), db_prepared_statements=prepared))
    once = prepared_cache.planned_once(text("SELECT 1 WHERE 1 = ANY(:v)"))
    long_text = prepared_cache.planned_once(
        text("SELECT 2 WHERE 1 = ANY(:v)" + " " * prepared_cache.PREPARED_TEXT)
    )
    try:
        with engine.connect() as connection:
            for _ in range(10):
                connection.execute(once, {"v": [1, 2, 3]})
                connection.execute(long_text, {"v": [1, 2, 3]})
                connection.execute(text("SELECT 3 WHERE 1 = ANY(:v)"), {"v": [1, 2, 3]})
            held = connection.exec_driver_sql("SELECT statement FROM pg_prepared_statements")
            statements = [str(row[0]) for row in held]
            assert [s for s in statements if "ANY" in s] == (
                ["SELECT 1 WHERE 1 = ANY($1)"] if prepared else []
            )
            raw = connection.connection.dbapi_connection
            counted = raw._prepared._counts  # type: ignore[union-attr]  # psycopg's own
            assert not counted  # no text kept on the way to its threshold
    finally:
        engine.dispose()
