"""What a hostile user of the API did in the outside attack of issue 18, against a running service.

Three parts, on one SQLite service process:
- memory: many previews of distinct large filters (numeric `in` lists whose length changes from
  one request to the next), the process group's RSS read from `/proc` before and after. Before
  the drivers' statement caches were switched off, this grew about half a megabyte per request
  and kept it; it passes when the growth stays under `MAX_GROWTH_MB`.
- oversized filters: ORs of 1,000 and 5,000 branches, a 10,000-value `in` list and nesting past
  the library's depth, sent as a preview, an audience and a contacts query, then the list's
  audiences listed. Every answer must be a 2xx or a 4xx with a message: never a 5xx (the budget
  decides when a filter arrives, so a stored filter can never make a read fail).
- public-key budget: with a limit of `LIMIT` a minute, the account's public key makes
  `PUBLIC_REQUESTS` forbidden calls (403, then 429); the private key must still answer 200 with
  its whole quota but one left.
"""

from __future__ import annotations

import gc
import json
import os
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import quote

import httpx

from .common import Context, Row, row
from .service import _cli, client, create_key, create_list, expect, running

MAX_GROWTH_MB = 48
FIRST_LENGTH = 2_000
STEP = 7
WARM_UP = 10
LIMIT = 60
PUBLIC_REQUESTS = 150
MAX_QUERY = 60_000
DEEP = 40  # past the library's nesting limit of 32


