"""The members of an audience, now or at an instant of the past: one page at a time.

Decisions (docs/service-audiences.md, *Membership history*):

- `at` is an RFC 3339 instant with its offset. Before the audience existed the answer is
  empty (it had no events then). In the future it is refused: events still to be written would
  change the answer, and a page would not be stable; the members now are asked without `at`.
- History is the replay of the feed, so what the feed lacks history lacks: an import sent with
  `events=false` moves membership without events. Should a list's first events ever be removed
  (retention), an `at` earlier than the first event kept is refused, naming that instant.
- `group` must name a group of the audience's experiment; `holdout=false` keeps the members a
  sender may mail.
- `version` names the audience's version in force at `at` (now without it): the last recorded
  up to that instant (`audience_versions.py`), null before the first kept.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from ...db.engine import Database
from ...db.queries import owned_audience
from ...ground import clock, instants
from ...ground.errors import Invalid, RequestProblem
from .. import audience_versions, experiments
from ..membership import history

AT_EXAMPLE = "2026-05-01T09:30:00Z"


@dataclass(frozen=True)
class MembersRequest:
    """A page of members: at an instant (None: now), after a contact id, of a group."""

    at: str | None
    after: str | None
    limit: int
    wanted: history.Wanted


@dataclass(frozen=True)
class Listing:
    """A page of members, the instant it is of, and the cursor of the next page."""

    audience_id: str
    at: datetime | None
    members: list[history.Member]
    next: str | None
    version: int | None = None

    def view(self) -> dict[str, Any]:
        return {
            "audienceId": self.audience_id,
            "at": self.at,
            "version": self.version,
            "members": [member.view() for member in self.members],
            "next": self.next,
            "hasMore": self.next is not None,
        }


def members(
    database: Database, account_id: str, audience_id: str, request: MembersRequest
) -> Listing:
    """A page of the audience's members now, or at `request.at`."""
    text = request.at
    moment = None if text is None else instant(text, clock.now())
    with database.reading() as session:
        audience, lst = owned_audience(session, account_id, audience_id)
        _check_group(request.wanted, experiments.stored(audience.experiment))
        size = request.limit + 1  # one more says whether a next page exists
        if moment is None or text is None:
            found = history.now(session, audience.id, request.after, size, request.wanted)
        else:
            _check_kept(history.kept_since(session, lst.id), moment, text)
            found = history.at(session, audience.id, moment, request.after, size, request.wanted)
        version = audience_versions.in_force(session, audience.id, moment or clock.now())
    return replace(_listing(audience.id, moment, found, request.limit), version=version)


def _listing(
    audience_id: str, moment: datetime | None, found: list[history.Member], limit: int
) -> Listing:
    """The page of `limit` of `found` (one more than a page, when another follows)."""
    page = found[:limit]
    return Listing(audience_id, moment, page, page[-1].contact_id if len(found) > limit else None)


def instant(text: str, now: datetime) -> datetime:
    """`at` read as an RFC 3339 instant (UTC), no later than `now` (`ground/instants.py`: a
    week date, a trailing NUL or an instant outside the years 0001-9999 in UTC is refused, never
    read as another instant).

    Raises:
        Invalid: naming `at`, what was found and the fix.
    """
    try:
        moment = instants.rfc3339(text, AT_EXAMPLE)
    except instants.NotAnInstant as problem:
        raise _bad_at(f"`at` {problem.detail}", text, problem.suggestion) from None
    if moment > now:
        fix = f"leave `at` out for the members now, or give an instant up to {_shown(now)}"
        raise _bad_at("`at` is in the future: the members then are not known yet", text, fix)
    return moment


def _bad_at(detail: str, found: str, suggestion: str) -> Invalid:
    issue = RequestProblem(
        ("at",),
        detail,
        expected=f"an RFC 3339 instant with its offset, e.g. {AT_EXAMPLE}, not after now",
        found=repr(found[:80]),
        suggestion=suggestion,
        part="query",
    )
    return Invalid("The query parameter `at` is not a usable instant", errors=[issue])


def _shown(moment: datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def _check_kept(since: datetime | None, moment: datetime, text: str) -> None:
    if since is not None and moment < since:
        raise _bad_at(
            f"the list's events before {_shown(since)} are no longer kept",
            text,
            f"ask for an instant from {_shown(since)} on",
        )


def _check_group(wanted: history.Wanted, experiment: experiments.Experiment | None) -> None:
    if wanted.group is None:
        return
    if experiment is None or wanted.group not in experiment.names():
        raise experiments.unknown_group(wanted.group, experiment)
