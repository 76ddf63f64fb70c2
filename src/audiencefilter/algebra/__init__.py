"""Audience algebra: whether one filter implies, overlaps or equals another, or can match at all,
decided before any data exists, each answer a proof or a checked witness (docs/algebra.md).

Sound first: `holds=True` of `implies`/`equivalent` and `holds=False` of `overlaps`/`can_match`
are proofs (every branch of the question closed by exact reasoning); the other answers carry a
record the in-memory back-end confirms. What the reasoning cannot settle is `holds=None`.

Bounded: each question ends within its `steps` (`QUESTION_STEPS` by default), every part of
the search spending its work before doing it; past them it is `holds=None` with the reason
(docs/algebra.md, "Bounded"), so no pair of filters can hold a process for long.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any, Protocol

from ..language.fields import Schema
from ..language.nodes import Node
from ..language.relative import as_now, system_clock
from .columns import columns_of
from .decide import Outcome, Record, decide, describe
from .tableau import QUESTION_STEPS, Mode


class Audience(Protocol):
    """What the algebra reads of a filter (`af.Filter` is one)."""

    @property
    def schema(self) -> Schema: ...

    def lowered_at(self, now: datetime | None = None) -> Node: ...

    @property
    def matches(self) -> Callable[..., bool]: ...


@dataclass(frozen=True)
class Verdict:
    """An answer: `holds` (None: not decided), a `witness` record where the answer is shown by
    one, the `reason` in words, and the `steps` it took (at most the `steps` asked)."""

    holds: bool | None
    witness: dict[str, Any] | None
    reason: str
    steps: int = 0


@dataclass(frozen=True)
class Comparison:
    """How two audiences relate: `relation` is `equivalent`, `subset` (the first within the
    second), `superset`, `overlap`, `disjoint` or `unknown`; a witness record for each region
    known to hold one (`both`, `a_only`, `b_only`); the `steps` of its three questions."""

    relation: str
    both: dict[str, Any] | None
    a_only: dict[str, Any] | None
    b_only: dict[str, Any] | None
    reason: str
    steps: int = 0


def _moment(now: datetime | None) -> datetime:
    return as_now(system_clock() if now is None else now)


def _same_schema(a: Audience, b: Audience) -> None:
    if a.schema != b.schema:
        raise ValueError(
            "the two filters are over different schemas: compare filters of one schema"
        )


def _ask(
    a: Audience, b: Audience | None, moment: datetime, b_holds: bool, steps: int | None
) -> Outcome:
    """Records `a` matches and `b` matches (`b_holds`) or does not; `b=None`: only `a`; at
    most `steps` steps (None: `QUESTION_STEPS`)."""
    columns = columns_of(a.schema)  # declared fields inside JSON, read as columns
    demands = [(columns.tree(a.lowered_at(moment)), Mode.TRUE)]
    if b is not None:
        _same_schema(a, b)
        demands.append(
            (columns.tree(b.lowered_at(moment)), Mode.TRUE if b_holds else Mode.NOT_TRUE)
        )

    def target(record: Mapping[str, Any]) -> bool:
        inside = bool(a.matches(record, now=moment))
        return inside and (b is None or bool(b.matches(record, now=moment)) == b_holds)

    budget = QUESTION_STEPS if steps is None else steps
    found = decide(demands, columns.schema, columns.target(target), budget)
    if found.witness is None:
        return found
    return replace(found, witness=columns.stored(found.witness))


def _verdict(found: Outcome, shown: str, proved: str) -> Verdict:
    """The verdict of a question: `shown` by a witness, `proved` empty, or undecided."""
    if found.witness is not None:
        return Verdict(True, found.witness, shown, found.steps)
    if found.empty:
        return Verdict(False, None, proved, found.steps)
    return Verdict(None, None, found.reason, found.steps)


def _negated(verdict: Verdict) -> Verdict:
    held = None if verdict.holds is None else not verdict.holds
    return Verdict(held, verdict.witness, verdict.reason, verdict.steps)


def implies(
    a: Audience, b: Audience, *, now: datetime | None = None, steps: int | None = None
) -> Verdict:
    """Whether every record `a` matches, `b` matches too (at `now`), in at most `steps`
    steps (docs/algebra.md, "Bounded")."""
    found = _ask(a, b, _moment(now), False, steps)
    return _negated(
        _verdict(
            found,
            "the witness is in the first audience, not the second",
            "proved: no record is in the first audience and not the second",
        )
    )


def overlaps(
    a: Audience, b: Audience, *, now: datetime | None = None, steps: int | None = None
) -> Verdict:
    """Whether some record is in both audiences (at `now`), in at most `steps` steps."""
    found = _ask(a, b, _moment(now), True, steps)
    return _verdict(
        found, "the witness is in both audiences", "proved: no record is in both audiences"
    )


def can_match(a: Audience, *, now: datetime | None = None, steps: int | None = None) -> Verdict:
    """Whether any record can be in the audience (at `now`), in at most `steps` steps; a
    proof names the conditions that cannot hold together."""
    found = _ask(a, None, _moment(now), True, steps)
    blamed = describe(found.blamed) or "the filter is false"
    return _verdict(
        found, "the witness is in the audience", f"proved: no record can match ({blamed})"
    )


def equivalent(
    a: Audience, b: Audience, *, now: datetime | None = None, steps: int | None = None
) -> Verdict:
    """Whether both audiences hold the same records (at `now`): two questions, each in at
    most `steps` steps."""
    moment = _moment(now)
    forward = implies(a, b, now=moment, steps=steps)
    if forward.holds is False:
        return Verdict(
            False, forward.witness, "the witness is in the first audience only", forward.steps
        )
    backward = implies(b, a, now=moment, steps=steps)
    spent = forward.steps + backward.steps
    if backward.holds is False:
        return Verdict(False, backward.witness, "the witness is in the second audience only", spent)
    if forward.holds and backward.holds:
        return Verdict(True, None, "proved: each audience implies the other", spent)
    reason = forward.reason if forward.holds is None else backward.reason
    return Verdict(None, None, reason, spent)


def compare(
    a: Audience, b: Audience, *, now: datetime | None = None, steps: int | None = None
) -> Comparison:
    """The relation of two audiences, with a witness for each region known to be non-empty:
    three questions, each in at most `steps` steps."""
    moment = _moment(now)
    both = overlaps(a, b, now=moment, steps=steps)
    a_only = implies(a, b, now=moment, steps=steps)
    b_only = implies(b, a, now=moment, steps=steps)
    relation = _relation(both.holds, a_only.holds, b_only.holds)
    reasons = {v.reason for v in (both, a_only, b_only) if v.holds is None}
    return Comparison(
        relation,
        both.witness,
        a_only.witness,
        b_only.witness,
        "; ".join(sorted(reasons)) or "decided",
        both.steps + a_only.steps + b_only.steps,
    )


def _relation(both: bool | None, a_in_b: bool | None, b_in_a: bool | None) -> str:
    if a_in_b and b_in_a:
        return "equivalent"
    if both is False:
        return "disjoint"
    if a_in_b and b_in_a is False:
        return "subset"
    if b_in_a and a_in_b is False:
        return "superset"
    if both and a_in_b is False and b_in_a is False:
        return "overlap"
    return "unknown"


__all__ = [
    "QUESTION_STEPS",
    "Audience",
    "Comparison",
    "Record",
    "Verdict",
    "can_match",
    "compare",
    "equivalent",
    "implies",
    "overlaps",
]
