"""An import's look-ups of its rows' contacts carry the e-mail keys in one bound parameter.

A turn of an import asks which of its rows' e-mails the list already has (`_existing`) and, on
PostgreSQL, first tries to lock those contacts and share the list's lock (`lock_existing`).
Both used an expanding `IN (:key_1, ..., :key_500)`: the driver bound, sent and parsed 500
parameters anew at every turn, a tenth of a bulk import's time on PostgreSQL. They now pass the
keys as one array (`dialects.ids_in`: `unnest` on PostgreSQL, `json_each` on SQLite). This test
counts the parameters of every statement that reads contacts by e-mail key during an import of
new rows then of the same rows again, and checks the answers, so a cheaper look-up cannot be a
wrong one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import event
from sqlalchemy.engine import Connection

from audiencefilter.service import create_app

from .conftest import BOTH_DATABASES, ApiClient, make_tenant, settings_on

ROWS = 300


@pytest.fixture(params=BOTH_DATABASES)
def api(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[ApiClient]:
    client = ApiClient(create_app(settings_on(request, tmp_path / "import.db")))
    yield client
    client.close()


def _parameters(parameters: Any) -> int:
    if isinstance(parameters, Mapping | Sequence) and not isinstance(parameters, str):
        return len(parameters)
    return 0


def test_an_imports_look_ups_by_email_bind_the_keys_once(api: ApiClient) -> None:
    tenant = make_tenant(api)
    list_id = tenant.new_list()["id"]
    look_ups: list[int] = []

    def executed(_: Connection, __: Any, statement: str, parameters: Any, *rest: Any) -> None:
        if "FROM contacts" in statement and "email_key" in statement:
            look_ups.append(_parameters(parameters))

    rows = [{"email": f"p{n}@example.com", "points": n} for n in range(ROWS)]
    engine = api.app.state.db.engine
    event.listen(engine, "before_cursor_execute", executed)
    try:
        query = f"/v4/contacts/import?listId={list_id}&mode=upsert"
        created = tenant.ok("POST", query, json=rows)
        updated = tenant.ok("POST", query, json=[{**row, "points": ROWS + 1} for row in rows])
    finally:
        event.remove(engine, "before_cursor_execute", executed)
    assert created["created"] == ROWS
    assert updated["updated"] == ROWS
    assert look_ups, "no look-up of the rows' contacts was seen"
    assert max(look_ups) <= 3, look_ups
