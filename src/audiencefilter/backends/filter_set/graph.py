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

from collections.abc import Iterable, Mapping, Sequence

from ...language.nodes import And, Const, Node, Not, Or

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
        self.heights: list[int] = []  # by node number - size: 1 above its highest child

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
            below = () if kind == CONST else children
            self.heights.append(1 + max((self.height(c) for c in below), default=0))
            if kind != CONST:
                for child in children:
                    self.parents.setdefault(child, []).append(found)
        return found

    def height(self, number: int) -> int:
        return 0 if number < self.size else self.heights[number - self.size]

    @property
    def distinct(self) -> int:
        return len(self.kinds)

    def evaluate(self, truths: list[Truth]) -> None:
        """Appends to the leaves' truths the truth of every node of logic, once each."""
        for kind, children in zip(self.kinds, self.children, strict=True):
            truths.append(_truth(kind, children, truths))

    def propagate(self, truths: list[Truth], changed: Iterable[int]) -> list[int]:
        """Sets again the nodes above the `changed` ones (their truths already set), each
        once and after its children, level by level; the nodes whose truth changed, those
        given included. A node whose truth stays stops the climb there."""
        moved = list(changed)
        size, kinds, children = self.size, self.kinds, self.children
        levels: dict[int, list[int]] = {}
        queued: set[int] = set()
        self._queue(moved, levels, queued)
        while levels:
            rising: list[int] = []
            for number in levels.pop(min(levels)):
                index = number - size
                truth = _truth(kinds[index], children[index], truths)
                if truth is not truths[number]:
                    truths[number] = truth
                    rising.append(number)
            moved.extend(rising)
            self._queue(rising, levels, queued)
        return moved

    def _queue(self, numbers: list[int], levels: dict[int, list[int]], queued: set[int]) -> None:
        """The parents of `numbers` waiting at their heights, each once."""
        parents, heights, size = self.parents, self.heights, self.size
        for number in numbers:
            for parent in parents.get(number, ()):
                if parent not in queued:
                    queued.add(parent)
                    levels.setdefault(heights[parent - size], []).append(parent)


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


class Climber:
    """The plain climb: one tracked record's truths, leaves then nodes, in a list, and the
    positions of the rooted filters it matches."""

    def __init__(self, graph: Graph, roots: Mapping[int, Sequence[int]]) -> None:
        self.graph = graph
        self.roots = roots  # node number -> positions of the filters rooted there
        self.truths: list[Truth] = []
        self.member: set[int] = set()

    def start(self, truths: list[Truth]) -> None:
        self.truths = list(truths)
        self.graph.evaluate(self.truths)
        self.member = {p for n, ps in self.roots.items() if self.truths[n] is True for p in ps}

    def members(self) -> list[int]:
        return sorted(self.member)

    def climb(self, changed: list[int], truths: list[Truth]) -> tuple[list[int], list[int]]:
        """Takes the new truths of the `changed` leaves (from `truths`); the positions of the
        rooted filters entered and left, each ascending."""
        mine, roots = self.truths, self.roots
        for number in changed:
            mine[number] = truths[number]
        moved = [n for n in self.graph.propagate(mine, changed) if n in roots]
        now = {p for n in moved if mine[n] is True for p in roots[n]}
        left = {p for n in moved if mine[n] is not True for p in roots[n]} & self.member
        entered = now - self.member
        self.member |= entered
        self.member -= left
        return sorted(entered), sorted(left)
