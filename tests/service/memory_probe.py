"""`python -m tests.service.memory_probe N`: RSS growth of the app over N distinct large filters.

Runs the application in this process (on a temporary SQLite file, through the same ASGI client
as the service tests), previews a few large filters to warm up, then previews N filters whose
numeric `in` lists change length from one request to the next, each one new to every cache, and
prints one JSON object: the RSS before and after, in MB, and the number of requests. A child
process of its own, so that what earlier tests allocated does not blur the figure.

RSS is read from `/proc/self/statm` (resident pages), after a `gc.collect()` on both sides.
"""

from __future__ import annotations

import gc
import json
import os
import sys
import tempfile
from pathlib import Path

from audiencefilter.service import create_app

from .conftest import ApiClient, make_tenant, sqlite_settings

WARM_UP = 10
FIRST_LENGTH = 2_000
STEP = 7  # each request's list is 7 values longer: a new statement shape every time


def rss_mb() -> float:
    with open("/proc/self/statm", encoding="ascii") as statm:
        resident_pages = int(statm.read().split()[1])
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def large_filter(index: int) -> dict[str, object]:
    """The `index`-th distinct filter: a numeric `in` list of its own length."""
    return {"points": {"in": list(range(FIRST_LENGTH + index * STEP))}}


def measure(requests: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as folder:
        api = ApiClient(create_app(sqlite_settings(Path(folder) / "probe.db")))
        try:
            tenant = make_tenant(api)
            list_id = tenant.new_list()["id"]
            for number in range(5):
                tenant.new_contact(list_id, f"probe{number}@example.com", points=number)

            def preview(index: int) -> None:
                body = {"listId": list_id, "filters": large_filter(index)}
                response = tenant.call("POST", "/v4/audiences/preview?limit=10", json=body)
                assert response.status_code == 200, response.text

            for index in range(WARM_UP):
                preview(index)
            gc.collect()
            before = rss_mb()
            for index in range(WARM_UP, WARM_UP + requests):
                preview(index)
            gc.collect()
            after = rss_mb()
        finally:
            api.close()
    return {"requests": requests, "before_mb": before, "after_mb": after}


def long_statement(index: int) -> str:
    """The `index`-th distinct statement of about 20,000 characters: an `in` list of literals,
    a prepared program of about half a megabyte."""
    values = ", ".join(str(value) for value in range(5_000 + index))
    return f"SELECT count(*) FROM contacts WHERE points IN ({values})"


def measure_statements(statements: int) -> dict[str, float]:
    """RSS growth over `statements` distinct long statements run on the service's engine: what
    SQLite's prepared-statement cache keeps of them (`db/prepared_cache.py`)."""
    from sqlalchemy import text

    with tempfile.TemporaryDirectory() as folder:
        api = ApiClient(create_app(sqlite_settings(Path(folder) / "probe.db")))
        engine = api.app.state.db.engine
        try:
            for index in range(WARM_UP):
                with engine.connect() as connection:
                    connection.execute(text(long_statement(index))).all()
            gc.collect()
            before = rss_mb()
            for index in range(WARM_UP, WARM_UP + statements):
                with engine.connect() as connection:
                    connection.execute(text(long_statement(index))).all()
            gc.collect()
            after = rss_mb()
        finally:
            api.close()
    return {"requests": statements, "before_mb": before, "after_mb": after}


if __name__ == "__main__":
    if sys.argv[1] == "statements":
        print(json.dumps(measure_statements(int(sys.argv[2]))))
    else:
        print(json.dumps(measure(int(sys.argv[1]))))
