"""The climb of a change through a set's graph with numpy: a wave of nodes per step.

Why: a change of a common condition (a boolean, a country most contacts share) reaches
thousands of nodes in a set of 100,000 filters, and the plain climb (`Graph.propagate`)
spends about a microsecond of Python on each. Here each node of logic keeps, per tracked
record, how many of its children are FALSE and how many UNKNOWN; a child's change adds its
difference to its parents' counts (one `numpy.add.at` for the whole wave), each parent's
truth follows from its counts in Kleene logic (AND: FALSE if one child is FALSE, else UNKNOWN
if one is UNKNOWN, else TRUE; OR dually; NOT from its child's counts), and the parents whose truth
moved make the next wave. Counts make the order of the waves indifferent: a node reached
again later takes the later change as a difference too.

Beside the plain climb and held to it by `tests/test_memory_many.py` (the same answers with
it on and off, on generated filters sharing sub-trees). Off without numpy, with
`AUDIENCEFILTER_FAST_GRAPH=0`, or with `audiencefilter.backends.memory_graph_fast.ENABLED =
False` (read when a record starts being tracked).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any

from .memory_graph import AND, CONST, NOT, OR, Graph, Truth

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional (the `sets` extra)
    np = None  # type: ignore[assignment]

ENABLED = np is not None and os.environ.get("AUDIENCEFILTER_FAST_GRAPH", "1") != "0"
FALSE, TRUE, UNKNOWN = 0, 1, 2
_CODE = {False: FALSE, True: TRUE, None: UNKNOWN}
_TRUTH: tuple[Truth, ...] = (False, True, None)


class Arrays:
    """A graph's shape as arrays, built once per set: kinds, child counts, parents."""

    def __init__(self, graph: Graph, roots: Mapping[int, Sequence[int]]) -> None:
        size = graph.size
        children: list[int] = []
        owners: list[int] = []
        for index, (kind, items) in enumerate(zip(graph.kinds, graph.children, strict=True)):
            if kind != CONST:
                children.extend(items)
                owners.extend([size + index] * len(items))
        self.size = size
        self.kinds = np.array(graph.kinds, dtype=np.int8)
        self.counts = np.array([len(items) for items in graph.children], dtype=np.int32)
        self.edge_children = np.array(children, dtype=np.int64)
        self.edge_owners = np.array(owners, dtype=np.int64)
        order = np.argsort(self.edge_children, kind="stable")
        self.parents = self.edge_owners[order]  # grouped by child: `starts` says where
        total = size + graph.distinct
        self.roots = np.zeros(total, dtype=bool)
        self.roots[list(roots)] = True
        self.starts = np.searchsorted(self.edge_children[order], np.arange(total + 1))
        rooted = sorted(roots)  # the positions of each root, grouped: `placed` says where
        self.positions = np.array([p for n in rooted for p in roots[n]], dtype=np.int64)
        held = np.zeros(total, dtype=np.int64)
        held[rooted] = [len(roots[n]) for n in rooted]
        self.placed = np.concatenate(([0], np.cumsum(held)))


def _runs(starts: Any, lengths: Any) -> Any:
    """The indexes of consecutive runs, `starts[i]` to `starts[i] + lengths[i]`, one after
    the other: the children's parents of a wave, the positions of the roots that moved."""
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(lengths.sum())) + offsets


def _spread(placed: Any, numbers: Any, codes: Any) -> tuple[Any, Any]:
    """Where the positions of each of `numbers` are held in `Arrays.positions` (from
    `placed[n]` to `placed[n + 1]`), each with its number's code."""
    starts, lengths = placed[numbers], placed[numbers + 1] - placed[numbers]
    return _runs(starts, lengths), np.repeat(codes, lengths)


def _distinct(numbers: Any) -> Any:
    """The distinct numbers, ascending: a sort and a comparison of neighbours. `numpy.unique`
    hashes its input since numpy 2.3, several times slower on the short arrays of a wave
    (28 against 8 us at 100 items, 680 against 60 us at 5,000)."""
    ordered = np.sort(numbers)
    if ordered.size < 2:
        return ordered
    keep = np.empty(ordered.size, dtype=bool)
    keep[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=keep[1:])
    return ordered[keep]


