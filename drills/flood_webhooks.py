"""The floods drill's fourth flood: one account's webhook deliveries held to their time limit.

Account A's list has two endpoints: one whose receiver accepts every connection and never reads
or answers (`isolation.SilentReceiver`), and one whose receiver answers a byte every 0.1 s from
its headers on (`Drips`, about a minute of bytes), which passes every per-read time limit. Its
contacts make `webhook_deliveries` (40) pending deliveries for each. While the worker tries
them, account B writes and its own receiver answers at once (`floods.py` measures B).

The flood passes when every dripping answer was cut by the sender before it ended: an attempt
ends at its whole-attempt deadline (`WEBHOOK_TIMEOUT_SECONDS`), not when a read waits too long,
which the drip never lets happen.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Protocol

import httpx

from tests.service.webhook_receivers import Drips

from .isolation import SilentReceiver
from .service import ServiceFailed, create_list, expect
from .webhooks import new_webhook

DRIP_PHASE = "headers"
DRIP_ENDING = "HTTP/1.1 connection: close"
DRIPS_END_WITHIN = 60.0
"""Seconds the flood waits, after its time, for the attempts under way at the drip to end:
each ends at its deadline (10 s), the whole answer would take a minute."""


class Sized(Protocol):
    """The sizes this flood reads (`floods.Sizes`)."""

    @property
    def webhook_deliveries(self) -> int: ...

    @property
    def webhook_seconds(self) -> float: ...


def webhooks(api: httpx.Client, _url: str, sizes: Sized) -> Callable[[], None]:
    """A's list, its two endpoints and their pending deliveries; the flood waits while the
    worker tries them, then judges the drip's endings."""
    list_id = create_list(api, "webhooks")
    silent, drips = SilentReceiver(), Drips(DRIP_PHASE, DRIP_ENDING)
    for url in (silent.url, drips.url):
        new_webhook(api, list_id, url, ("contact.created",))
    for index in range(sizes.webhook_deliveries):
        body = {"email": f"w{index}@webhooks.example", "listId": list_id}
        expect(api.post("/v4/contacts", json=body), 201)

    def flood() -> None:
        try:
            time.sleep(sizes.webhook_seconds)
            drips.close()  # no new attempt reaches it; those under way go on to their end
            _judge(drips)
        finally:
            silent.close()
            drips.close()

    return flood


def _judge(drips: Drips) -> None:
    """Every attempt the dripping receiver took ended, cut by the sender before the answer
    did; raises `ServiceFailed` naming what was found otherwise."""
    deadline = time.monotonic() + DRIPS_END_WITHIN
    started, endings = drips.counts()
    while len(endings) < started and time.monotonic() < deadline:
        time.sleep(0.1)
        started, endings = drips.counts()
    if started == 0:
        raise ServiceFailed("no attempt reached the dripping receiver")
    if len(endings) < started or any(ending != "closed" for ending in endings):
        raise ServiceFailed(
            f"of {started} attempts at the dripping receiver, {endings.count('closed')} were "
            f"cut at their deadline, {endings.count('sent')} read the whole answer and "
            f"{started - len(endings)} were still reading {DRIPS_END_WITHIN:g} s later: an "
            "attempt must end at WEBHOOK_TIMEOUT_SECONDS, whatever each read waits"
        )
