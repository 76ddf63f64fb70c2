"""When a record's answer changes with the clock alone: `FilterClock.next_change`.

A service that stores membership must move a contact out of "signed up in the last 30 days"
at the microsecond its sign-up turns 30 days old, with no write to wake it. Sweeping every
audience every minute costs contacts x audiences and is late by up to the interval; knowing
the next instant per contact costs one evaluation or two per write and is never late.

The answer is a function of the instants of the filter's relative values (`FilterClock.relatives`),
and each of them moves in one of two ways:

- **by steps** (`next_step`): a start of day, week, month or year, a period's month-days, a
  date: constant between calendar boundaries, which are known without the record;
- **with the clock** (`Ago`): `now - duration` moves with `now` (within a UTC day for a
  duration with months, whose calendar part steps at midnight). A comparison with it flips
  only where the instant meets the value compared, and only the evaluation knows which
  values those are (a field, a data path, each action's timestamp, a maximum).

So the record is evaluated with each moving instant replaced by a `_Probe`, a datetime that
notes every value compared with it. The evaluation's path depends only on its comparisons'
outcomes; no outcome changes before the first instant at which a probe would meet a noted
value or a step comes, so the answer is constant until then. There the record is evaluated
again (with fresh probes: a count that stopped at its threshold may read further rows), and
so on until the answer differs: the first such instant is exact, and never late.
"""

from __future__ import annotations

import heapq
from collections.abc import Callable, Iterable, Mapping, Sequence
from datetime import date, datetime, timedelta
from typing import Any, cast

from ...language.anniversary import MonthDays
from ...language.calendar import Relative
from ...language.relative import Ago
from .compiler import Evaluator

Record = Mapping[str, Any]
Instant = date | str | MonthDays
_TICK = timedelta(microseconds=1)
DEFAULT_LIMIT = 64
"""Evaluations one search makes before it hands back the instant it reached."""


class _Probe(datetime):
    """An instant that notes the date-times compared with it. Python asks the right operand's
    reflected method first when its type is a subclass of the left one's, so `value >= probe`
    reaches `__le__` here as surely as `probe <= value` does."""

    noted: list[datetime]

    def _note(self, other: object) -> None:
        if isinstance(other, datetime):
            self.noted.append(other)

    def __lt__(self, other: object) -> bool:
        self._note(other)
        return datetime.__lt__(self, other)  # type: ignore[operator]

    def __le__(self, other: object) -> bool:
        self._note(other)
        return datetime.__le__(self, other)  # type: ignore[operator]

    def __gt__(self, other: object) -> bool:
        self._note(other)
        return datetime.__gt__(self, other)  # type: ignore[operator]

    def __ge__(self, other: object) -> bool:
        self._note(other)
        return datetime.__ge__(self, other)  # type: ignore[operator]

    def __eq__(self, other: object) -> bool:
        self._note(other)
        return datetime.__eq__(self, other)

    def __ne__(self, other: object) -> bool:
        self._note(other)
        return datetime.__ne__(self, other)

    __hash__ = datetime.__hash__


def _probe(instant: datetime) -> _Probe:
    probe = _Probe(
        instant.year,
        instant.month,
        instant.day,
        instant.hour,
        instant.minute,
        instant.second,
        instant.microsecond,
        instant.tzinfo,
        fold=instant.fold,
    )
    probe.noted = []
    return probe


