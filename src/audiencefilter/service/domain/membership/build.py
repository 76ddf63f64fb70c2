"""Audiences built in the background: a large list's new members worked out a chunk at a time.

Creating a smart audience, or changing its filter, evaluates it over the whole list. On a list
larger than `audience_build_background_above` the request does not wait for that: the write
stores the audience and starts a build (`start`, under the list's lock), and answers it as
`building` with its progress. The builds' thread (`use_cases/membership_builds.py`), apart
from the clock's so that no clock-driven change waits behind a chunk, then runs `step` until
the build ends:

1. `start` reads, under the lock, what a `Snapshot` holds (`membership/snapshot.py`): the list's
   last event position `P`, the readings no event reports (points, action ids) when the filter
   reads them, and the instant `at` the filter is judged at. A new `token` names this run.
2. Each `step` takes the next chunk of one build's list's contacts by id, selects those the filter
   picks in a read transaction (no lock), then, under the lock, adds them to
   `audience_build_members` and moves the cursor and `done`, unless the run was replaced
   meanwhile (another token or cursor: a change of filter, or another process's step), in which
   case the chunk is thrown away.
3. The step that finds no contact left finishes, under the lock: the staged members become a
   `Snapshot` (`Built`) and are dropped, the build's cursor becomes `BUILD_STORING` (the
   audience joins its list's plan again, and stays `building`) and the audience is marked
   unfinished (`due.mark_unfinished`). The caller stores the snapshot in turns, as
   a changed filter is stored (`use_cases/membership_turns.py`): at a hundred thousand members
   the whole difference in one transaction would hold the write lock for seconds. The
   contacts written after `P` are judged again there, so the members are exact; the
   `audience.entered` / `audience.left` events (and their webhooks) are written then, once;
   the last turn ends the build (`stored`). A crash between two turns leaves the mark, and
   the scheduler stores the rest.

**Turns.** Builds take turns by account, then by audience within the account (`Turns`): with
eight builds of one account queued, another account's new build gets every second step, so its
wait is its own size, not the sum of theirs. The turn is this process's; several processes each
take turns of their own, and the token keeps a chunk from being counted twice.

While a build runs, the audience is no part of its list's plan (`plan.py`): writes do not judge
it and the clock does not move it, so it appends no event before it is built; its stored
members (none for a new audience, the previous filter's after a change) stay as they were. A
change of filter while building restarts the build (new token, staged members dropped), so no
member of the older filter survives and no event is written twice; a change to manual mode or
an inline rebuild (`?wait=true`) cancels it.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import String, Table, delete, func, insert, literal, select
from sqlalchemy.orm import Session

from ...db import dialects
from ...db.bulk import insert_rows
from ...db.engine import Database
from ...db.models import (
    BUILD_STORING,
    Audience,
    AudienceBuild,
    AudienceBuildMember,
    Contact,
    List,
)
from ...ground import clock
from .. import list_lock, relations
from ..audience_filters import StoredAudience, filter_of
from . import due, plan, snapshot

STAGED = cast(Table, AudienceBuildMember.__table__)
WAKE = threading.Event()
"""Set when a build starts: the builds' thread of this process looks at once."""


@dataclass(frozen=True)
class Progress:
    """How far a build is: contacts of the list looked at, of those it had when it started
    (`total` grows if the list grew past it)."""

    done: int
    total: int


def start(session: Session, audience: Audience, cause: str) -> None:
    """(Re)starts the build of the audience's filter; call under the list's lock, after the
    audience was flushed. Its stored members and events wait for the build's end."""
    flt = filter_of(audience.mode, audience.filters, audience.fields)
    assert flt is not None and audience.filters is not None
    cancel(session, audience.id)
    # The older filter's instants must not move the audience while it builds.
    unfiltered = StoredAudience(audience.id, audience.name, audience.mode, None)
    due.audience_changed(session, unfiltered, clock.now())
    points, actions = snapshot.unreported(session, audience.listId, flt)
    total = session.scalar(select(func.count()).where(Contact.listId == audience.listId)) or 0
    heads = list_lock.heads(session, audience.listId)
    session.add(
        AudienceBuild(
            audienceId=audience.id,
            token=secrets.token_hex(16),
            filters=audience.filters,
            cause=cause,
            position=heads.position,
            at=clock.now(),
            points=points,
            actions=json.dumps(sorted(actions)) if actions is not None else None,
            unannounced=heads.unannounced,
            acted=heads.acted,
            cursor="",
            done=0,
            total=total,
        )
    )
    session.flush()
    WAKE.set()  # the builds' thread starts it at once


