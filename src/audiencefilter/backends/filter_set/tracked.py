"""One record followed through its changes: only what a change can move is judged again.

Why: a contact changes one field at a time (a plan, a country, a score), and most of a large
set's filters do not read that field. `FilterSet.matching` judges a record whole; a `Tracked`
record keeps the truth of every distinct node of the set's graph (`graph.py`) for the
record's last state, so a change computes only the conditions on the changed fields (by the
same value and bound indexes), and the graph propagates the conditions whose truth moved up
to the filters they reach. Work grows with what the change moves, not with the set.

The price is memory: one truth per distinct node, held per tracked record, and a snapshot of
the record's values (compared by equality to find what changed: a value mutated in place is
not seen, give a new one). Relative date-times are taken at the `now` of `track`, since time
moving would change conditions no field change touches: track again for another instant.

Exactness: conditions and logic are those of `FilterSet.matching`, which answers as each
filter alone. A record on which computing a condition raises (a value of the wrong type) is
judged by each filter's own predicate, as the set does, and the next change starts afresh.
Filters with relation conditions are judged by their own predicate at every change.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol

from . import graph_fast as memory_graph_fast
from .graph import Climber, Graph, Truth

Record = Mapping[str, Any]
_MISSING = object()
_CONTAINERS = (list, tuple, dict, set, frozenset)


class Leaves(Protocol):
    """What the set computes for a tracker: the truths of its conditions."""

    def all(self, record: Record) -> list[Truth]:
        """Every condition's truth, by number (for conditions of other sets: FALSE)."""
        ...

    def on(self, name: str, record: Record) -> dict[int, Truth]:
        """The conditions reading field `name` that are not FALSE, with their truths."""
        ...

    def fill(self, name: str, record: Record, sink: Any) -> None:
        """Writes into `sink` the truths of the conditions reading field `name` (those left
        out are FALSE): `sink[number] = truth`, or `sink.all(numbers, truth, start, stop)`
        for many (`numbers[start:stop]`, one of the set's own lists)."""
        ...

    def judge(self, position: int, record: Record) -> bool:
        """A filter's own answer, at the tracked instant."""
        ...


@dataclass
class Layout:
    """A set's graph, where each filter's root is in it, and what reads which field."""

    graph: Graph
    roots: dict[int, list[int]]  # node number -> positions of the filters rooted there
    fields: tuple[str, ...]  # the fields some condition of the graph reads
    alone: list[int]  # positions judged by their own predicate
    leaves_on: dict[str, list[int]] = field(default_factory=dict)
    crossing: dict[str, list[int]] = field(default_factory=dict)  # also reading another field
    arrays: memory_graph_fast.Arrays | None = None  # the graph's shape for the fast climb

    def climber(self) -> Climbing:
        """The fast climb (`memory_graph_fast`) where it is on, else the plain one."""
        if not memory_graph_fast.ENABLED:
            return PlainClimb(self)
        if self.arrays is None:
            self.arrays = memory_graph_fast.Arrays(self.graph, self.roots, self.leaves_on)
        return memory_graph_fast.Climber(self.arrays, self.graph)


class Climbing(Protocol):
    """A tracked record's truths above its conditions (`graph.Climber` and its fast
    twin): set from the conditions' truths, then moved by their changes; with the positions
    of the filters rooted in the graph that the record matches."""

    def start(self, truths: list[Truth]) -> None: ...

    def members(self) -> list[int]:
        """The positions of the rooted filters the record matches, ascending."""
        ...

    def fields(self, names: Sequence[str], fill: Fill) -> Any:
        """The conditions on the fields `names` that changed, their truths written by `fill`
        (which raises where a condition cannot be computed), for `climb`."""
        ...

    def climb(self, fields: Any) -> tuple[list[int], list[int]]:
        """Takes what `fields` found; the positions of the rooted filters entered and left,
        each ascending."""
        ...


Fill = Callable[[str, Any], None]  # writes the truths of a field's conditions into a sink


