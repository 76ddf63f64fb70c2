"""A write's judgement of the audiences decided in SQL, narrowed by what the write knows.

A write has the contact's own row in hand (its columns and `data`) before asking the database
anything. For each audience decided in SQL (one over actions, `relations.decided_in_sql`), the
library's residual filter (`Filter.residual`) substitutes those known fields: TRUE or FALSE
decides the contact there and then, and only what is left (the actions part, say) goes to SQL.
Contacts and audiences whose residuals are equal share one column of the judging statement.

Residual filters are kept by value (`kept`), so a residual met again on the next write is the
same object, whose SQLAlchemy expression, statement and compiled form are built once, as the
audiences' own are (`judge._judging_statement`). A write then tells residuals apart by identity:
hashing a filter walks its whole tree, and a write judging 40 audiences over actions paid for
40 such walks (more than its residuals cost). An audience whose filter reads no field of the
contact itself (over its actions alone) is its own residual on every contact: that is found
once per filter object (`_whole`), not once per contact.

`TALLY` counts a process's judgements on writes: `memory` (audiences judged in memory),
`decided` (decided in SQL but by the known fields, without a query), `queried` (asked of
SQL); the shares are reported by `benchmarks/service_residual.py` and
docs/service-internals-writes.md.

The switch is the setting `membership_residual` (on by default), read from the write
session (`db.engine.RESIDUAL`).
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from .... import FALSE, TRUE, Filter
from ...db.engine import RESIDUAL
from ..audience_filters import StoredAudience

TALLY: Counter[str] = Counter()
"""Judgements on writes since the process started (the module docstring): a figure for
benchmarks and logs; no behaviour reads it."""
KEPT = 1024
_KEPT: dict[Filter, Filter] = {}
_WHOLE: dict[int, tuple[Filter, Filter | None]] = {}
_LOCK = threading.Lock()


def enabled(session: Session) -> bool:
    """Whether this write narrows its SQL judgements by residual filters (the setting)."""
    return bool(session.info.get(RESIDUAL, True))


def kept(flt: Filter) -> Filter:
    """The one object kept for a residual equal to `flt` (the oldest forgotten past `KEPT`)."""
    found = _KEPT.get(flt)
    if found is not None:
        return found
    with _LOCK:
        if len(_KEPT) >= KEPT:
            _KEPT.pop(next(iter(_KEPT)))
        return _KEPT.setdefault(flt, flt)


def _whole(flt: Filter) -> Filter | None:
    """The kept filter equal to `flt` when it reads no field of the contact itself (its residual
    on any contact), else None; worked out once per filter object, found again by identity."""
    found = _WHOLE.get(id(flt))
    if found is not None and found[0] is flt:
        return found[1]
    whole = None if _reads_own(flt) else kept(flt)
    with _LOCK:
        if len(_WHOLE) >= KEPT:
            _WHOLE.pop(next(iter(_WHOLE)))
        _WHOLE[id(flt)] = (flt, whole)
    return whole


def known(flt: Filter, record: dict[str, Any]) -> dict[str, Any]:
    """What a write knows of the contact for this filter: its own fields (null where the row
    holds none); relations are left out, they are the database's to read."""
    return {f.name: record.get(f.name) for f in flt.schema.fields}


def _reads_own(flt: Filter) -> bool:
    """Whether the filter reads a field of the contact itself (not only its relations)."""
    return any(flt.schema.get(name) is not None for name in flt.fields)


@dataclass
class Split:
    """The audiences decided in SQL, split by residual: the contacts each audience selects
    already (`selected`), and for each residual left, the (audience id, contact id) pairs it
    decides (`asks`, by the identity of the kept residual: equal residuals are one object)."""

    selected: dict[str, set[str]]
    asks: dict[int, tuple[Filter, list[tuple[str, str]]]] = field(default_factory=dict)

    def ask(self, residual: Filter) -> list[tuple[str, str]]:
        """The pairs left to this kept residual (a new list the first time)."""
        found = self.asks.get(id(residual))
        if found is None:
            found = self.asks[id(residual)] = (residual, [])
        return found[1]

    def residuals(self) -> list[Filter]:
        """The residuals left to SQL, in the order `answer` takes their answers in."""
        return [residual for residual, _ in self.asks.values()]

    def contacts(self) -> list[str]:
        """The contacts some residual is asked of, in order."""
        return sorted({contact for _, pairs in self.asks.values() for _, contact in pairs})

    def answer(self, selected: Sequence[set[str]]) -> None:
        """Adds what SQL selected (`selected[i]` for `residuals()[i]`) to the audiences."""
        for (_, pairs), ids in zip(self.asks.values(), selected, strict=True):
            for audience_id, contact_id in pairs:
                if contact_id in ids:
                    self.selected[audience_id].add(contact_id)


def _split_one(
    audience: StoredAudience, records: Sequence[dict[str, Any]], at: datetime, found: Split
) -> None:
    """One audience's part of `split`, into `found`."""
    assert audience.flt is not None
    whole = _whole(audience.flt)
    if whole is not None:  # nothing to substitute: the filter is its residual
        found.ask(whole).extend((audience.id, record["id"]) for record in records)
        return
    for record in records:
        left = audience.flt.residual(known(audience.flt, record), now=at)
        if left.root == TRUE:
            found.selected[audience.id].add(record["id"])
        elif left.root != FALSE:
            found.ask(kept(left)).append((audience.id, record["id"]))


def split(
    audiences: Sequence[StoredAudience], records: Sequence[dict[str, Any]], at: datetime
) -> Split:
    """Each audience's residual on each contact's own fields at `at`."""
    found = Split({a.id: set() for a in audiences})
    for audience in audiences:
        _split_one(audience, records, at, found)
    asked = sum(len(pairs) for _, pairs in found.asks.values())
    tally(decided=len(audiences) * len(records) - asked, queried=asked)
    return found


def tally(*, memory: int = 0, decided: int = 0, queried: int = 0) -> None:
    """Counts judgements of a write in `TALLY`."""
    TALLY.update({"memory": memory, "decided": decided, "queried": queried})
