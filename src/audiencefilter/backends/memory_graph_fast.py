"""The climb of a change through a set's graph with numpy: a wave of nodes per step.

Why: a change of a common condition (a boolean, a country most contacts share) reaches
thousands of nodes in a set of 100,000 filters, and the plain climb (`Graph.propagate`)
spends about a microsecond of Python on each. Here each node of logic keeps, per tracked
record, how many of its children are FALSE and how many UNKNOWN; a child's change adds its
difference to its parents' counts (one `numpy.add.at` for the whole wave), each parent's
truth follows from its counts in Kleene logic (AND: FALSE if one child is FALSE, else UNKNOWN
if one is UNKNOWN, else TRUE; OR dually; NOT from its child), and the parents whose truth
moved make the next wave. Counts make the order of the waves indifferent: a node reached
again later takes the later change as a difference too.

Beside the plain climb and held to it by `tests/test_memory_many.py` (the same answers with
it on and off, on generated filters sharing sub-trees). Off without numpy, with
`AUDIENCEFILTER_FAST_GRAPH=0`, or with `audiencefilter.backends.memory_graph_fast.ENABLED =
False` (read when a record starts being tracked).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
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

    def __init__(self, graph: Graph, roots: Iterable[int]) -> None:
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
        single = [items[0] if kind == NOT else 0 for kind, items in _shape(graph)]
        self.single = np.array(single, dtype=np.int64)
        self.edge_children = np.array(children, dtype=np.int64)
        self.edge_owners = np.array(owners, dtype=np.int64)
        order = np.argsort(self.edge_children, kind="stable")
        self.parents = self.edge_owners[order]  # grouped by child: `starts` says where
        total = size + graph.distinct
        self.roots = np.zeros(total, dtype=bool)
        self.roots[list(roots)] = True
        self.starts = np.searchsorted(self.edge_children[order], np.arange(total + 1))


def _shape(graph: Graph) -> list[tuple[int, tuple[int, ...]]]:
    return list(zip(graph.kinds, graph.children, strict=True))


class Climber:
    """One tracked record's truths as codes, and its nodes' counts of FALSE and UNKNOWN."""

    def __init__(self, arrays: Arrays, graph: Graph) -> None:
        self.arrays = arrays
        self.graph = graph
        self.state: Any = None
        self.falses: Any = None
        self.unknowns: Any = None

    def start(self, truths: list[Truth]) -> None:
        """Every node's truth from the leaves' (the graph evaluated once, as the plain way)."""
        whole = list(truths)
        self.graph.evaluate(whole)
        self.state = np.array([_CODE[t] for t in whole], dtype=np.int8)
        arrays, size = self.arrays, self.arrays.size
        children = self.state[arrays.edge_children]
        owners = arrays.edge_owners - size
        length = len(arrays.kinds)
        self.falses = np.bincount(owners, children == FALSE, length).astype(np.int32)
        self.unknowns = np.bincount(owners, children == UNKNOWN, length).astype(np.int32)

    def truth(self, number: int) -> Truth:
        return _TRUTH[int(self.state[number])]

    def climb(self, changed: list[int], truths: list[Truth]) -> list[tuple[int, Truth]]:
        """Takes the new truths of the `changed` leaves (from `truths`); the roots whose truth
        moved, with their truths."""
        if not changed:
            return []
        ids = np.array(changed, dtype=np.int64)
        new = np.array([_CODE[truths[n]] for n in changed], dtype=np.int8)
        old = self.state[ids]
        self.state[ids] = new
        moved = [ids]
        while ids.size:
            ids, old, new = self._wave(ids, old, new)
            moved.append(ids)
        numbers = np.concatenate(moved)
        roots = np.unique(numbers[self.arrays.roots[numbers]])
        codes = self.state[roots].tolist()
        return [(number, _TRUTH[code]) for number, code in zip(roots.tolist(), codes, strict=True)]

    def _wave(self, ids: Any, old: Any, new: Any) -> tuple[Any, Any, Any]:
        """The parents of nodes moved from `old` to `new`: their counts, then their truths."""
        arrays, size = self.arrays, self.arrays.size
        starts, ends = arrays.starts[ids], arrays.starts[ids + 1]
        lengths = ends - starts
        count = int(lengths.sum())
        if count == 0:
            return ids[:0], old[:0], new[:0]
        offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
        parents = arrays.parents[np.arange(count) + offsets] - size
        before, after = np.repeat(old, lengths), np.repeat(new, lengths)
        np.add.at(self.falses, parents, (after == FALSE).astype(np.int32) - (before == FALSE))
        np.add.at(self.unknowns, parents, (after == UNKNOWN).astype(np.int32) - (before == UNKNOWN))
        nodes = np.unique(parents)
        truths = self._truths(nodes)
        numbers = nodes + size
        was = self.state[numbers]
        moving = truths != was
        numbers, was, truths = numbers[moving], was[moving], truths[moving]
        self.state[numbers] = truths
        return numbers, was, truths

    def _truths(self, nodes: Any) -> Any:
        """Kleene logic from the counts (and a NOT from its child)."""
        arrays = self.arrays
        kinds, falses, unknowns = arrays.kinds[nodes], self.falses[nodes], self.unknowns[nodes]
        trues = arrays.counts[nodes] - falses - unknowns
        conjunction = np.where(falses > 0, FALSE, np.where(unknowns > 0, UNKNOWN, TRUE))
        disjunction = np.where(trues > 0, TRUE, np.where(unknowns > 0, UNKNOWN, FALSE))
        inner = self.state[arrays.single[nodes]]
        negation = np.where(inner == UNKNOWN, UNKNOWN, 1 - inner)
        found = np.where(kinds == AND, conjunction, np.where(kinds == OR, disjunction, negation))
        return found.astype(np.int8)
