"""The relation shapes of `tests/shapes/relations.py` built on real engines, and the where
clauses every shape is asked.

One small world of people (the contacts), items and links between them is stored in each
shape users map relations with: a one-to-many table keyed by another column than `id`, a
many-to-one key on the contact, a many-to-many `secondary` table, an association object, a
self-referencing key and a self many-to-many. Each shape gives the records the oracle
(`Filter.matches`) reads, and a selector asking the engine for the ids each filter selects
(many filters per query: one `CASE` column each, so a sweep of thousands of filters stays a
handful of queries).

The where clauses are read from the registries (`audiencefilter.testing.space`): every
operation legal for each related field and each aggregate, with the probe operand and (every
third) with an edge literal, under each quantifier of its relation and under `NOT` in turn;
aggregates alone and narrowed by a `where`; conditions of a nested relation (the association
object's item) inside the quantifiers of the outer one.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import cache
from typing import Any

import audiencefilter as af
from audiencefilter.language.values import record_datetime
from audiencefilter.testing.space import (
    COLUMN_NUMBERS,
    FIXED_INSTANTS,
    NOWS,
    STRINGS,
    accepts,
    edge_conditions,
    every_condition,
)

NOW = NOWS[0]

FIELDS = {"name": "string", "size": "number", "at": "datetime", "flag": "boolean"}
ROW = af.Schema.from_mapping(FIELDS, name="row")
"""The fields of every row: a contact's and a related row's alike (a self relation's rows are
contacts)."""

_NAMES: tuple[str | None, ...] = (None, *(s for s in STRINGS if "\x00" not in s))
_SIZES: tuple[int | None, ...] = (None, *COLUMN_NUMBERS)
_ATS: tuple[datetime | None, ...] = (
    None,
    *(record_datetime(moment).astimezone(UTC) for moment in FIXED_INSTANTS),
    NOW,
)
_FLAGS: tuple[bool | None, ...] = (None, True, False)

PEOPLE = 12
ITEMS = 9


def _values(index: int) -> dict[str, Any]:
    """The fields of the `index`-th row: each walks its pool, out of step with the others."""
    return {
        "name": _NAMES[index % len(_NAMES)],
        "size": _SIZES[(3 * index + 1) % len(_SIZES)],
        "at": _ATS[(5 * index + 2) % len(_ATS)],
        "flag": _FLAGS[index % len(_FLAGS)],
    }


@dataclass(frozen=True)
class World:
    """People, items and the links between them, in every shape a relation is stored in."""

    people: tuple[dict[str, Any], ...]
    items: tuple[dict[str, Any], ...]
    links: tuple[tuple[int, int], ...]
    """(person, item) pairs: the many-to-many links, and the one-to-many rows."""
    owner: tuple[int | None, ...]
    """Each person's item (many-to-one), or None."""
    referrer: tuple[int | None, ...]
    """Each person's referrer, another person (self many-to-one), or None."""
    friends: tuple[tuple[int, int], ...]
    """(person, person) pairs: a self many-to-many, a person their own friend once."""

    def link_values(self, n: int) -> dict[str, Any]:
        """The fields of the `n`-th link's own row (an association object's columns)."""
        return _values(n + 7)


def world() -> World:
    people = tuple({"id": f"p{i}", **_values(i)} for i in range(PEOPLE))
    items = tuple({"id": f"a{k}", **_values(k + 3)} for k in range(ITEMS))
    links: list[tuple[int, int]] = []
    for i in range(PEOPLE):
        # none, one, two, ... shared items; every item linked to several people
        links += [(i, (i + j * 2) % ITEMS) for j in range(i % 5)]
    owner = tuple(None if i % 4 == 0 else (i * 2) % ITEMS for i in range(PEOPLE))
    referrer = tuple(None if i % 3 == 0 else (i * 5) % PEOPLE for i in range(PEOPLE))
    friends = tuple((i, (i + j) % PEOPLE) for i in range(PEOPLE) for j in range(i % 4))
    return World(people, items, tuple(dict.fromkeys(links)), owner, referrer, friends)


WORLD = world()


def _fields(row: dict[str, Any]) -> dict[str, Any]:
    return {k: row[k] for k in FIELDS}


def records(world: World, relation: str, kind: str) -> list[dict[str, Any]]:
    """The records the oracle reads: each person's fields and the relation `relation` as
    the shape `kind` holds it."""
    found = []
    for i, person in enumerate(world.people):
        related: Any
        if kind == "items":  # one-to-many copies and many-to-many links alike
            related = [_fields(world.items[k]) for p, k in world.links if p == i]
        elif kind == "sized":  # the one-to-many rows of a positive size
            related = [
                _fields(world.items[k])
                for p, k in world.links
                if p == i and (world.items[k]["size"] or 0) > 0
            ]
        elif kind == "owner":
            k = world.owner[i]
            related = None if k is None else _fields(world.items[k])
        elif kind == "memberships":
            related = [
                {**world.link_values(n), "audience": _fields(world.items[k])}
                for n, (p, k) in enumerate(world.links)
                if p == i
            ]
        elif kind == "referred":
            related = [_fields(world.people[j]) for j, r in enumerate(world.referrer) if r == i]
        elif kind == "referrer":
            r = world.referrer[i]
            related = None if r is None else _fields(world.people[r])
        elif kind == "friends":
            related = [_fields(world.people[j]) for p, j in world.friends if p == i]
        else:
            raise AssertionError(kind)
        found.append({"id": person["id"], **_fields(person), relation: related})
    return found