def cancel(session: Session, audience_id: str) -> None:
    """Drops the audience's build, if one runs, and what it staged."""
    for model in (AudienceBuildMember, AudienceBuild):
        session.execute(
            delete(model)
            .where(model.audienceId == audience_id)
            .execution_options(synchronize_session=False)
        )


def running(session: Session, audience_id: str) -> bool:
    """Whether a build of the audience is judging its list (not storing what it found)."""
    statement = select(AudienceBuild.audienceId).where(
        AudienceBuild.audienceId == audience_id, AudienceBuild.cursor != BUILD_STORING
    )
    return session.scalar(statement) is not None


def stored(session: Session, audience_id: str, token: str | None = None) -> None:
    """Ends a build whose members were stored (of run `token`, or any): it is `built`."""
    statement = delete(AudienceBuild).where(
        AudienceBuild.audienceId == audience_id, AudienceBuild.cursor == BUILD_STORING
    )
    if token is not None:
        statement = statement.where(AudienceBuild.token == token)
    session.execute(statement.execution_options(synchronize_session=False))


def progress(session: Session, audience_ids: Iterable[str]) -> dict[str, Progress]:
    """The progress of those of these audiences that are building."""
    ids = list(audience_ids)
    if not ids:
        return {}
    statement = select(AudienceBuild.audienceId, AudienceBuild.done, AudienceBuild.total).where(
        AudienceBuild.audienceId.in_(ids)
    )
    return {
        id_: Progress(done, max(done, total)) for id_, done, total in session.execute(statement)
    }


@dataclass(frozen=True)
class _Chunk:
    """One chunk of a build, evaluated without the lock: how many contacts it looked at, up to
    id `last`, and those the filter selected, for the run `token` from `cursor`."""

    audience_id: str
    list_id: str
    token: str
    cursor: str
    looked: int
    last: str | None
    selected: frozenset[str]


@dataclass(frozen=True)
class Built:
    """A build that ended: its members as a snapshot, for the caller to store in turns."""

    audience_id: str
    token: str
    snapshot: snapshot.Snapshot
    cause: str


@dataclass
class Turns:
    """Whose build takes the next step, in this process: the accounts in turn (by id, after the
    last one served), then that account's builds in turn (by audience id, after its last one).
    Oldest first made one account's queue of builds hold every other account's for minutes."""

    account: str | None = None
    audiences: dict[str, str] = field(default_factory=dict)

    def choose(self, running: Sequence[tuple[str, str]]) -> str | None:
        """The audience to step among the running builds, (account id, audience id) pairs."""
        if not running:
            return None
        accounts = sorted({account for account, _ in running})
        account = _after(accounts, self.account)
        audience = _after(
            sorted(a for o, a in running if o == account), self.audiences.get(account)
        )
        self.audiences = {a: v for a, v in self.audiences.items() if a in accounts}
        self.account, self.audiences[account] = account, audience
        return audience


def _after(ordered: Sequence[str], last: str | None) -> str:
    """The first of `ordered` after `last`, or the first of all (a new round)."""
    return next((value for value in ordered if last is None or value > last), ordered[0])


def step(database: Database, chunk: int, turns: Turns | None = None) -> Built | None | int:
    """Moves the build whose turn it is (`Turns`; a fresh one takes the first account's
    first) on by one chunk (0), or ends it (`Built`, to store); None when no build is running."""
    evaluated = _evaluate(database, chunk, turns or Turns())
    if evaluated is None:
        return None
    with database.transaction() as session:
        list_lock.take(session, evaluated.list_id)
        build = session.get(AudienceBuild, evaluated.audience_id)
        if build is None or (build.token, build.cursor) != (evaluated.token, evaluated.cursor):
            return 0  # replaced meanwhile: the next step takes the run as it is now
        if evaluated.looked:
            _stage(session, build, evaluated)
            return 0
        return _finish(session, build)


