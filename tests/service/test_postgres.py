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
    app_factory: Callable[..., ApiClient], pg_database: Callable[[], str]
) -> None:
    settings = url_settings(pg_database(), auto_migrate=True)
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
def test_connections_keep_no_prepared_statements(pg_database: Callable[[], str]) -> None:
    """psycopg remembers each query's text (100 per connection) and prepares it server-side
    after a few runs; the service's filter statements are varied and large, so neither."""
    from sqlalchemy import text

    from audiencefilter.service.db.engine import make_engine

    engine = make_engine(url_settings(pg_database()))
    try:
        with engine.connect() as connection:
            for _ in range(10):
                connection.execute(text("SELECT 1 WHERE 1 = ANY(:v)"), {"v": [1, 2, 3]})
            prepared = connection.execute(text("SELECT count(*) FROM pg_prepared_statements"))
            assert prepared.scalar_one() == 0
            raw = connection.connection.dbapi_connection
            assert raw is not None and raw.prepare_threshold is None  # type: ignore[attr-defined]
    finally:
        engine.dispose()