# ---- where clauses -----------------------------------------------------------------------------


def _requantified(schema: af.Schema, where: dict[str, Any], turn: int) -> dict[str, Any] | None:
    """`where` (one condition on a relation) under the `turn`-th of its relation's
    quantifiers and NOT of the first, taken in turn; an aggregate alone or (every other turn)
    narrowed by a where clause of the relation's rows."""
    [(name, inner)] = where.items()
    relation = schema.relation(name)
    if relation is None:
        return None
    [(key, body)] = inner.items()
    if key in {q.value for q in relation.quantifiers}:
        ways = [{name: {q.value: body}} for q in relation.quantifiers]
        ways.append({"NOT": {name: {relation.quantifiers[0].value: body}}})
        return ways[turn % len(ways)]
    narrow = _narrow(relation.schema, turn)
    return where if turn % 2 == 0 or narrow is None else {name: {"where": narrow, **inner}}


def _narrow(schema: af.Schema, turn: int) -> dict[str, Any] | None:
    """One of a few plain conditions on the fields of `schema`, for narrowing."""
    plain = [w for _s, _o, w in every_condition(schema) if set(w) <= set(FIELDS)][::7]
    return plain[turn % len(plain)] if plain else None


@cache
def wheres(schema: af.Schema) -> tuple[dict[str, Any], ...]:
    """Every where clause the shapes of `schema` are asked (see the module's docstring): each
    operation of each related slot with the probe operand, and every third one with an edge
    literal, the quantifiers (and NOT) taken in turn."""
    found: list[dict[str, Any]] = []
    edges = list(edge_conditions(schema, NOW))[::3]
    for turn, (slot, _operation, where) in enumerate([*every_condition(schema), *edges]):
        if slot.relation is not None:
            requantified = _requantified(schema, where, turn)
            if requantified is not None:
                found.append(requantified)
    for relation in schema.relations:
        if not relation.schema.relations:
            continue
        inner = [w for s, _o, w in every_condition(relation.schema) if s.relation is not None]
        for n, where in enumerate(inner[::2]):
            quantifier = relation.quantifiers[n % len(relation.quantifiers)].value
            found.append({relation.name: {quantifier: where}})
    unique = {repr(w): w for w in found if accepts(schema, w)}
    return tuple(unique.values())


# ---- running many filters per query -----------------------------------------------------------

Select = Callable[[Sequence[af.Filter]], list[set[str] | None]]
"""The ids each filter selects, filters in one batch; None for a filter the engine refuses
(a `FilterError` of the engine's documented limits, such as sums beyond 64 bits on SQLite)."""

BATCH = 60


def batched(run: Select, filters: Sequence[af.Filter]) -> list[set[str] | None]:
    """`run` over batches of filters; a batch holding a refused filter asked one by one."""
    found: list[set[str] | None] = []
    for start in range(0, len(filters), BATCH):
        batch = filters[start : start + BATCH]
        try:
            found += run(batch)
        except af.FilterError:
            found += [_alone(run, flt) for flt in batch]
    return found


def _alone(run: Select, flt: af.Filter) -> set[str] | None:
    try:
        return run([flt])[0]
    except af.FilterError:
        return None


_expected: dict[tuple[af.Schema, str], list[set[str]]] = {}


def expected(schema: af.Schema, rows: list[dict[str, Any]]) -> list[set[str]]:
    """The oracle's ids for each of `wheres(schema)` over `rows`, worked out once per schema
    and records (many cells share them)."""
    key = (schema, repr(rows))
    if key not in _expected:
        _expected[key] = [
            {r["id"] for r in rows if flt.matches(r, now=NOW)} for flt in parsed(schema)
        ]
    return _expected[key]


@cache
def parsed(schema: af.Schema) -> tuple[af.Filter, ...]:
    """`wheres(schema)` read once, for the oracle and for every cell of the schema."""
    return tuple(af.parse(where, schema) for where in wheres(schema))


def disagreements(
    run: Select, schema: af.Schema, rows: list[dict[str, Any]], limit: int = 5
) -> tuple[int, int, list[str]]:
    """How many filters the engine answered (did not refuse), how many it answered otherwise
    than the oracle, and the first few of those, with both answers."""
    filters = parsed(schema)
    found = batched(run, filters)
    wrong = []
    for flt, ids, wanted in zip(filters, found, expected(schema, rows), strict=True):
        if ids is not None and ids != wanted:
            wrong.append(f"{flt.to_json()}: engine {sorted(ids)}, oracle {sorted(wanted)}")
    asked = sum(ids is not None for ids in found)
    return asked, len(wrong), wrong[:limit]
