"""A `contains`, `startsWith` or `endsWith` operand longer than SQLite's LIKE pattern limit
(50,000 bytes) used to be a 500 ("LIKE or GLOB pattern too complex") on preview, on create and
on `GET /v4/contacts?filters=`, in every format that can say it. It selects as memory would, on
SQLite and on PostgreSQL alike (`tests/test_sql_long_patterns.py` covers the library)."""

from __future__ import annotations

import json
import random
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings, url_settings

# Digits: no letter case, so every format's case rule agrees. Drawn at random (seeded): a
# repeating needle over repeating text makes every engine's substring search quadratic.
NEEDLE = "".join(random.Random(50_001).choices("0123456789", k=50_001))
FORMS: dict[str, tuple[str | None, Any]] = {
    "json": (None, {"note": {"contains": NEEDLE}}),
    "json, insensitive": (None, {"note": {"startsWith": "x" + NEEDLE, "mode": "insensitive"}}),
    "json, suffix": (None, {"note": {"endsWith": NEEDLE + "y"}}),
    # The interop formats name no field inside JSON: a column, which no contact fills so long.
    "jsonlogic": ("jsonlogic", {"in": [NEEDLE, {"var": "email"}]}),
    "mongodb": ("mongodb", {"email": {"$regex": NEEDLE}}),
    "react-querybuilder": (
        "react-querybuilder",
        {
            "combinator": "and",
            "rules": [{"field": "email", "operator": "beginsWith", "value": "x" + NEEDLE}],
        },
    ),
    "sql": ("sql", f"email LIKE '%{NEEDLE}%'"),
    "text": ("text", f'note contains "{NEEDLE}"'),
}


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def tenant(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Tenant]:
    if request.param == "sqlite":
        settings = sqlite_settings(tmp_path / "long.db", membership_sweep_seconds=0)
    else:
        pg_migrated_database: Callable[[], str] = request.getfixturevalue("pg_migrated_database")
        settings = url_settings(
            pg_migrated_database(), auto_migrate=True, membership_sweep_seconds=0
        )
    client = ApiClient(create_app(settings))
    yield make_tenant(client)
    client.close()


def _seeded(tenant: Tenant) -> str:
    lst: str = tenant.new_list()["id"]
    tenant.ok("POST", f"/v4/lists/{lst}/fields", 201, json={"key": "note", "type": "string"})
    tenant.new_contact(lst, "long@example.com", data={"note": "x" + NEEDLE + "y"})
    tenant.new_contact(lst, "short@example.com", data={"note": "x" + NEEDLE[1:] + "y"})
    return lst


def _body(lst: str, form: str) -> dict[str, Any]:
    written_in, rule = FORMS[form]
    if written_in == "text":
        return {"listId": lst, "filtersText": rule}
    return {"listId": lst, "filters": rule, **({"filtersFormat": written_in} if written_in else {})}


def test_a_long_operand_selects_on_every_surface_in_every_format(tenant: Tenant) -> None:
    lst = _seeded(tenant)
    for form in FORMS:
        body = _body(lst, form)
        preview = tenant.ok("POST", "/v4/audiences/preview", json=body)
        found = ["long@example.com"] if form in ("json", "text") or "," in form else []
        assert [c["email"] for c in preview["contacts"]] == found, form
        created = tenant.ok(
            "POST", "/v4/audiences", 201, json={**body, "name": form, "mode": "smart"}
        )
        audience = tenant.ok("GET", f"/v4/audiences/{created['audience']['id']}")["audience"]
        assert [c["email"] for c in audience["subs"]] == found, form
    for params in (
        {"filters": json.dumps({"note": {"contains": NEEDLE}})},
        {"filtersText": f'note starts with "x{NEEDLE}"'},
    ):
        listed = tenant.ok("GET", "/v4/contacts", params={"listId": lst, **params})
        assert [c["email"] for c in listed["contacts"]] == ["long@example.com"]
