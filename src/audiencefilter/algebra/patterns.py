"""Proofs for string patterns the representatives cannot enumerate: a `startsWith`,
`endsWith` or `contains` demanded TRUE entails another pattern of the same case mode (a longer
start entails a shorter one, a start or an end entails what it contains), and two starts (or two
ends) neither of which extends the other cannot both hold.

Why separate rules: a string field with patterns has no finite set of representatives, yet
"ends with @acme.com" implies "contains acme" is among the questions users ask most. Each rule
is a plain fact about strings, applied between conditions of one case mode, and from a
case-sensitive ASCII pattern to a case-insensitive one (`contains` always folds); folding is
not letter by letter in every script (a final sigma), so other mixes are left undecided.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..language.fields import PATTERN_OPS, Op
from ..language.nodes import Comparison, Node
from .tableau import T, Truths

_PATTERNS = PATTERN_OPS


def clash(literals: Sequence[tuple[Node, Truths]]) -> bool:
    """True when the literals on one string field provably cannot hold together."""
    held = [a for a, allowed in literals if _pattern(a) and allowed == frozenset({T})]
    refused = [a for a, allowed in literals if _pattern(a) and T not in allowed]
    if any(_entails(p, n) for p in held for n in refused):
        return True
    return any(_exclusive(p, q) for p in held for q in held)


def _pattern(atom: Node) -> bool:
    return isinstance(atom, Comparison) and atom.op in _PATTERNS and isinstance(atom.value, str)


def _entails(held: Node, other: Node) -> bool:
    """Every string meeting `held` meets `other` (both `_pattern`s, one case mode)."""
    assert isinstance(held, Comparison) and isinstance(other, Comparison)
    have, want = str(held.value), str(other.value)
    if held.insensitive != other.insensitive:
        # A case-sensitive ASCII piece of the value folds to its own lower case wherever it
        # stands (ASCII folds letter by letter), so it entails the folded tests of it.
        if held.insensitive or not have.isascii():
            return False
        have = have.lower()
    if other.op is Op.CONTAINS:
        return want in have
    if held.op is not other.op:
        return False
    return have.startswith(want) if held.op is Op.STARTS_WITH else have.endswith(want)


def _exclusive(first: Node, second: Node) -> bool:
    """No string meets both: two starts (or two ends) of one mode, neither extending the other."""
    assert isinstance(first, Comparison) and isinstance(second, Comparison)
    if first.op is not second.op or first.op is Op.CONTAINS:
        return False
    if first.insensitive != second.insensitive:
        return False
    a, b = str(first.value), str(second.value)
    if first.op is Op.STARTS_WITH:
        return not (a.startswith(b) or b.startswith(a))
    return not (a.endswith(b) or b.endswith(a))


__all__ = ["clash"]
