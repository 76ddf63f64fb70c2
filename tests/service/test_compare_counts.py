"""The counts of a comparison of a saved audience and a sent filter, on SQLite and PostgreSQL:
the audience's kept size and one count of the filter's matches joined with its stored members
(`comparisons._saved_and_sent`) answer as the previous scan of every contact of the list
(`comparisons.SCAN_BOTH`), on generated contacts, smart and manual audiences, either side."""

from __future__ import annotations

import random
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.domain.use_cases import comparisons

from .audience_helpers import manual, smart
from .conftest import ApiClient, Tenant, make_tenant, settings_on

COUNTRIES = ("FR", "DE", "US", "GB")


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def api(
    request: pytest.FixtureRequest, tmp_path: Path, app_factory: Callable[..., ApiClient]
) -> ApiClient:
    settings = settings_on(request, tmp_path / "compare_counts.db", membership_sweep_seconds=0)
    return app_factory(settings)


def _filters(draw: random.Random) -> dict[str, Any]:
    low = draw.randrange(0, 100)
    points = {"points": {"gte": low, "lt": low + draw.randrange(1, 60)}}
    country = {"country": {"in": draw.sample(COUNTRIES, draw.randrange(1, 3))}}
    return draw.choice([points, country, {"AND": [points, country]}, {"OR": [points, country]}])


def _compare(tenant: Tenant, a: dict[str, Any], b: dict[str, Any]) -> Any:
    return tenant.ok("POST", "/v4/audiences/compare", json={"a": a, "b": b})


def _both_paths(tenant: Tenant, a: dict[str, Any], b: dict[str, Any]) -> Any:
    fast = _compare(tenant, a, b)
    comparisons.SCAN_BOTH = True
    try:
        scanned = _compare(tenant, a, b)
    finally:
        comparisons.SCAN_BOTH = False
    assert fast == scanned
    return fast


def test_the_kept_size_and_the_probed_members_count_as_the_scan(api: ApiClient) -> None:
    draw = random.Random(20261127)
    owner = make_tenant(api)
    list_id = owner.new_list()["id"]
    rows = [
        {
            "email": f"c{i}@example.com",
            "points": draw.randrange(100),
            "country": draw.choice(COUNTRIES),
        }
        for i in range(300)
    ]
    owner.ok("POST", "/v4/contacts/import", params={"listId": list_id}, json=rows)
    contacts = owner.ok("GET", "/v4/contacts", params={"listId": list_id, "limit": 1000})
    ids = [contact["id"] for contact in contacts["contacts"]]
    picked = manual(owner, list_id)
    chosen = draw.sample(ids, 70)
    owner.ok("POST", f"/v4/audiences/{picked['id']}/members", json={"contactIds": chosen})
    saved = [smart(owner, list_id, _filters(draw), f"Smart {n}")["id"] for n in range(3)]
    seen_some = False
    for audience_id in [picked["id"], *saved]:
        for _ in range(4):
            sent = {"filters": _filters(draw)}
            found = _both_paths(owner, {"audienceId": audience_id}, sent)
            sent_first = _both_paths(owner, sent, {"audienceId": audience_id})
            counts = found["counts"]
            assert sent_first["counts"] == {
                "both": counts["both"],
                "aOnly": counts["bOnly"],
                "bOnly": counts["aOnly"],
            }
            seen_some = seen_some or counts["both"] > 0
    assert seen_some
