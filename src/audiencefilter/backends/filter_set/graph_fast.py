"""The climb of a change through a set's graph with numpy: a wave of nodes per step.

Why: a change of a common condition (a boolean, a country most contacts share) reaches
thousands of nodes in a set of 100,000 filters, and the plain climb (`Graph.propagate`)
spends about a microsecond of Python on each. Here each node of logic keeps, per tracked
record, how many of its children decide it (FALSE under an AND or a NOT, TRUE under an OR)
and how many are UNKNOWN, in one integer; a child's change adds its difference to its
parents' tallies (one `numpy.add.at` for the whole wave), each parent's truth is read from a
table by its kind and which count is not zero (Kleene logic: the deciding truth if one child
decides, else UNKNOWN if one is UNKNOWN, else the other truth), and the parents whose truth
moved make the next wave. Tallies make the order of the waves indifferent: a node reached
again later takes the later change as a difference too. A wave costs about thirty numpy
calls whatever its size (a microsecond or more each: most waves are small) and a few passes
over its edges (the large waves, thousands of edges, weigh most in the mean), so each step is
one call over the whole wave, in place where numpy allows, and nothing sorts: the parents
reached twice are made distinct by marks. A wave of a few edges (`FEW`), as most climbs end,
is climbed in Python instead, on the same arrays read through memoryviews, where numpy's calls
would cost more than its edges. The filters entered and left are found by numpy too (in
Python for a few), from which rooted filters the record matched.

The numpy waves read less memory at random where the set allows (`COMPACT`): a node's edges
by one gather of a packed span, the tallies in 32 bits, the marks written without a cast.

Beside the plain climb and held to it by `tests/test_memory_many.py` (the same answers with
it on and off, its waves all in numpy, all in Python and by size, compact and not, on
generated filters sharing sub-trees). Off without numpy, with
`AUDIENCEFILTER_FAST_GRAPH=0`, or with `audiencefilter.backends.filter_set.graph_fast.ENABLED =
False` (read when a record starts being tracked).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .graph import AND, CONST, NOT, OR, Graph, Truth

try:
    import numpy as np
except ImportError:  # pragma: no cover - numpy is optional (the `sets` extra)
    np = None  # type: ignore[assignment]

ENABLED = np is not None and os.environ.get("AUDIENCEFILTER_FAST_GRAPH", "1") != "0"
FEW = 24
"""The edges of a wave at or under which it climbs in Python (`Climber._few`), not in numpy:
a wave in numpy costs about thirty calls whatever its size, and an edge in Python about a
thirtieth of that (measured on the benchmark's waves: the two meet near 25 edges). 0 climbs
every wave in numpy. Read when a record starts being tracked."""
FALSE, TRUE, UNKNOWN = 0, 1, 2
COMPACT = True
"""Whether the numpy waves read the set's arrays in their compact forms (`Arrays.compact`):
each node's last edge and count of edges packed in one integer (one gather at random places a
wave, not two), the tallies in 32 bits where every node has fewer than `NARROW` children (half
the bytes read and written at random), and the marks that make a wave's parents distinct
written from a ramp of their own type (numpy cast the edges' indexes at every wave). The waves
are most of a change's time, and their gathers at random places most of theirs. False: the
waves as they were, kept to hold the two to the same answers. Read when a record starts being
tracked."""
NARROW = 1 << 15
"""The children a node has at most for the tallies in 32 bits: 16 bits for each count, one
of them a sign."""
NO_ROOT = 2  # `Climber.held` of a number no filter is rooted at
_CODE = {False: FALSE, True: TRUE, None: UNKNOWN}


class Arrays:
    """A graph's shape as arrays, built once per set: each node's parents (grouped by child,
    `starts` says where), what each edge's parent decides on, and where each root's filters
    are held."""

    def __init__(
        self,
        graph: Graph,
        roots: Mapping[int, Sequence[int]],
        leaves_on: Mapping[str, Sequence[int]],
    ) -> None:
        size = graph.size
        self.fields = {
            name: np.array(numbers, dtype=np.int64) for name, numbers in leaves_on.items()
        }
        children: list[int] = []
        owners: list[int] = []
        for index, (kind, items) in enumerate(zip(graph.kinds, graph.children, strict=True)):
            if kind != CONST:
                children.extend(items)
                owners.extend([index] * len(items))
        kinds = np.array(graph.kinds, dtype=np.int8)
        self.size = size
        self.distinct = graph.distinct
        edge_children = np.array(children, dtype=np.int64)
        order = np.argsort(edge_children, kind="stable")
        self.edge_children = edge_children[order]
        self.parents = np.array(owners, dtype=np.int64)[order]  # node numbers minus `size`
        # Each edge's row of `_Tables.step` and of `_KLEENE`, its parent's kind times 9, one byte an
        # edge, read with the edges: no gather of the parents' kinds, scattered in memory.
        self.rows = kinds[self.parents] * np.int8(9)
        self.starts = np.searchsorted(self.edge_children, np.arange(size + graph.distinct + 1))
        self.stops = self.starts[1:]  # where each number's edges end
        self.degrees = np.diff(self.starts)
        self.rooted = np.array(sorted(roots), dtype=np.int64)
        self.positions = np.array([p for n in self.rooted.tolist() for p in roots[n]], np.int64)
        held = np.zeros(size + graph.distinct, dtype=np.int64)
        held[self.rooted] = [len(roots[n]) for n in self.rooted.tolist()]
        self.placed = np.concatenate(([0], np.cumsum(held)))
        self.single, self.groups = _single(roots, self.rooted, size + graph.distinct)
        self.several = bool(self.groups)
        # The same arrays as memoryviews, read item by item by the waves climbed in Python: an
        # item of a memoryview is a Python integer, read in a third of a numpy item's time.
        self.items = _Items(self.starts, self.parents, self.rows, self.placed, self.positions)
        self.lists: dict[int, tuple[Sequence[int], Any]] = {}  # `Codes`: id -> list, array
        self.ramp = np.arange(0, dtype=np.int64)  # 0, 1, 2...: grown to the largest wave
        self.compact = _Compact(self.stops, self.degrees, graph.children)

    def ramped(self, count: int) -> Any:
        """`numpy.arange(count)` as a view of one array kept for the set (grown when a wave
        is larger than any before): a wave's edges are offsets added to it, and making it
        anew wrote as many numbers again."""
        ramp = self.ramp
        if ramp.size < count:
            ramp = self.ramp = np.arange(max(count, 2 * ramp.size), dtype=np.int64)
        return ramp[:count]


class _Compact:
    """A set's arrays in the forms the compact waves read (`COMPACT`): each number's span,
    where its edges end shifted left by `bits` plus how many they are; whether the tallies fit
    32 bits; a ramp of the marks' type. `spans` is None where the two do not fit one integer."""

    def __init__(self, stops: Any, degrees: Any, children: Sequence[tuple[int, ...]]) -> None:
        self.bits = max(1, int(degrees.max(initial=0)).bit_length())
        self.mask = (1 << self.bits) - 1
        fits = int(stops[-1]) < 1 << (62 - self.bits) if stops.size else True
        self.spans: Any = (stops << self.bits) | degrees if fits else None
        self.narrow = max(map(len, children), default=0) < NARROW
        self.ramp = np.arange(0, dtype=np.int32)

    def places(self, count: int) -> Any:
        """`count` distinct marks of the marks' own type (`Arrays.ramped`, in 32 bits)."""
        ramp = self.ramp
        if ramp.size < count:
            ramp = self.ramp = np.arange(max(count, 2 * ramp.size), dtype=np.int32)
        return ramp[:count]


def _single(roots: Mapping[int, Sequence[int]], rooted: Any, numbers: int) -> tuple[Any, list[Any]]:
    """The one filter rooted at each number, where one is (most roots: a filter's logic is
    seldom another's whole), -1 where none is, and `-2 - k` where several are, `k` their
    positions' index in the list returned with it: the answer reads the positions in one
    gather, and the few roots of several in Python (identical filters are rare, but some
    hold thousands, which one array of each root's gives in one call)."""
    single = np.full(numbers, -1, dtype=np.int64)
    groups: list[Any] = []
    found: list[int] = []
    for number in rooted.tolist():
        positions = roots[number]
        if len(positions) > 1:
            groups.append(np.array(positions, dtype=np.int64))
        found.append(positions[0] if len(positions) == 1 else -1 - len(groups))
    single[rooted] = found
    return single, groups


class _Items:
    """An `Arrays`' shape as memoryviews (`Climber._few`)."""

    __slots__ = ("parents", "placed", "positions", "rows", "starts")

    def __init__(self, starts: Any, parents: Any, rows: Any, placed: Any, positions: Any) -> None:
        self.starts: Any = memoryview(starts)
        self.parents: Any = memoryview(parents)
        self.rows: Any = memoryview(rows)
        self.placed: Any = memoryview(placed)
        self.positions: Any = memoryview(positions)


def _runs(starts: Any, lengths: Any) -> Any:
    """The indexes of consecutive runs, `starts[i]` to `starts[i] + lengths[i]`, one after
    the other: the edges of a wave's nodes, the positions of the roots that moved."""
    ends = lengths.cumsum()
    firsts = starts - ends
    firsts += lengths
    runs = firsts.repeat(lengths)
    runs += np.arange(int(ends[-1]))
    return runs


def _once(numbers: Any, marks: Any, places: Any = None) -> Any:
    """Which items of `numbers` to keep so that each number is kept once, in no order: each
    writes its place at its number in `marks` (a scratch array, any values between calls),
    and the place that stays is the one kept. Two passes, where a sort is O(n log n)
    (`numpy.unique` hashes since numpy 2.3, slower still on short arrays). The places may be
    any distinct values, one per number (the indexes the numbers were taken at: no call to
    make them)."""
    if places is None:
        places = np.arange(numbers.size, dtype=np.int32)
    marks[numbers] = places
    return marks[numbers] == places


def _distinct(numbers: Any, marks: Any) -> Any:
    """The distinct numbers of `numbers`, in no order (`_once`)."""
    return numbers[_once(numbers, marks)]


class Codes:
    """Where a set's conditions write their truths for the fast climb: as codes, in a
    climber's scratch array, one by one or many of one truth in one call (the hundreds of
    bounds of a range that hold, the conditions an indexed value makes TRUE). The lists of
    the set's indexes come as they are, and each is converted to an array once for the set
    (`Arrays.lists`): converting hundreds of Python integers at every change cost more than
    writing them."""

    __slots__ = ("lists", "scratch")

    def __init__(self, scratch: Any, lists: dict[int, tuple[Sequence[int], Any]]) -> None:
        self.scratch = scratch
        self.lists = lists

    def __setitem__(self, number: int, truth: Truth) -> None:
        self.scratch[number] = _CODE[truth]

    def all(self, numbers: Sequence[int], truth: Truth, start: int, stop: int) -> None:
        found = self.lists.get(id(numbers))
        if found is None or found[0] is not numbers:
            # Keyed by identity, the list held beside its array so that the key stays its
            # own; the set's lists are built once and never changed.
            found = self.lists[id(numbers)] = (numbers, np.array(numbers, dtype=np.int64))
        self.scratch[found[1][start:stop]] = _CODE[truth]


class Climber:
    """One tracked record's truths as codes, each node's tally of its children (`_Tables`),
    and which of the rooted filters it matches."""

    def __init__(self, arrays: Arrays, graph: Graph) -> None:
        self.arrays = arrays
        self.graph = graph
        self.state: Any = None  # codes by number: leaves, then nodes (`nodes` is a view)
        self.nodes: Any = None
        self.tallies: Any = None  # by node: deciding children << shift | UNKNOWN children
        self.held: Any = None  # by root: 1 if the answers last saw it TRUE; `NO_ROOT` else
        self.scratch: Any = None  # by leaf: FALSE, save while a field's truths are laid out
        self.codes: Any = None  # a `Codes` writing into `scratch`
        self.marks: Any = None  # by number: scratch of `_distinct`, any values between calls
        self.node_marks: Any = None  # the nodes' part of `marks` (numbers minus `size`)
        self.few = FEW  # the edges of a wave climbed in Python at most (`_few`)
        self.compact = COMPACT and arrays.compact.spans is not None
        narrow = self.compact and arrays.compact.narrow
        self.tables = _NARROW if narrow else _WIDE  # the tallies' width and steps
        self.views: Any = None  # `state`, `nodes`, `tallies` and `held` as memoryviews

    def start(self, truths: list[Truth]) -> None:
        """Every node's truth from the leaves' (the graph evaluated once, as the plain way)."""
        whole = list(truths)
        self.graph.evaluate(whole)
        arrays = self.arrays
        self.state = np.array([_CODE[t] for t in whole], dtype=np.int8)
        self.scratch = np.zeros(arrays.size, dtype=np.int8)
        self.codes = Codes(self.scratch, arrays.lists)
        self.nodes = self.state[arrays.size :]
        self.tallies = np.zeros(arrays.distinct, dtype=self.tables.dtype)
        self.marks = np.zeros(arrays.size + arrays.distinct, dtype=np.int32)
        self.node_marks = self.marks[arrays.size :]
        codes = self.state[arrays.edge_children]
        np.add.at(self.tallies, arrays.parents, self.tables.weight[arrays.rows // 3 + codes])
        self.held = np.full(self.state.size, NO_ROOT, dtype=np.int8)
        self.held[arrays.rooted] = self.state[arrays.rooted] == TRUE
        self.views = tuple(map(memoryview, (self.state, self.nodes, self.tallies, self.held)))

    def members(self) -> list[int]:
        arrays = self.arrays
        roots = arrays.rooted[self.held[arrays.rooted] == 1]
        held, _ = _spread(arrays.placed, roots, roots)
        positions = arrays.positions[held]
        positions.sort()
        found: list[int] = positions.tolist()
        return found

    def fields(self, names: Sequence[str], fill: Callable[[str, Codes], None]) -> list[Any]:
        """The conditions on the fields `names` whose truth moved, set, with their steps: each
        field's truths written by `fill` as codes into `scratch` (all FALSE between two calls)
        and compared with the state at once. One field after another: a condition reading
        two fields that both changed moves once."""
        return [self._leaves(name, fill) for name in names]

    def climb(self, found: list[tuple[Any, Any]]) -> tuple[list[int], list[int]]:
        """Takes what `fields` found; the positions of the rooted filters entered and left,
        each ascending. A wave of many edges climbs in numpy, one of a few (`FEW`) in Python
        (`_few`): most climbs end in small waves, a level or two above a large one."""
        if not found:
            return [], []
        if len(found) == 1:  # one field changed, as most writes
            nodes, steps = found[0]
        else:
            nodes = np.concatenate([numbers for numbers, _ in found])
            steps = np.concatenate([steps for _, steps in found])
        return self._climb(nodes, steps)

    def _climb(self, nodes: Any, steps: Any) -> tuple[list[int], list[int]]:
        """The waves from the conditions that moved (`nodes`, `steps`), each in numpy or in
        Python by its edges, then the answer."""
        moved, listed = [nodes], []  # the numbers that moved, by numpy's waves and Python's
        while len(nodes):
            if len(nodes) <= self.few:
                if not isinstance(nodes, list):
                    nodes, steps = nodes.tolist(), steps.tolist()
                if self._edges(nodes) <= self.few:
                    nodes, steps = self._few(nodes, steps)
                    listed.extend(nodes)
                    continue
            if isinstance(nodes, list):  # a small wave of many edges: in numpy
                nodes, steps = np.array(nodes, np.int64), np.array(steps, np.int8)
            nodes, steps = self._wave(nodes, steps)
            moved.append(nodes)
        return self._answer(moved, listed)

    def _edges(self, numbers: list[int]) -> int:
        """The edges above the nodes numbered `numbers`, counted in Python."""
        starts = self.arrays.items.starts
        return sum([starts[n + 1] - starts[n] for n in numbers])

    def _few(self, numbers: list[int], steps: list[int]) -> tuple[list[int], list[int]]:
        """`_wave` in Python, for a wave of a few edges: the same tallies and the same
        tables, read and written item by item through memoryviews of the same arrays, so
        that a climb may pass from one to the other between two waves."""
        reached = self._tally(numbers, steps)
        _, nodes, tallies, _ = self.views
        rising: list[int] = []
        moves: list[int] = []
        size, kleene, unit = self.arrays.size, _TRUTHS, self.tables.ones
        for parent, row in reached.items():
            tally = tallies[parent]
            truth = kleene[row + (0 if tally < 1 else 1 if tally < unit else 2)]
            was = nodes[parent]
            if truth != was:
                nodes[parent] = truth
                rising.append(parent + size)
                moves.append(was * 3 + truth)
        return rising, moves

    def _tally(self, numbers: list[int], steps: list[int]) -> dict[int, int]:
        """The parents of `numbers` (minus `size`), each once with its row, their tallies
        moved by `steps`."""
        items, tallies = self.arrays.items, self.views[2]
        starts, parents, rows, step = items.starts, items.parents, items.rows, self.tables.moves
        reached: dict[int, int] = {}
        for number, moving in zip(numbers, steps, strict=True):
            for edge in range(starts[number], starts[number + 1]):
                parent, row = parents[edge], rows[edge]
                tallies[parent] += step[row + moving]
                reached[parent] = row
        return reached

    def _leaves(self, name: str, fill: Callable[[str, Codes], None]) -> tuple[Any, Any]:
        numbers, scratch = self.arrays.fields[name], self.scratch
        try:
            fill(name, self.codes)
            new = scratch.take(numbers)  # `take`, not an index: a third of its fixed cost
        finally:
            scratch[numbers] = FALSE
        old = self.state.take(numbers)
        moving = (new != old).nonzero()[0]
        numbers, old, new = numbers.take(moving), old.take(moving), new.take(moving)
        self.state[numbers] = new
        old *= 3
        old += new
        return numbers, old

    def _wave(self, numbers: Any, steps: Any) -> tuple[Any, Any]:
        """The parents of the nodes numbered `numbers`, moved by `steps`: their tallies, then
        their truths; the numbers of those whose truth moved, with their steps. A parent
        reached by two edges is judged twice, on the same tally, and kept once among those
        that moved (fewer than those reached: most climbs stop a level up)."""
        arrays = self.arrays
        lengths, stops = self._spans(numbers)
        ends = lengths.cumsum()
        total = int(ends[-1])
        if not total:
            return numbers[:0], steps[:0]
        parents, rows = self._reach(stops, steps, lengths, ends, total)
        # Which count decides (none, UNKNOWN, the deciding truth), by where the tally falls:
        # below 1 (no count), below the deciding count's unit (UNKNOWN only), above; two
        # comparisons, where a `searchsorted` over the two bounds took three times as long.
        tallies = self.tallies.take(parents)
        which = rows + (tallies > 0)
        which += tallies >= self.tables.unit
        truths = _KLEENE.take(which)
        was = self.nodes.take(parents)
        moving = (truths != was).nonzero()[0]
        nodes = parents.take(moving)
        once = self._once(nodes, moving)
        nodes, moving = nodes[once], moving[once]
        truths, was = truths.take(moving), was.take(moving)
        self.nodes[nodes] = truths
        was *= 3
        was += truths
        nodes += arrays.size
        return nodes, was

    def _spans(self, numbers: Any) -> tuple[Any, Any]:
        """How many edges each of `numbers` has and where they end: one gather of the packed
        spans where the waves are compact (`COMPACT`), else one of each array: then the numbers
        stand for the stops, read by `_reach` only if the wave has edges."""
        if self.compact:
            compact = self.arrays.compact
            spans = compact.spans.take(numbers)
            return spans & compact.mask, spans >> compact.bits
        return self.arrays.degrees.take(numbers), numbers

    def _once(self, nodes: Any, moving: Any) -> Any:
        """Which of a wave's `nodes` to keep once each (`_once`): marked by the edges they
        were taken at (`moving`), or where compact by a ramp of the marks' own type, which
        numpy writes without converting it."""
        if not self.compact:
            return _once(nodes, self.node_marks, moving)
        places = self.arrays.compact.places(nodes.size)
        self.node_marks[nodes] = places
        return self.node_marks.take(nodes) == places

    def _reach(self, stops: Any, steps: Any, lengths: Any, ends: Any, total: int) -> Any:
        """The parents and rows of the edges above the wave's nodes, their tallies moved by
        `steps`. Each edge's index is a node's last edge (`stops`, or read here from the node
        numbers `_spans` gives in its place) less the edges up to its own (`ends`), repeated,
        plus a ramp kept for the set (`Arrays.ramped`); each edge's step the node's, repeated
        (one pass of a byte an edge, where packing it into the index took two of eight);
        `take` everywhere, indexes of the machine's width (bytes cost numpy a conversion)."""
        arrays = self.arrays
        firsts = stops if self.compact else arrays.stops.take(stops)
        firsts -= ends
        edges = firsts.repeat(lengths)
        edges += arrays.ramped(total)
        parents = arrays.parents.take(edges)
        rows = arrays.rows.take(edges)
        moves = steps.repeat(lengths)
        moves += rows
        np.add.at(self.tallies, parents, self.tables.step.take(moves))
        return parents, rows

    def _answer(self, moved: list[Any], listed: list[int]) -> tuple[list[int], list[int]]:
        """The rooted filters entered and left, from the numbers of the nodes that moved
        (arrays of numpy's waves, a list of Python's): in Python for a few (`_answer_few`),
        else in numpy (`_answer_many`)."""
        count = len(listed) + sum(len(numbers) for numbers in moved)
        if count <= self.few:
            for numbers in moved:
                listed.extend(numbers.tolist())
            return self._answer_few(listed)
        if listed:
            moved.append(np.array(listed, dtype=np.int64))
        return self._answer_many(moved[0] if len(moved) == 1 else np.concatenate(moved))

    def _answer_few(self, numbers: list[int]) -> tuple[list[int], list[int]]:
        """`_answer_many` in Python: a root that moved twice is seen flipped once, the
        second time `held` says it already."""
        state, _, _, held = self.views
        items = self.arrays.items
        placed, positions = items.placed, items.positions
        entered: list[int] = []
        left: list[int] = []
        for number in numbers:
            was, now = held[number], int(state[number] == TRUE)
            if was != now and was != NO_ROOT:
                held[number] = now
                (entered if now else left).extend(positions[placed[number] : placed[number + 1]])
        entered.sort()
        left.sort()
        return entered, left

    def _answer_many(self, numbers: Any) -> tuple[list[int], list[int]]:
        """The rooted filters entered and left, from the numbers of the nodes that moved: the
        roots whose TRUE flipped, each once, spread to the filters rooted there. `held` picks
        the roots out in the pass that finds the flips: a number that is no root holds
        `NO_ROOT`, which no truth flips from (most of the numbers that flip are no root, and
        each pass after this one reads arrays as large as the graph at random places)."""
        arrays = self.arrays
        now = self.state.take(numbers) == TRUE
        flips = self.held.take(numbers)
        flips ^= now  # 1 where a root's TRUE flipped: `NO_ROOT` gives 2 or 3
        found = (flips == 1).nonzero()[0]
        numbers, now = numbers.take(found), now.take(found)
        once = _once(numbers, self.marks, found)
        numbers, now = numbers[once], now[once]
        self.held[numbers] = now
        positions = arrays.single.take(numbers)  # -1 for a number that is no root
        rooted = positions >= 0
        entered, left = positions[rooted & now], positions[rooted > now]
        if arrays.several:
            entered, left = _several(arrays, positions, now, entered, left)
        entered.sort()
        left.sort()
        return entered.tolist(), left.tolist()


def _several(arrays: Arrays, positions: Any, now: Any, entered: Any, left: Any) -> tuple[Any, Any]:
    """`entered` and `left` with the filters of the roots of several that flipped (below -1
    in `positions`, from `Arrays.single`), each root's array of them from `Arrays.groups`."""
    found = (positions < -1).nonzero()[0]
    if not found.size:
        return entered, left
    ins, outs = [entered], [left]
    for group, inside in zip((-2 - positions[found]).tolist(), now[found].tolist(), strict=True):
        (ins if inside else outs).append(arrays.groups[group])
    return np.concatenate(ins), np.concatenate(outs)


def _spread(placed: Any, numbers: Any, codes: Any) -> tuple[Any, Any]:
    """Where the positions of each of `numbers` are held in `Arrays.positions` (from
    `placed[n]` to `placed[n + 1]`), each with its number's code."""
    starts = placed[numbers]
    lengths = placed[numbers + 1] - starts
    if not lengths.any():
        return starts[:0], codes[:0]
    return _runs(starts, lengths), codes.repeat(lengths)


def _kleene() -> Any:
    """A node's truth by `kind * 9 + which count decides`: none (every child TRUE for an AND,
    FALSE for an OR; a NOT's child TRUE), UNKNOWN (one child UNKNOWN, none deciding), or the
    deciding truth (a FALSE child of an AND or a NOT, a TRUE child of an OR)."""
    table = np.zeros(27, dtype=np.int8)
    table[AND * 9 : AND * 9 + 3] = (TRUE, UNKNOWN, FALSE)
    table[OR * 9 : OR * 9 + 3] = (FALSE, UNKNOWN, TRUE)
    table[NOT * 9 : NOT * 9 + 3] = (FALSE, UNKNOWN, TRUE)
    return table


class _Tables:
    """The tallies of one width: the deciding count in the high half, UNKNOWN in the low."""

    def __init__(self, shift: int, dtype: Any) -> None:
        self.dtype = dtype
        self.ones = 1 << shift  # a deciding child in a tally, for Python
        self.unit = dtype(self.ones)
        self.weight = _weights(shift, dtype)
        self.step = _steps(self.weight)
        self.moves: list[int] = self.step.tolist()  # `step` as a list, for Python


def _weights(shift: int, dtype: Any) -> Any:
    """What a child of each code counts in its parent's tally, by `kind * 3 + code` (an edge's
    row // 3): FALSE decides an AND or a NOT, TRUE an OR; the deciding count in the high half,
    UNKNOWN in the low."""
    table = np.zeros(9, dtype=dtype)
    for kind, deciding in ((AND, FALSE), (OR, TRUE), (NOT, FALSE)):
        for code in (FALSE, TRUE, UNKNOWN):
            table[kind * 3 + code] = (code == deciding) << shift | (code == UNKNOWN)
    return table


def _steps(weight: Any) -> Any:
    """What a child moving from one code to another adds to its parent's tally, by
    `kind * 9 + old * 3 + new` (an edge's row plus the child's step)."""
    table = np.zeros(27, dtype=weight.dtype)
    for kind in (AND, OR, NOT):
        for old in (FALSE, TRUE, UNKNOWN):
            for new in (FALSE, TRUE, UNKNOWN):
                table[kind * 9 + old * 3 + new] = weight[kind * 3 + new] - weight[kind * 3 + old]
    return table


_KLEENE = _kleene() if np is not None else None
_TRUTHS: list[int] = _KLEENE.tolist() if np is not None else []  # the table as a list, for Python
_WIDE = _Tables(32, np.int64) if np is not None else None
_NARROW = _Tables(16, np.int32) if np is not None else None  # fewer than `NARROW` children
