"""`service_rate --profile`: where one contact update's time goes, with the list's audiences.

The served process cannot be profiled from outside without tools the project does not depend
on, so this runs the route's own use case (`use_cases/contacts.update`: the write, judging the
list's smart audiences, storing the difference with its events, the answer's contact with its
audiences) in this thread, against the same database, under cProfile. What it leaves out is
the HTTP layer around it (routing, the key's check, the rate limiter, JSON rendering).
"""

from __future__ import annotations

import cProfile
import io
import pstats
import random
import time

from audiencefilter.service.domain.use_cases import contacts
from audiencefilter.service.settings import Settings

from .rate_load import COUNTRIES
from .rate_setup import Stack, sql

UPDATES = 50


def profile_updates(stack: Stack, list_id: str, audiences: int, top: int = 25) -> str:
    """`UPDATES` updates of random contacts under cProfile, in CPU time (waits for the
    database and for a core on a loaded machine are not counted); the costliest functions."""
    settings = Settings(database_url=stack.database_url, max_audiences_per_list=audiences * 2)
    account = sql(stack, "SELECT account_id FROM lists WHERE id = :lst", lst=list_id)[0][0]
    ids = [row[0] for row in sql(stack, _SOME, lst=list_id, size=UPDATES)]
    rng = random.Random(5)
    profiler = cProfile.Profile(time.process_time)
    for contact in ids:
        sent = {"points": rng.randrange(200), "country": rng.choice(COUNTRIES)}
        profiler.enable()
        contacts.update(stack.database, settings, account, contact, sent)
        profiler.disable()
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out)
    stats.sort_stats("cumulative").print_stats(top)
    stats.sort_stats("tottime").print_stats(top)
    return f"profile of {len(ids)} updates (use case in process):\n{out.getvalue()}"


_SOME = "SELECT id FROM contacts WHERE list_id = :lst ORDER BY random() LIMIT :size"