class Clockwork:
    """What a filter's searches share, prepared once per filter (`FilterClock.next_change` keeps
    it): which instants move with the clock, and which relative values may step."""

    def __init__(
        self,
        evaluate: Evaluator,
        relatives: Sequence[Relative],
        resolvers: Sequence[Callable[[datetime], Instant]],
    ) -> None:
        self.evaluate = evaluate
        self.resolvers = tuple(resolvers)
        self.moving = tuple(isinstance(r, Ago) for r in relatives)
        # An exact duration never steps: only the others are asked for their next step.
        self.stepping = tuple(r for r in relatives if not isinstance(r, Ago) or r.months)

    def next_change(
        self, record: Record, now: datetime, until: datetime | None, limit: int = DEFAULT_LIMIT
    ) -> datetime | None:
        """The first instant after `now` (before `until`) at which the record's answer
        differs from its answer at `now`, or None if it never does. After `limit` evaluations
        without a change, the instant the search reached: the answer holds until then, and a
        caller asks again from there."""
        crossings: list[datetime] = []
        start = self._answer(record, now, crossings)
        moment = now
        for _ in range(limit):
            following = self._next_instant(moment, crossings)
            if following is None or (until is not None and following >= until):
                return None
            if self._answer(record, following, crossings) != start:
                return following
            moment = following
        reached = self._next_instant(moment, crossings)
        return None if reached is None or (until is not None and reached >= until) else reached

    def _answer(self, record: Record, now: datetime, crossings: list[datetime]) -> bool:
        """The answer at `now`; the instants at which a moving value meets a value it was
        compared with join `crossings` (a heap)."""
        instants: list[Any] = []
        probes: list[tuple[_Probe, datetime]] = []
        for moving, resolve in zip(self.moving, self.resolvers, strict=True):
            instant = resolve(now)
            if moving:
                probe = _probe(cast(datetime, instant))
                probes.append((probe, cast(datetime, instant)))
                instant = probe
            instants.append(instant)
        answer = bool(self.evaluate(record, tuple(instants)))
        for probe, instant in probes:
            _cross(now, instant, probe.noted, crossings)
        return answer

    def _next_instant(self, now: datetime, crossings: list[datetime]) -> datetime | None:
        """The first instant after `now` at which some comparison may flip."""
        while crossings and crossings[0] <= now:
            heapq.heappop(crossings)
        step = self.next_step(now)
        if not crossings:
            return step
        return crossings[0] if step is None or crossings[0] < step else step

    def next_step(self, now: datetime) -> datetime | None:
        """The first instant after `now` at which a calendar value of the filter steps: where
        every record's answer may change at once (the moving ones aside)."""
        steps = [s for r in self.stepping if (s := r.next_step(now)) is not None]
        return min(steps, default=None)

    def next_crossing(
        self, values: Iterable[datetime], now: datetime, until: datetime | None = None
    ) -> datetime | None:
        """The first instant after `now` at which a moving instant meets one of `values`, or a
        calendar value steps: no comparison of those values flips before. For a caller that
        cannot evaluate the record in memory (a database decides it) but knows the date-times
        it holds: waking then and deciding again is never late, only sometimes early."""
        offsets = [now - instant for instant in self._moving_instants(now)]
        first = self.next_step(now)
        for value in values:
            for offset in offsets:
                try:
                    meeting = value + offset
                except (OverflowError, TypeError):
                    continue
                if meeting <= now:  # a strict comparison flips a microsecond later
                    meeting += _TICK
                    if meeting <= now:
                        continue
                if first is None or meeting < first:
                    first = meeting
        return None if first is None or (until is not None and first >= until) else first

    def crossing_horizon(self, now: datetime) -> datetime | None:
        """The earliest date-time a moving instant has yet to meet (None: the filter has
        none): a value before it flips no comparison again."""
        return min(self._moving_instants(now), default=None)

    def _moving_instants(self, now: datetime) -> list[datetime]:
        pairs = zip(self.moving, self.resolvers, strict=True)
        return [cast(datetime, resolve(now)) for moving, resolve in pairs if moving]


def _cross(now: datetime, instant: datetime, noted: list[datetime], heap: list[datetime]) -> None:
    # The moving instant runs with the clock: it meets `value` after `value - instant`; a
    # strict and a non-strict comparison flip at that microsecond and the next.
    for value in noted:
        try:
            meeting = now + (value - instant)
        except (OverflowError, TypeError):
            continue  # beyond the calendar, or a naive value the evaluation refused
        if meeting > now:
            heapq.heappush(heap, meeting)
        after = meeting + _TICK
        if after > now:
            heapq.heappush(heap, after)
