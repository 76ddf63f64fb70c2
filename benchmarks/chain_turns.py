"""Patching the root of a chain of audiences: the members stored in turns, or in one transaction.

    python -m benchmarks.chain_turns [--audiences 30] [--contacts 1000] [--runs 1]

Issue 36: a chain of 100 audiences over 2,000 contacts took 145 s to store in turns where one
transaction took 19.6 s. This is the same work at a size a loaded machine runs in seconds: one
SQLite database per run, a list of N contacts (points 0 to 99), a root audience `points >= 0`
and a chain of audiences each reading the one before, then a PATCH of the root to `points < 0`,
every contact leaving every audience, through the whole application in process. It prints the
seconds of the PATCH in turns (`membership_turns.PAIRS_PER_TURN`) and in one transaction (the
turn made larger than the work), run after run, one after the other. A measurement script, not a
test: nothing here asserts a timing.
"""

from __future__ import annotations

import argparse
import os
import tempfile
import time
from pathlib import Path

from sqlalchemy import insert

from audiencefilter.service import Settings
from audiencefilter.service.db.models import Contact, new_id
from audiencefilter.service.domain.use_cases import keys, membership_turns

from .service_audiences import InProcessClient

ONE_TRANSACTION = 10**9


def _seconds(audiences: int, contacts: int, pairs_per_turn: int) -> float:
    """The PATCH of the root of a fresh chain, in seconds."""
    folder = Path(tempfile.mkdtemp(prefix="chain-turns-"))
    settings = Settings(
        database_url=f"sqlite:///{folder / 'chain.db'}",
        auto_migrate=True,
        rate_limit_pro="10000000/minute",
        membership_sweep_seconds=0,
    )
    client = InProcessClient(settings)
    try:
        database = client.app.state.db
        headers = {"apiKey": keys.issue(database, new_id("bench"), "pro", "private").plaintext}

        def call(method: str, url: str, body: dict[str, object], status: int) -> str:
            response = client.request(method, f"/v4{url}", json=body, headers=headers)
            assert response.status_code == status, response.text
            found: str = response.json()["data"]["list" if url == "/lists" else "audience"]["id"]
            return found

        list_id = call("POST", "/lists", {"name": "chain"}, 201)
        rows = [
            {"id": new_id("con"), "listId": list_id, "email": f"c{i}@chain.bench",
             "emailKey": f"c{i}@chain.bench", "points": i % 100}
            for i in range(contacts)
        ]  # fmt: skip
        with database.transaction() as session:
            session.execute(insert(Contact), rows)
        root = {"name": "root", "listId": list_id, "filtersText": "points >= 0"}
        chain = [call("POST", "/audiences?limit=1", root, 201)]
        for index in range(audiences - 1):
            link = {"name": f"link {index}", "listId": list_id,
                    "filters": {"audiences": {"some": {"id": chain[-1]}}}}  # fmt: skip
            chain.append(call("POST", "/audiences?limit=1", link, 201))
        membership_turns.PAIRS_PER_TURN = pairs_per_turn
        started = time.perf_counter()
        call("PATCH", f"/audiences/{chain[0]}?limit=1", {"filtersText": "points < 0"}, 200)
        return time.perf_counter() - started
    finally:
        client.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--audiences", type=int, default=30)
    parser.add_argument("--contacts", type=int, default=1000)
    parser.add_argument("--runs", type=int, default=1)
    args = parser.parse_args()
    in_turns = membership_turns.PAIRS_PER_TURN
    load = os.getloadavg()[0]
    print(f"chain of {args.audiences} over {args.contacts} contacts, SQLite, load {load:.1f}")
    for run in range(args.runs):
        turns = _seconds(args.audiences, args.contacts, in_turns)
        one = _seconds(args.audiences, args.contacts, ONE_TRANSACTION)
        print(f"run {run + 1}: in turns {turns:.2f} s, one transaction {one:.2f} s")


if __name__ == "__main__":
    main()
