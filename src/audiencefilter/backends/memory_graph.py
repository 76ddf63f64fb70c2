"""The logic of many filters as one graph: each distinct AND, OR and NOT stored once.

Why: a `FilterSet` already computes each distinct condition once per record, but the logic
above the conditions is each filter's own. Accounts build audiences from the same pieces
("French and verified", "not unsubscribed or bounced"), so whole sub-expressions repeat across
filters; stored once, each is evaluated once per record (the A-Tree idea, Ji and Jacobsen,
SIGMOD 2021). The graph is built by hash-consing: a node is its kind and the numbers of its
children, AND and OR children sorted and without repeats (both are commutative and
idempotent in Kleene logic), so `a AND b` in one filter and `b AND a` in another are one node.

Numbers: a leaf keeps its number among the set's distinct conditions (below `size`); a node of
logic is numbered after its children, so one pass in ascending order evaluates every node
after its children, and a change flows upwards through `parents` in ascending order too.

This module knows neither the set nor its leaves' indexes: its host gives it the numbered
trees (leaves are any node carrying a `number`) and the leaves' truths.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Sequence

from ..language.nodes import And, Const, Node, Not, Or

Truth = bool | None
AND, OR, NOT, CONST = 0, 1, 2, 3


class Graph:
    """The distinct nodes of some numbered trees, children before parents."""

    def __init__(self, size: int) -> None:
        self.size = size  # leaves are numbered below it
        self.kinds: list[int] = []  # by node number - size
        self.children: list[tuple[int, ...]] = []  # by node number - size
        self.parents: dict[int, list[int]] = {}
        self.keys: dict[tuple[int, tuple[int, ...]], int] = {}
        self.total = 0  # nodes of logic in the trees, repeats counted

    def add(self, tree: Node) -> int:
        """The number of the tree's root, its nodes added where new."""
        match tree:
            case And() | Or():
                kind = AND if isinstance(tree, And) else OR
                items = sorted({self.add(item) for item in tree.items})
                return items[0] if len(items) == 1 else self.node(kind, tuple(items))
            case Not():
                return self.node(NOT, (self.add(tree.item),))
            case Const():
                return self.node(CONST, (-1 if tree.value is None else int(tree.value),))
        return int(getattr(tree, "number"))  # noqa: B009 - a numbered leaf of the host

    def node(self, kind: int, children: tuple[int, ...]) -> int:
        self.total += 1
        key = (kind, children)
        found = self.keys.get(key)
        if found is None:
            found = self.keys[key] = self.size + len(self.kinds)
            self.kinds.append(kind)
            self.children.append(children)
            if kind != CONST:
                for child in children:
                    self.parents.setdefault(child, []).append(found)
        return found

    @property
    def distinct(self) -> int:
        return len(self.kinds)

    def evaluate(self, truths: list[Truth]) -> None:
        """Appends to the leaves' truths the truth of every node of logic, once each."""
        for kind, children in zip(self.kinds, self.children, strict=True):
            truths.append(_truth(kind, children, truths))

    def propagate(self, truths: list[Truth], changed: Iterable[int]) -> list[int]:
        """Sets again the nodes above the `changed` ones (their truths already set), each
        once and after its children; the nodes whose truth changed, those given included."""
        moved = list(changed)
        waiting = sorted({p for n in moved for p in self.parents.get(n, ())})
        queued = set(waiting)
        size, kinds, children, parents = self.size, self.kinds, self.children, self.parents
        while waiting:
            number = heapq.heappop(waiting)
            truth = _truth(kinds[number - size], children[number - size], truths)
            if truth is truths[number]:
                continue
            truths[number] = truth
            moved.append(number)
            for parent in parents.get(number, ()):
                if parent not in queued:
                    queued.add(parent)
                    heapq.heappush(waiting, parent)
        return moved


def _truth(kind: int, children: Sequence[int], truths: Sequence[Truth]) -> Truth:
    """Kleene logic: AND is FALSE if one child is, TRUE if all are, else UNKNOWN; OR dually."""
    if kind == NOT:
        inner = truths[children[0]]
        return None if inner is None else not inner
    if kind == CONST:
        return None if children[0] < 0 else bool(children[0])
    stop = kind == OR  # the truth that decides: TRUE for OR, FALSE for AND
    unknown = False
    for child in children:
        truth = truths[child]
        if truth is stop:
            return stop
        if truth is None:
            unknown = True
    return None if unknown else not stop
