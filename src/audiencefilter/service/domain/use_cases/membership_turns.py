"""Storing an audience's evaluated members in turns: no transaction of one account holds the
write lock for more than one bounded turn.

A changed filter moves many memberships at once: patching the root of a chain of 100 audiences
over 2,000 contacts moved 200,000 (contact, audience) pairs, their rows and their events, in one
transaction under the list's lock, and on SQLite under the database's one write lock (19.6 s;
another account's write waited for all of it, then failed). So the members, evaluated before
any lock (`snapshot.evaluate`), are stored a turn at a time:

1. the write that changes the filter commits it, with a mark that the audience is unfinished
   (`due.mark_unfinished`);
2. a read transaction lists the contacts whose stored membership may differ from the answer
   (`snapshot.candidates`); every write committed after it judges its own contact
   by the new filter, like any write;
3. the candidates are stored in turns of at most `PAIRS_PER_TURN` (contact, audience) pairs
   judged, the audiences reading this one included, each turn its own transaction under the
   list's lock, judging again the contacts written since the snapshot (`snapshot.apply`);
   between two turns, other writers, of this list or of any account, take theirs;
4. a last short transaction replaces the mark with the audience's own next instant.

The feed stays exact: each pair moves in one turn, with its event, or by a concurrent write of
its contact, which the turns then judge again and leave as it is. Readers between two turns may
see some of the members moved and others not yet, never a member without its event. A turn
that finds the audience changed again (or deleted), or building in the background
(`membership/build.py`), stops: the newer change owns the members, and a build's start replaced
the mark. A change stored in turns cancels a build under way (`write_effects.audience_updated`), so
neither stores members of a filter the other replaced. A crash between turns leaves the mark,
and the scheduler (`membership_clock.run_due`) evaluates the audience again and stores it in
turns when the mark is due.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy.orm import Session

from ...db.engine import Database
from ...db.models import Audience
from ...ground import clock
from .. import list_lock
from ..audience_filters import StoredAudience
from ..membership import build, due, snapshot
from ..membership.store import dependents

PAIRS_PER_TURN = 500
"""(contact, audience) pairs judged per transaction, at most: each writes at most its
membership, its event and its next instant. Judging a pair of a chain of audiences costs about
0.1 ms on an idle laptop's SQLite and 0.3-0.4 ms on a 2-core machine at load 10, so a turn takes
well under 250 ms; docs/service-internals-writes.md states the bound."""


JUDGED_TOGETHER_PER_PAIR = 20
"""Pairs judged together in memory that cost a turn what one pair moved does. A write's
contacts are judged against the list's smart audiences together (`store.refresh_contacts`:
one read of the contacts, one of their stored memberships, the list's
`FilterSet` in memory), about 2.5 µs a pair on SQLite, where a pair that moves writes its
membership and its event, about 60-70 µs (an upsert of 1,000 contacts against 100 audiences,
on the 2-core machine: 4,000 pairs moved, 100,000 judged). A pair judged in SQL (a filter
over actions) weighs a whole pair."""


def judging_weight(audiences: Sequence[StoredAudience]) -> float:
    """What judging one contact against these smart audiences weighs in a turn, in pairs."""
    in_sql = sum(1 for audience in audiences if audience.in_sql)
    return in_sql + (len(audiences) - in_sql) / JUDGED_TOGETHER_PER_PAIR


def turn_size(readers: int) -> int:
    """Contacts per turn when `readers` audiences read the one stored (each judged too)."""
    return max(1, PAIRS_PER_TURN // (1 + readers))


def store(
    database: Database,
    audience_id: str,
    evaluated: snapshot.Snapshot,
    cause: str,
) -> int:
    """Stores the snapshot's answer for the audience in turns; the number of events written.
    Stops when the audience no longer uses the filter the snapshot evaluated, or builds in the
    background."""
    with database.reading() as session:
        audience = session.get(Audience, audience_id)
        if audience is None or not _owns(session, evaluated, audience):
            return 0
        contacts = snapshot.candidates(session, evaluated, audience_id)
        size = turn_size(len(dependents(session, [audience_id])))
    written = 0
    since = snapshot.Written(evaluated)  # read a turn at a time
    for start in range(0, len(contacts), size):
        with database.transaction() as session:
            audience = locked(session, audience_id)
            if audience is None or not _owns(session, evaluated, audience):
                return written
            turn = contacts[start : start + size]
            stored = StoredAudience.of(audience)
            written += snapshot.apply(session, evaluated, stored, cause, turn, since)
    return written


def finish(database: Database, audience_id: str, evaluated: snapshot.Snapshot) -> None:
    """Replaces the unfinished mark by the audience's own schedule, unless a newer change of
    the audience (or its background build) owns it now."""
    with database.transaction() as session:
        audience = locked(session, audience_id)
        if audience is not None and _owns(session, evaluated, audience):
            stored = StoredAudience.of(audience)
            due.audience_changed(session, stored, clock.now(), evaluated.at)


def locked(session: Session, audience_id: str) -> Audience | None:
    """The audience as it is once its list's lock is held, or None when it was deleted
    meanwhile (a delete landing between the read and the lock: `refresh` would raise)."""
    audience = session.get(Audience, audience_id)
    if audience is None:
        return None
    list_lock.take(session, audience.listId)
    return session.get(Audience, audience_id, populate_existing=True)


def _owns(session: Session, evaluated: snapshot.Snapshot, audience: Audience) -> bool:
    """Whether the snapshot's members are still the audience's to store: it uses the filter
    evaluated and no build of it runs (a build's end stores its own members)."""
    return snapshot.current(evaluated, audience) and not build.running(session, audience.id)