class PlainClimb:
    """The plain climb (`graph.Climber`) fed by fields: the conditions whose truth
    moved found by Python sets."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.climber = Climber(layout.graph, layout.roots)
        self.truths: list[Truth] = []  # the conditions'
        self.seen: dict[str, Mapping[int, Truth]] = {}  # per field: its conditions not FALSE

    def start(self, truths: list[Truth]) -> None:
        self.truths = truths
        self.seen = {
            name: {n: truths[n] for n in numbers if truths[n] is not False}
            for name, numbers in self.layout.leaves_on.items()
        }
        self.climber.start(truths)

    def members(self) -> list[int]:
        return self.climber.members()

    def fields(self, names: Sequence[str], fill: Fill) -> dict[str, dict[int, Truth]]:
        fresh: dict[str, dict[int, Truth]] = {}
        for name in names:
            fill(name, fresh.setdefault(name, {}))
        return fresh

    def climb(self, fresh: Mapping[str, Mapping[int, Truth]]) -> tuple[list[int], list[int]]:
        truths, crossing = self.truths, self.layout.crossing
        moved: list[int] = []
        for name, now_set in fresh.items():
            # The conditions whose truth differs between the two states (a set operation on
            # the pairs, in C: most conditions of a common field hold the same truth), and
            # those also reading another field, whose last truth may come from that field.
            candidates = {number for number, _ in self.seen[name].items() ^ now_set.items()}
            candidates.update(crossing.get(name, ()))
            for number in candidates:
                truth = now_set.get(number, False)
                if truth is not truths[number]:
                    truths[number] = truth
                    moved.append(number)
            self.seen[name] = now_set
        return self.climber.climb(moved, truths)


class Tracked:
    """A record followed through changes: `matching` now, `update` with its next state."""

    def __init__(self, layout: Layout, leaves: Leaves, record: Record) -> None:
        self._layout = layout
        self._leaves = leaves
        self._record: dict[str, Any] = {}
        self._tracking = False  # whether the climber holds the last state's truths
        self._climber: Climbing = PlainClimb(layout)
        # The rooted filters matched are the climber's while it tracks (kept here too, they
        # cost a set update of every filter entered or left at each change); here only when
        # it does not. Those judged alone are kept here.
        self._rooted: set[int] = set()
        self._alone_in: set[int] = set()
        self._start(record)

    @property
    def matching(self) -> list[int]:
        """The positions of the filters the record's last state matches, ascending."""
        rooted = self._climber.members() if self._tracking else self._rooted
        return sorted([*rooted, *self._alone_in]) if self._alone_in else list(rooted)

    def update(self, record: Record) -> tuple[list[int], list[int]]:
        """Takes the record's new state; the positions of the filters it entered and of those
        it left, each ascending.

        Raises:
            RecordError: a value of the wrong type, where one of the filters alone raises it.
        """
        if not self._tracking or not isinstance(record, Mapping):
            return self._restart(record)
        names = self._changed(record)
        moved = self._moved(record, names)
        if moved is None:
            return self._restart(record)
        entered, left = moved
        if self._layout.alone:
            entered, left = self._alone(record, entered, left)
        kept = self._record  # the values of the fields that did not change are equal
        for name in names:
            kept[name] = record.get(name)
        return entered, left

    def _alone(
        self, record: Record, entered: list[int], left: list[int]
    ) -> tuple[list[int], list[int]]:
        """The flips of the filters judged alone added to the climb's (each position is
        rooted in the graph or judged alone, never both)."""
        judge, was = self._leaves.judge, self._alone_in
        now = {position for position in self._layout.alone if judge(position, record)}
        self._alone_in = now
        return sorted([*entered, *(now - was)]), sorted([*left, *(was - now)])

    def _restart(self, record: Record) -> tuple[list[int], list[int]]:
        before = set(self.matching)
        self._start(record)
        after = set(self.matching)
        return sorted(after - before), sorted(before - after)

    def _changed(self, record: Record) -> list[str]:
        old = self._record  # the same object is the same value: most fields, not called
        return [
            name
            for name in self._layout.fields
            if (was := old.get(name, _MISSING)) is not (now := record.get(name, _MISSING))
            and _differs(was, now)
        ]

    def _moved(self, record: Record, names: Sequence[str]) -> tuple[list[int], list[int]] | None:
        """The positions of the rooted filters entered and left on changes of fields `names`
        (`Climbing.climb`); None if computing a condition raised."""
        fill = self._leaves.fill
        try:
            fields = self._climber.fields(names, lambda name, sink: fill(name, record, sink))
        except Exception:  # a wrong type: judged by each filter alone (module docstring)
            return None
        return self._climber.climb(fields)

    def _start(self, record: Record) -> None:
        """Judges the record whole: every condition, then every node once."""
        layout = self._layout
        try:
            self._record = {name: record.get(name) for name in layout.fields}
            truths = self._leaves.all(record)
        except Exception:  # a wrong type: each filter alone says where
            self._tracking = False
            positions = [p for ps in layout.roots.values() for p in ps]
            self._rooted = {p for p in positions if self._leaves.judge(p, record)}
        else:
            self._climber = climber = layout.climber()
            climber.start(truths)
            self._tracking = True
            self._rooted = set()
        self._alone_in = {p for p in layout.alone if self._leaves.judge(p, record)}


def _differs(old: Any, new: Any) -> bool:
    """Whether a field's value changed: by type as well as by equality (`1` is not `True`,
    `1.0` is not `1`, for the conditions that tell them apart)."""
    if old is new:
        return False
    if old.__class__ is not new.__class__ or isinstance(new, _CONTAINERS):
        return True  # a container's items may differ in type alone: `[1] == [True]`
    if isinstance(new, datetime):
        # Within one zone Python compares wall times and ignores `fold`: the two instances of
        # a repeated hour are equal to it, an hour apart to every condition.
        return bool(old != new or old.utcoffset() != new.utcoffset())
    return bool(old != new)
