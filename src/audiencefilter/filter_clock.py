"""`FilterClock`: what a filter's answers do with time alone, behind `Filter.clock`.

A filter with relative date-times (`{"ago": "P30D"}`, `{"this": "month"}`) gives answers
that change with the clock. Everything that asks about that (its relative values and the
instants they stand for, the absolute filter at an instant, a predicate reading a clock, the
next instant a record's answer changes) lives here, on one object a filter builds once, so
`Filter` keeps to what a filter is and does and its clock questions are found in one place.
An absolute filter answers each question at once, without compiling anything.

Six of these members are also reachable on `Filter` itself, as one-line forwards kept for code
written before they moved (docs/api.md#the-filters-clock).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from datetime import date, datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, Generic, Protocol, TypeVar

from .language.anniversary import MonthDays
from .language.calendar import Relative
from .language.fields import Schema
from .language.nodes import Node, relative_values, resolve
from .language.relative import Ago, Clock, as_now, system_clock

if TYPE_CHECKING:
    from .backends.memory.clock import Clockwork
    from .backends.memory.compiler import Evaluator

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]
Instant = date | str | MonthDays


class Timed(Protocol):
    """What the clock reads of its filter: the user's tree and schema (to resolve), the
    lowered tree (its relative values) and the compiled function (to evaluate at instants)."""

    @property
    def root(self) -> Node: ...

    @property
    def schema(self) -> Schema: ...

    @property
    def lowered(self) -> Node: ...

    @property
    def evaluator(self) -> Evaluator: ...


T = TypeVar("T", bound=Timed)


class FilterClock(Generic[T]):
    """A filter's answers against time: `f.clock`, built once per filter.

    `rebuild(root, schema)` makes a filter of the same kind from a tree (`resolve` returns
    one), so this module needs no import of the facade it serves.
    """

    def __init__(self, owner: T, rebuild: Callable[[Node, Schema], T]) -> None:
        self._owner = owner
        self._rebuild = rebuild

    def __repr__(self) -> str:
        return f"FilterClock({len(self.relatives)} relative values)"

    @cached_property
    def relatives(self) -> tuple[Relative, ...]:
        """The distinct relative date-times of the filter, in reading order (the order the
        compiled function takes their instants in)."""
        return relative_values(self._owner.lowered)

    @property
    def is_relative(self) -> bool:
        """Whether membership can change with time alone (the filter holds `{"ago": ...}`)."""
        return bool(self.relatives)

    def instants(self, now: datetime | None = None) -> tuple[Instant, ...]:
        """The instant each of `relatives` stands for at `now` (default: the system clock)."""
        moment = as_now(system_clock() if now is None else now)
        return tuple([before(moment) for before in self.resolvers])

    @cached_property
    def resolvers(self) -> tuple[Callable[[datetime], Instant], ...]:
        """One resolver per relative value, kept with the filter: calendar values (starts,
        periods, anniversaries' month-days) are computed once per calendar unit, so calls at
        nearby instants reuse them."""
        return tuple(relative.resolver() for relative in self.relatives)

    def resolve(self, now: datetime | None = None) -> T:
        """The absolute filter this one is at `now` (default: the system clock): each relative
        date-time replaced by its instant, or on a date field by its local date, inside
        relations too (`language/nodes.resolve`). A filter without any is returned as it is."""
        owner = self._owner
        if not self.relatives:
            return owner
        moment = as_now(system_clock() if now is None else now)
        return self._rebuild(resolve(owner.root, owner.schema, moment), owner.schema)

    def predicate_at(self, clock: Clock) -> Predicate:
        """The predicate reading `clock` on every call; the plain one for an absolute filter.

        `clock` returns an aware datetime (a naive one is taken as UTC). The instants of the
        last `now` it gave are kept, so a clock that holds still for a batch costs one
        resolution, not one per record.
        """
        if not self.relatives:
            return self._owner.evaluator
        return self._owner.evaluator.on_clock(clock)

    def next_change(
        self, record: Record, now: datetime | None = None, *, until: datetime | None = None
    ) -> datetime | None:
        """The first instant after `now` (default: the clock) at which `matches(record)`
        gives another answer with the record unchanged, or None if time alone never changes
        it (before `until`, when given). What a store of memberships wakes up for: a sign-up
        leaving "the last 30 days", a window's edge, a calendar boundary, an anniversary.
        A search that needs many evaluations (a long history) may stop early and return an
        instant at which the answer has not changed yet: asking again from there goes on."""
        if not self.relatives:
            return None
        moment = as_now(system_clock() if now is None else now)
        limit = None if until is None else as_now(until)
        return self._clockwork.next_change(record, moment, limit)

    @cached_property
    def _clockwork(self) -> Clockwork:
        from .backends.memory.clock import Clockwork

        return Clockwork(self._owner.evaluator, self.relatives, self.resolvers)

    def next_step(self, now: datetime | None = None) -> datetime | None:
        """The first instant after `now` at which a calendar value of the filter (a start of
        day, week, month or year, a period, an anniversary's days) steps: every record's
        answer may change then, durations (`ago`) aside. None if the filter has none."""
        if not self.relatives:
            return None
        return self._clockwork.next_step(as_now(system_clock() if now is None else now))

    def next_crossing(
        self,
        values: Iterable[datetime],
        now: datetime | None = None,
        *,
        until: datetime | None = None,
    ) -> datetime | None:
        """For a record decided elsewhere (a database) whose date-times are `values`: the
        first instant after `now` at which the answer may change, a duration meeting a value
        or a calendar value stepping. Deciding again then is never late, at worst early; the
        exact instant needs the record itself (`next_change`)."""
        if not self.relatives:
            return None
        moment = as_now(system_clock() if now is None else now)
        limit = None if until is None else as_now(until)
        return self._clockwork.next_crossing(values, moment, limit)

    def crossing_horizon(self, now: datetime | None = None) -> datetime | None:
        """The earliest date-time a duration of the filter has yet to meet after `now`: older
        values can no longer change the answer with time (None: no duration)."""
        if not self.relatives:
            return None
        return self._clockwork.crossing_horizon(as_now(system_clock() if now is None else now))

    @cached_property
    def moves_with_clock(self) -> bool:
        """Whether the filter compares with a duration before now (`ago`), whose instant moves
        with the clock: each record then has its own instants of change (`next_change`)."""
        return any(isinstance(value, Ago) for value in self.relatives)