def group_rss_mb(leader: int) -> float:
    """Resident memory of every process in `leader`'s process group (uvicorn and its workers)."""
    total_kb = 0
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
            # the fields after the command name: state, ppid, pgrp, ...
            if int(stat.rsplit(")", 1)[1].split()[2]) != leader:
                continue
            for line in Path(f"/proc/{entry}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total_kb += int(line.split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return total_kb / 1024


def large_filter(index: int) -> dict[str, Any]:
    return {"points": {"in": list(range(FIRST_LENGTH + index * STEP))}}


def oversized_filters(fast: bool) -> Iterator[tuple[str, dict[str, Any]]]:
    widths = (1_000,) if fast else (1_000, 5_000)
    for width in widths:
        yield f"OR of {width:,}", {"OR": [{"points": {"equals": i}} for i in range(width)]}
    yield "in of 10,000", {"points": {"in": list(range(10_000))}}
    yield "in of 5,000", {"points": {"in": list(range(5_000))}}
    deep: dict[str, Any] = {"points": {"gte": 1}}
    for level in range(DEEP):
        deep = {"NOT": deep} if level % 2 else {"AND": [deep, {"points": {"lte": level}}]}
    yield f"nesting {DEEP} deep", deep


def _memory(api: httpx.Client, leader: int, list_id: str, requests: int) -> tuple[bool, str]:
    def preview(index: int) -> None:
        body = {"listId": list_id, "filters": large_filter(index)}
        expect(api.post("/v4/audiences/preview", params={"limit": 10}, json=body), 200)

    for index in range(WARM_UP):
        preview(index)
    gc.collect()
    before = group_rss_mb(leader)
    started = time.monotonic()
    for index in range(WARM_UP, WARM_UP + requests):
        preview(index)
    seconds = time.monotonic() - started
    after = group_rss_mb(leader)
    growth = after - before
    last = FIRST_LENGTH + (WARM_UP + requests - 1) * STEP
    figures = (
        f"memory: {requests} distinct previews (`in` of {FIRST_LENGTH + WARM_UP * STEP:,} to "
        f"{last:,} values) in {seconds:.0f} s, RSS {before:.0f} -> {after:.0f} MB "
        f"(+{growth:.1f}, bound {MAX_GROWTH_MB})"
    )
    return growth < MAX_GROWTH_MB, figures


def _oversized(api: httpx.Client, list_id: str, fast: bool) -> tuple[bool, str]:
    statuses: Counter[int] = Counter()
    unclear = 0
    for name, where in oversized_filters(fast):
        calls = [
            api.post("/v4/audiences/preview", json={"listId": list_id, "filters": where}),
            api.post(
                "/v4/audiences",
                json={"name": name, "listId": list_id, "mode": "smart", "filters": where},
            ),
        ]
        query = json.dumps(where, separators=(",", ":"))
        if len(quote(query)) <= MAX_QUERY:  # longer is no URL a client or a server takes
            calls.append(api.get("/v4/contacts", params={"listId": list_id, "filters": query}))
        for response in calls:
            statuses[response.status_code] += 1
            if 400 <= response.status_code < 500 and not _says_why(response.json()):
                unclear += 1
    listing = api.get("/v4/audiences", params={"listId": list_id})
    statuses[listing.status_code] += 1
    server_errors = sum(count for status, count in statuses.items() if status >= 500)
    passed = server_errors == 0 and unclear == 0 and listing.status_code == 200
    counts = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
    return (
        passed,
        f"oversized filters: {counts}; 5xx {server_errors}, 4xx saying nothing {unclear}",
    )


def _says_why(body: dict[str, Any]) -> bool:
    """An error body of either form of the interface: `{"error": 400, "message": ...}` (a
    budget's refusal: `{"error": 400, "message": "Filters exceed ...", "details": [...]}`), or
    its audience rules' `{"error": "Invalid filters: ...", "details": [...]}`."""
    return bool(body.get("message")) or isinstance(body.get("error"), str)


def _public_budget(service_url: str, private_key: str, public_key: str) -> tuple[bool, str]:
    statuses: Counter[int] = Counter()
    with httpx.Client(base_url=service_url, headers={"apiKey": public_key}, timeout=30) as public:
        for _ in range(PUBLIC_REQUESTS):
            statuses[public.get("/v4/lists").status_code] += 1
    with httpx.Client(base_url=service_url, headers={"apiKey": private_key}, timeout=30) as own:
        answer = own.get("/v4/lists")
    remaining = answer.headers.get("RateLimit", "")
    counts = ", ".join(f"{status} x{count}" for status, count in sorted(statuses.items()))
    passed = (
        answer.status_code == 200
        and statuses[429] == PUBLIC_REQUESTS - LIMIT
        and f"r={LIMIT - 1};" in remaining
    )
    return passed, (
        f"public key, {PUBLIC_REQUESTS} forbidden calls at {LIMIT}/minute: {counts}; private key "
        f"then {answer.status_code} with `{remaining}`"
    )


def abuse(ctx: Context) -> Row:
    name = "abuse"
    url = f"sqlite:///{ctx.workdir / 'abuse.db'}"
    private_key = create_key(url, account="abuser")
    public_key = _cli(url, "keys", "create", "--type", "public", "--account", "abuser")
    public_key = public_key.strip().splitlines()[-1]
    settings = {"RATE_LIMIT_FREE": f"{LIMIT}/minute"}
    results: list[tuple[bool, str]] = []
    # The rate-limit part first, on a fresh budget; the others on a service without limits.
    with running(url, ctx.workdir / f"{name}-limits.log", settings=settings) as service:
        results.append(_public_budget(service.url, private_key, public_key))
    with running(
        url, ctx.workdir / f"{name}.log", settings={"RATE_LIMIT_FREE": "100000/minute"}
    ) as service:
        assert service.process is not None
        with client(service, private_key, timeout=120) as api:
            list_id = create_list(api, "abuse")
            for number in range(5):
                body = {"email": f"abuse{number}@drill.example", "listId": list_id}
                expect(api.post("/v4/contacts", json=body), 201)
            results.append(_memory(api, service.process.pid, list_id, 40 if ctx.fast else 200))
            results.append(_oversized(api, list_id, ctx.fast))
    return row(name, all(ok for ok, _ in results), "; ".join(figures for _, figures in results))
