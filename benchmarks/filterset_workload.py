"""A seeded workload for a `FilterSet` at scale: many stored filters over thirty attributes,
and a contact changing one attribute at a time.

The shape is what makes the figure honest:

- thirty attributes of four types (12 strings, 10 numbers, 4 booleans, 4 date-times), each
  value drawn from a Zipf law (a few values are common, most are rare), as countries, plans
  and scores are; five per cent of a contact's values are null;
- filters are trees of depth 2 to 4, AND/OR at each level (NOT now and then), two to four
  children each, leaves of the operators people use on each type (equality and `in` mostly,
  ranges on numbers and instants, `startsWith` and `contains` on strings, null tests);
- accounts build audiences from pieces they reuse: a child sub-tree is, three times in ten,
  drawn (Zipf again) from a pool of common pieces rather than made afresh, so identical
  sub-expressions occur across filters as they do in practice.

The same seed always gives the same filters and the same changes.
"""

from __future__ import annotations

import itertools
import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import audiencefilter as af

STRINGS = tuple(f"s{i}" for i in range(12))
NUMBERS = tuple(f"n{i}" for i in range(10))
BOOLEANS = tuple(f"b{i}" for i in range(4))
INSTANTS = tuple(f"t{i}" for i in range(4))
SCHEMA = af.Schema.of(
    "contact",
    **dict.fromkeys(STRINGS, "string"),
    **dict.fromkeys(NUMBERS, "number"),
    **dict.fromkeys(BOOLEANS, "boolean"),
    **dict.fromkeys(INSTANTS, "datetime"),
)
ATTRIBUTES = STRINGS + NUMBERS + BOOLEANS + INSTANTS
VALUES = 200  # distinct values per string, number and instant attribute
ZIPF = 1.1
NULLS = 0.05
REUSE = 0.3  # how often a child sub-tree is a common piece
PIECES = 2_000
EPOCH = datetime(2026, 1, 1, tzinfo=UTC)


class Workload:
    """Draws values, conditions, filters and contact changes from one seeded generator."""

    def __init__(self, seed: int = 39) -> None:
        self.random = random.Random(seed)
        weights = [1 / (rank + 1) ** ZIPF for rank in range(VALUES)]
        self.cumulative = list(itertools.accumulate(weights))
        self.pieces: list[dict[str, Any]] = []
        self.pieces = [self.tree(self.random.randint(1, 2)) for _ in range(PIECES)]
        pieces = [1 / (rank + 1) ** ZIPF for rank in range(PIECES)]
        self.piece_weights = list(itertools.accumulate(pieces))

    def rank(self) -> int:
        return self.random.choices(range(VALUES), cum_weights=self.cumulative)[0]

    def value(self, name: str) -> Any:
        """A value of attribute `name`, Zipf-distributed over its VALUES."""
        kind = name[0]
        if kind == "b":
            return self.random.random() < 0.7
        rank = self.rank()
        if kind == "s":
            return f"{name}-{rank:03d}"
        if kind == "n":
            return rank * 5
        return EPOCH + timedelta(days=rank)

    def condition(self) -> dict[str, Any]:
        name = self.random.choice(ATTRIBUTES)
        kind, pick = name[0], self.random.random()
        if kind == "b":
            return {name: self.value(name)}
        if pick < 0.05:
            return {name: None}
        if kind == "s":
            return self._text(name, pick)
        operator = self.random.choice(["gt", "gte", "lt", "lte"])
        if kind == "t":
            return {name: {operator: self.value(name).isoformat()}}
        if pick < 0.6:
            return {name: {operator: self.value(name)}}
        if pick < 0.8:
            return {name: self.value(name)}
        return {name: {"in": sorted({self.value(name) for _ in range(self.random.randint(2, 5))})}}

    def _text(self, name: str, pick: float) -> dict[str, Any]:
        if pick < 0.55:
            return {name: self.value(name)}
        if pick < 0.85:
            return {
                name: {"in": sorted({self.value(name) for _ in range(self.random.randint(2, 5))})}
            }
        word = self.value(name)
        if pick < 0.93:
            return {name: {"startsWith": word[:-1]}}
        return {name: {"contains": word[-2:]}}

    def tree(self, depth: int) -> dict[str, Any]:
        """A tree with `depth` levels of logic above its leaves."""
        if depth == 0:
            return self.condition()
        if self.pieces and depth <= 2 and self.random.random() < REUSE:
            index = self.random.choices(range(PIECES), cum_weights=self.piece_weights)[0]
            return self.pieces[index]
        items = [self.tree(self._below(depth)) for _ in range(self.random.randint(2, 4))]
        if self.random.random() < 0.1:
            return {"NOT": {"AND": items}}
        return {self.random.choice(["AND", "OR"]): items}

    def _below(self, depth: int) -> int:
        """The depth of a child: one less, or a leaf now and then (depth is an upper bound)."""
        return depth - 1 if self.random.random() < 0.7 else 0

    def filters(self, count: int) -> list[dict[str, Any]]:
        """`count` where clauses of depth 2 to 4 (levels of logic above the leaves: 1 to 3)."""
        return [self.tree(self.random.randint(1, 3)) for _ in range(count)]

    def contact(self) -> dict[str, Any]:
        return {
            name: None if self.random.random() < NULLS else self.value(name) for name in ATTRIBUTES
        }

    def changes(self, contact: dict[str, Any], count: int) -> Iterator[dict[str, Any]]:
        """The contact's next `count` states, each with one attribute changed."""
        state = dict(contact)
        for _ in range(count):
            name = self.random.choice(ATTRIBUTES)
            state = dict(state)
            state[name] = None if self.random.random() < NULLS else self.value(name)
            yield state


def parse_all(wheres: list[dict[str, Any]]) -> list[af.Filter]:
    """The filters parsed and lowered (what a set reads), as an application keeps them."""
    filters = [af.parse(where, SCHEMA) for where in wheres]
    for flt in filters:
        _ = flt.lowered
    return filters
