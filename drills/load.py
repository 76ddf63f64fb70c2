"""Read load with wrk: a 100-row page of contacts, and a smart audience with a 100-row page.

The list is seeded through the service's models (thousands of contacts in a second or two), on
the embedded SQLite database, the default deployment. wrk runs two threads and 20 connections
on 127.0.0.1 for the drill's duration. A pass is zero socket errors and zero non-2xx answers;
latency percentiles and throughput are reported, not judged, since they depend on the machine.
"""

from __future__ import annotations

from collections.abc import Callable

import httpx

from . import wrk
from .common import Context, Row, need_binary, row
from .service import UNLIMITED, client, create_key, create_list, expect, running, seed_contacts

PAGE = 100


def _load(ctx: Context, name: str, target: Callable[[str, str], str]) -> Row:
    need_binary("wrk", "wrk")
    url = f"sqlite:///{ctx.workdir / 'load.db'}"
    key = create_key(url)
    settings = {"RATE_LIMIT_FREE": UNLIMITED}
    with running(url, ctx.workdir / f"{name}.log", settings=settings) as service:
        with client(service, key) as api:
            list_id = create_list(api)
            seed_contacts(url, list_id, ctx.sizes.load_contacts)
            audience_id = _smart_audience(api, list_id)
            path = target(list_id, audience_id)
            expect(api.get(path), 200)
        result, _ = wrk.run(f"{service.url}{path}", {"apiKey": key}, ctx.sizes.wrk_seconds)
    shown = path.replace(list_id, "{listId}").replace(audience_id, "{id}")
    figures = f"{ctx.sizes.load_contacts:,} contacts, `GET {shown}`: {result.figures()}"
    return row(name, result.clean, figures)


def _smart_audience(api: httpx.Client, list_id: str) -> str:
    """Every contact returned carries its audiences, so the contacts page pays for this too."""
    body = {
        "name": "engaged",
        "listId": list_id,
        "filtersText": 'points >= 50 and country in ["FR", "DE", "US"]',
    }
    return str(expect(api.post("/v4/audiences", json=body), 201)["audience"]["id"])


def load_contacts(ctx: Context) -> Row:
    return _load(
        ctx, "load-contacts", lambda list_id, _: f"/v4/contacts?listId={list_id}&limit={PAGE}"
    )


def load_audience(ctx: Context) -> Row:
    return _load(ctx, "load-audience", lambda _, audience: f"/v4/audiences/{audience}?limit={PAGE}")