class Climber:
    """One tracked record's truths as codes, and its nodes' counts of FALSE and UNKNOWN,
    held in one integer per node (`_WEIGHT`): one scatter per wave moves both."""

    def __init__(self, arrays: Arrays, graph: Graph) -> None:
        self.arrays = arrays
        self.graph = graph
        self.state: Any = None
        self.tallies: Any = None  # FALSE children << 32 | UNKNOWN children, per node

    def start(self, truths: list[Truth]) -> None:
        """Every node's truth from the leaves' (the graph evaluated once, as the plain way)."""
        whole = list(truths)
        self.graph.evaluate(whole)
        self.state = np.array([_CODE[t] for t in whole], dtype=np.int8)
        arrays, size = self.arrays, self.arrays.size
        children = self.state[arrays.edge_children]
        owners = arrays.edge_owners - size
        length = len(arrays.kinds)
        falses = np.bincount(owners, children == FALSE, length).astype(np.int64)
        unknowns = np.bincount(owners, children == UNKNOWN, length).astype(np.int64)
        self.tallies = (falses << _SHIFT) | unknowns

    def truth(self, number: int) -> Truth:
        return _TRUTH[int(self.state[number])]

    def climb(self, changed: list[int], truths: list[Truth]) -> tuple[list[int], list[int]]:
        """Takes the new truths of the `changed` leaves (from `truths`); the positions of the
        filters whose root moved, those now TRUE and the others."""
        if not changed:
            return [], []
        ids = np.array(changed, dtype=np.int64)
        new = np.array([_CODE[truths[n]] for n in changed], dtype=np.int8)
        old = self.state[ids]
        self.state[ids] = new
        moved = [ids]
        while ids.size:
            ids, old, new = self._wave(ids, old, new)
            moved.append(ids)
        numbers = np.concatenate(moved)
        roots = _distinct(numbers[self.arrays.roots[numbers]])
        held, codes = _spread(self.arrays.placed, roots, self.state[roots])
        positions, member = self.arrays.positions[held], codes == TRUE
        return positions[member].tolist(), positions[~member].tolist()

    def _wave(self, ids: Any, old: Any, new: Any) -> tuple[Any, Any, Any]:
        """The parents of nodes moved from `old` to `new`: their counts, then their truths."""
        arrays, size = self.arrays, self.arrays.size
        starts, ends = arrays.starts[ids], arrays.starts[ids + 1]
        lengths = ends - starts
        if not lengths.any():
            return ids[:0], old[:0], new[:0]
        parents = arrays.parents[_runs(starts, lengths)] - size
        np.add.at(self.tallies, parents, np.repeat(_WEIGHT[new] - _WEIGHT[old], lengths))
        nodes = _distinct(parents)
        truths = self._truths(nodes)
        numbers = nodes + size
        was = self.state[numbers]
        moving = truths != was
        numbers, was, truths = numbers[moving], was[moving], truths[moving]
        self.state[numbers] = truths
        return numbers, was, truths

    def _truths(self, nodes: Any) -> Any:
        """Kleene logic from the counts, read from `_KLEENE` by kind and by which counts are
        not zero: a NOT counts its one child as an AND would (FALSE child: TRUE)."""
        arrays, tallies = self.arrays, self.tallies[nodes]
        falses, unknowns = tallies >> _SHIFT, tallies & _LOW
        trues = arrays.counts[nodes] - falses - unknowns
        index = arrays.kinds[nodes].astype(np.intp) << 3
        index |= (falses > 0) << 2
        index |= (unknowns > 0) << 1
        index |= trues > 0
        return _KLEENE[index]


def _kleene() -> Any:
    """The truth of a node by `kind << 3 | any FALSE << 2 | any UNKNOWN << 1 | any TRUE`."""
    table = np.zeros(32, dtype=np.int8)
    for index in range(32):
        kind, false, unknown = index >> 3, index & 4, index & 2
        if kind == AND:
            table[index] = FALSE if false else UNKNOWN if unknown else TRUE
        elif kind == OR:
            table[index] = TRUE if index & 1 else UNKNOWN if unknown else FALSE
        elif kind == NOT:
            table[index] = TRUE if false else UNKNOWN if unknown else FALSE
    return table


_KLEENE = _kleene() if np is not None else None
_SHIFT, _LOW = 32, (1 << 32) - 1
# What a child of each code adds to its parent's tally: FALSE in the high half, UNKNOWN low.
_WEIGHT = np.array([1 << _SHIFT, 0, 1], dtype=np.int64) if np is not None else None