def _evaluate(database: Database, chunk: int, turns: Turns) -> _Chunk | None:
    with database.reading() as session:
        chosen = turns.choose([(owner, id_) for owner, id_ in session.execute(_RUNNING)])
        build = session.get(AudienceBuild, chosen) if chosen is not None else None
        if build is None:
            return None
        audience = session.get(Audience, build.audienceId)
        assert audience is not None  # the build's row goes with the audience (cascade)
        flt = filter_of(audience.mode, build.filters, audience.fields)
        assert flt is not None
        in_list = Contact.listId == audience.listId
        # The chunk's bounds, counted by the database: no id of it comes into Python.
        ids = (
            select(Contact.id)
            .where(in_list, Contact.id > build.cursor)
            .order_by(Contact.id)
            .limit(chunk)
            .subquery()
        )
        looked, last = session.execute(select(func.count(), func.max(ids.c.id))).one()
        selected: frozenset[str] = frozenset()
        if looked:
            within = (Contact.id > build.cursor) & (Contact.id <= last)
            condition = relations.condition(flt, build.at)
            statement = select(Contact.id).where(in_list, within, condition)
            selected = snapshot.selected_ids(session, statement)
        return _Chunk(
            build.audienceId, audience.listId, build.token, build.cursor, looked, last, selected
        )


_RUNNING = (
    select(List.accountId, AudienceBuild.audienceId)
    .join(Audience, Audience.id == AudienceBuild.audienceId)
    .join(List, List.id == Audience.listId)
    .where(AudienceBuild.cursor != BUILD_STORING)
)
"""The builds judging their lists, with their accounts: the candidates of `Turns.choose`."""


def _stage(session: Session, build: AudienceBuild, chunk: _Chunk) -> None:
    """Adds the chunk's selected contacts to the build's: one `INSERT ... SELECT` over the ids
    as one parameter where the database unpacks one (`dialects.unpacked`)."""
    assert chunk.last is not None
    ids = sorted(chunk.selected)
    dialect = dialects.dialect_of(session)
    if ids and dialects.unpacks(dialect):
        table = dialects.unpacked(dialect, ids)
        rows = select(literal(build.audienceId, String), table.c.value)
        session.execute(insert(STAGED).from_select(["audience_id", "contact_id"], rows))
    else:
        insert_rows(
            session, STAGED, [{"audience_id": build.audienceId, "contact_id": i} for i in ids]
        )
    build.cursor = chunk.last
    build.done += chunk.looked
    build.total = max(build.total, build.done)


def _finish(session: Session, build: AudienceBuild) -> Built:
    """Answers the build's members, dropping what it staged; the build stays, storing, and
    the audience is marked unfinished until they are stored."""
    audience = session.get(Audience, build.audienceId)
    assert audience is not None
    staged = select(AudienceBuildMember.contactId).where(
        AudienceBuildMember.audienceId == build.audienceId
    )
    actions = json.loads(build.actions) if build.actions is not None else None
    members = snapshot.Snapshot(
        list_id=audience.listId,
        filters=build.filters,
        fields=audience.fields,  # any change of them since restarted the build
        position=build.position,
        at=build.at,
        selected=frozenset(session.scalars(staged)),
        points=build.points,
        actions=frozenset((a, b) for a, b in actions) if actions is not None else None,
        unannounced=build.unannounced,
        acted=build.acted,
    )
    session.execute(
        delete(AudienceBuildMember)
        .where(AudienceBuildMember.audienceId == audience.id)
        .execution_options(synchronize_session=False)
    )
    build.cursor, build.done = BUILD_STORING, max(build.done, build.total)
    plan.audiences_changed(session, audience.listId)  # it joins its list's plan again
    due.mark_unfinished(session, audience.id, clock.now())
    return Built(audience.id, build.token, members, build.cause)
