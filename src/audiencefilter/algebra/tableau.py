"""Three-valued formulas as branches of literals: the search every question of the algebra runs.

Why a tableau and not a DNF built up front: a question such as "does `a` imply `b`" is "no
record makes `a` TRUE and `b` not TRUE", and a record is a member only where the root is TRUE
(FALSE and UNKNOWN both keep it out). The search pushes each demand down to the conditions
("this condition is TRUE", "... is not TRUE", ...), splits on each `or`, and drops a branch as
soon as two demands on one condition clash, so most of the branches a DNF would list are never
built. A branch that stays open is a conjunction of literals, handed to the field reasoning.

A literal is a condition (an atomic node of the lowered tree) and the truth values it may take
in the branch, a subset of {TRUE, FALSE, UNKNOWN}. Kleene logic makes the rules exact:
`not` swaps TRUE and FALSE and keeps UNKNOWN; `and` is TRUE when every item is, FALSE when one
is; `or` the mirror.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum

from ..language.nodes import And, Const, IsNull, Node, Not, Or, Quantified

T, F, U = "T", "F", "U"
Truths = frozenset[str]


class Mode(Enum):
    """What a branch demands of a node: TRUE, FALSE, not TRUE, or not FALSE."""

    TRUE = frozenset({T})
    FALSE = frozenset({F})
    NOT_TRUE = frozenset({F, U})
    NOT_FALSE = frozenset({T, U})


_NEGATED = {
    Mode.TRUE: Mode.FALSE,
    Mode.FALSE: Mode.TRUE,
    Mode.NOT_TRUE: Mode.NOT_FALSE,
    Mode.NOT_FALSE: Mode.NOT_TRUE,
}
# Whether the demand on an `and` needs every item (True) or one item (False); `or` the mirror.
_AND_NEEDS_ALL = {Mode.TRUE: True, Mode.NOT_FALSE: True, Mode.FALSE: False, Mode.NOT_TRUE: False}
_ALL = frozenset({T, F, U})
_TWO_VALUED = frozenset({T, F})
_NEVER_UNKNOWN = (IsNull, Quantified)
Branch = dict[Node, Truths]
"""An open branch: each condition met on it and the truth values it may still take."""


QUESTION_STEPS = 40_000
"""The steps one question may take (docs/algebra.md, "Bounded"): a step is one demand pushed
down, `BULK` literals copied into a sub-branch or scanned by a check, one condition judged on
one representative value, one node of the question judged on one candidate record."""


BULK = 8
"""Literals a copy or a scan of a branch handles per step: it runs in the interpreter's own
loops, some eight times as fast per literal as a demand pushed down."""


def bulk(literals: int) -> int:
    """The steps of copying or scanning `literals` literals (at least one)."""
    return 1 + literals // BULK


class TooManyBranches(Exception):
    """The search went past its budget: the question is left undecided."""


@dataclass
class Budget:
    """How many steps the search may take before it gives up (the answer is then None).

    Every part of the search spends its work here before doing it, so a question ends within
    `steps` steps whatever its filters hold: its time is bounded by the steps, and its memory
    by what those steps can build (each literal kept was a step)."""

    steps: int = QUESTION_STEPS
    clashes: list[Node] = field(default_factory=list)
    """The conditions whose demands clashed on a closed branch, to name in a reason."""
    check: Callable[[dict[Node, frozenset[str]], Node], bool] | None = None
    """Called after a literal joins a branch: False closes the branch (a field whose
    conditions no value meets), so its sub-branches are never built."""
    spent: int = 0

    def spend(self, cost: int = 1) -> None:
        """Count `cost` steps about to be taken; raises `TooManyBranches` past the budget,
        before they are taken."""
        self.spent += cost
        if self.spent > self.steps:
            raise TooManyBranches

    @property
    def left(self) -> int:
        return max(self.steps - self.spent, 0)


Demand = tuple[Node, Mode]


def branches(demands: list[Demand], budget: Budget) -> Iterator[Branch]:
    """Every open branch of the conjunction of `demands`: the conjunctions of literals whose
    union is exactly the records meeting every demand. Raises `TooManyBranches` past the
    budget."""
    yield from _search(list(demands), {}, budget)


def _search(todo: list[Demand], branch: Branch, budget: Budget) -> Iterator[Branch]:
    """The branches of `todo` on top of `branch`. A split (an `or` demanded TRUE, an `and`
    demanded not TRUE, ...) waits until every demand that does not split is on the branch,
    and the split with the fewest items goes first: a clash found before splitting closes
    one branch, where found after it, it must be found again on every sub-branch."""
    splits: list[tuple[And | Or, Mode]] = []
    while todo or splits:
        if not todo:
            split, mode = splits.pop(_fewest(splits))
            for item in split.items:
                budget.spend(bulk(len(branch) + len(splits)))  # the copies of both
                yield from _search([*splits, (item, mode)], dict(branch), budget)
            return
        budget.spend()
        node, mode = todo.pop()
        if isinstance(node, Const):
            if (T if node.value else F) not in mode.value:
                return
        elif isinstance(node, Not):
            todo.append((node.item, _NEGATED[mode]))
        elif isinstance(node, And | Or):
            if _AND_NEEDS_ALL[mode] == isinstance(node, And):
                todo.extend((item, mode) for item in node.items)
            else:
                splits.append((node, mode))
        elif not _narrow(branch, node, mode.value):
            budget.clashes.append(node)
            return
        elif budget.check is not None and not budget.check(branch, node):
            return
    yield branch


def _fewest(splits: list[tuple[And | Or, Mode]]) -> int:
    """The position of the split with the fewest items."""
    return min(range(len(splits)), key=lambda i: len(splits[i][0].items))


def _narrow(branch: Branch, node: Node, allowed: Truths) -> bool:
    """Add a literal to the branch; False when the condition has no truth value left."""
    left = branch.get(node, _TWO_VALUED if isinstance(node, _NEVER_UNKNOWN) else _ALL) & allowed
    if not left:
        return False
    branch[node] = left
    return True
