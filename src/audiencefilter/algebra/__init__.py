"""Audience algebra: whether one filter implies, overlaps or equals another, or can match at all,
decided before any data exists, each answer a proof or a checked witness (docs/algebra.md).

Sound first: `holds=True` of `implies`/`equivalent` and `holds=False` of `overlaps`/`can_match`
are proofs (every branch of the question closed by exact reasoning); the other answers carry a
record the in-memory back-end confirms. What the reasoning cannot settle is `holds=None`.
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
from .tableau import Mode


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
    one, and the `reason` in words."""

    holds: bool | None
    witness: dict[str, Any] | None
    reason: str


@dataclass(frozen=True)
class Comparison:
    """How two audiences relate: `relation` is `equivalent`, `subset` (the first within the
    second), `superset`, `overlap`, `disjoint` or `unknown`; a witness record for each region
    known to hold one (`both`, `a_only`, `b_only`)."""

    relation: str
    both: dict[str, Any] | None
    a_only: dict[str, Any] | None
    b_only: dict[str, Any] | None
    reason: str


def _moment(now: datetime | None) -> datetime:
    return as_now(system_clock() if now is None else now)


def _same_schema(a: Audience, b: Audience) -> None:
    if a.schema != b.schema:
        raise ValueError(
            "the two filters are over different schemas: compare filters of one schema"
        )


def _ask(a: Audience, b: Audience | None, moment: datetime, b_holds: bool) -> Outcome:
    """Records `a` matches and `b` matches (`b_holds`) or does not; `b=None`: only `a`."""
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

    found = decide(demands, columns.schema, columns.target(target))
    if found.witness is None:
        return found
    return replace(found, witness=columns.stored(found.witness))


def implies(a: Audience, b: Audience, *, now: datetime | None = None) -> Verdict:
    """Whether every record `a` matches, `b` matches too (at `now`)."""
    found = _ask(a, b, _moment(now), b_holds=False)
    if found.witness is not None:
        return Verdict(False, found.witness, "the witness is in the first audience, not the second")
    if found.empty:
        return Verdict(True, None, "proved: no record is in the first audience and not the second")
    return Verdict(None, None, found.reason)


def overlaps(a: Audience, b: Audience, *, now: datetime | None = None) -> Verdict:
    """Whether some record is in both audiences (at `now`)."""
    found = _ask(a, b, _moment(now), b_holds=True)
    if found.witness is not None:
        return Verdict(True, found.witness, "the witness is in both audiences")
    if found.empty:
        return Verdict(False, None, "proved: no record is in both audiences")
    return Verdict(None, None, found.reason)


def can_match(a: Audience, *, now: datetime | None = None) -> Verdict:
    """Whether any record can be in the audience (at `now`); a proof names the conditions
    that cannot hold together."""
    found = _ask(a, None, _moment(now), b_holds=True)
    if found.witness is not None:
        return Verdict(True, found.witness, "the witness is in the audience")
    if found.empty:
        blamed = describe(found.blamed) or "the filter is false"
        return Verdict(False, None, f"proved: no record can match ({blamed})")
    return Verdict(None, None, found.reason)


def equivalent(a: Audience, b: Audience, *, now: datetime | None = None) -> Verdict:
    """Whether both audiences hold the same records (at `now`)."""
    moment = _moment(now)
    forward = implies(a, b, now=moment)
    if forward.holds is False:
        return Verdict(False, forward.witness, "the witness is in the first audience only")
    backward = implies(b, a, now=moment)
    if backward.holds is False:
        return Verdict(False, backward.witness, "the witness is in the second audience only")
    if forward.holds and backward.holds:
        return Verdict(True, None, "proved: each audience implies the other")
    return Verdict(None, None, forward.reason if forward.holds is None else backward.reason)


def compare(a: Audience, b: Audience, *, now: datetime | None = None) -> Comparison:
    """The relation of two audiences, with a witness for each region known to be non-empty."""
    moment = _moment(now)
    both = overlaps(a, b, now=moment)
    a_only = implies(a, b, now=moment)
    b_only = implies(b, a, now=moment)
    relation = _relation(both.holds, a_only.holds, b_only.holds)
    reasons = {v.reason for v in (both, a_only, b_only) if v.holds is None}
    return Comparison(
        relation,
        both.witness,
        a_only.witness,
        b_only.witness,
        "; ".join(sorted(reasons)) or "decided",
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
