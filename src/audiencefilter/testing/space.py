"""A model of the whole input space: every field type in every placement, every operator legal
there, edge values, and batches of filters and records to run through every surface.

Why: the strategies beside this module draw from the contact schema; a differential test over
them never meets a date inside JSON, a list in a related row or a zone on the date line. This
model is derived from the library's own registries (`FieldType`, the operator tables of
`language/fields.py`, the JSON value types, `Aggregate` and `Quantifier`), so a new type,
operator or placement enters the space, or fails the completeness test, without anyone
writing a new generator:

- **slots**: where a value lives. Every `FieldType` as a column; every type a JSON column may
  hold as a field declared inside it (`("date", ("data", "j_date"))`); each JSON value type
  at a path of the untyped `data` column; each of these again in a related row (the to-many
  relation `rows`, and the to-one relation `owner`); and the aggregates over related rows.
- **operations**: the operators legal in a slot, found by asking the parser (`parse` each
  operator with each kind of operand and keep what it accepts), with `mode: "insensitive"`
  and field-level `not` where accepted.
- **edge values**: booleans beside 0 and 1, -0.0, integers at and past 2^53 and 2^63, 1e23
  and 1e300, "NaN" and "Infinity" as text, NUL, case and Unicode folding traps, dates at years
  1, 1582 and 9999, daylight-saving days, zones from Pacific/Kiritimati to Pacific/Pago_Pago,
  29 February and the last microsecond of a day.
- **records** in two encodings: raw Python values (`datetime`, `date`, `data` as objects) and
  JSON-encoded (`json_encoded`: what a record read from JSON text holds).

    >>> from hypothesis import given
    >>> from audiencefilter.testing.space import SPACE, batches
    >>> @given(batches())
    ... def test_my_engine(batch): ...

`every_condition(schema)` yields one condition per slot and operation, for a deterministic
sweep. Requires the `hypothesis` package, which the core library does not depend on.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from enum import StrEnum
from functools import cache
from typing import Any
from zoneinfo import ZoneInfo

from hypothesis import strategies as st

from ..errors import FilterError
from ..filter import parse
from ..language.fields import (
    BLANK,
    JSON_SOURCE_TYPES,
    JSON_STRING_ALIASES,
    JSON_VALUE_TYPES,
    Aggregate,
    FieldType,
    ListOp,
    Op,
    Quantifier,
    Relation,
    Schema,
)
from .space_examples import example_records

# ---- the schema of the space -------------------------------------------------------------------


class Placement(StrEnum):
    """Where a slot's value is kept."""

    COLUMN = "column"
    """A column of its own."""
    PATH = "path"
    """A path inside the untyped JSON column `data`; the literal's JSON type types it."""
    DECLARED = "declared"
    """A field declared inside the JSON column (`("number[]", ("data", "j_number_list"))`)."""
    AGGREGATE = "aggregate"
    """A value computed over related rows (`count`, `sum`, `min`, `max`)."""


def slug(kind: FieldType) -> str:
    """The part of a field name that says its type: `string_list` for `string[]`."""
    return kind.value.replace("[]", "_list")


REFERABLE = (FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN, FieldType.DATETIME)
"""Types that get a second column, so that a field reference has a peer to name."""
PEER_SUFFIX = "_2"
JSON_COLUMN = "data"


def _field_types() -> dict[str, Any]:
    """The fields of a row of the space: a column per type (and a peer for references), the
    JSON column, and a field declared inside it per type it may hold."""
    types: dict[str, Any] = {}
    for kind in FieldType:
        if kind is FieldType.JSON:
            types[JSON_COLUMN] = kind.value
            continue
        types[f"c_{slug(kind)}"] = kind.value
        if kind in REFERABLE:
            types[f"c_{slug(kind)}{PEER_SUFFIX}"] = kind.value
    for kind in JSON_SOURCE_TYPES:
        name = f"j_{slug(kind)}"
        types[name] = (kind.value, (JSON_COLUMN, name))
    return types


RELATED = "rows"
"""The to-many relation of the space."""
OWNER = "owner"
"""The to-one relation of the space."""


@cache
def space_schema(time_zone: str = "UTC") -> Schema:
    """The schema holding every slot: `c_<type>` columns, `data`, `j_<type>` fields declared
    inside `data`, and the relations `rows` (to-many) and `owner` (to-one), whose rows have the
    same fields and an `id`."""
    row = Schema.from_mapping({"id": "string", **_field_types()}, name="row")
    contact = Schema.from_mapping(_field_types(), name="space")
    relations = (
        Relation(RELATED, row, table="space_rows"),
        Relation(OWNER, row, many=False, table="space_owner"),
    )
    return contact.with_relations(*relations).in_zone(time_zone)


SPACE = space_schema()
"""The space's schema in UTC."""


# ---- slots -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Slot:
    """One place a condition can test: a field (or a JSON path, or an aggregate) at the top
    level or inside a relation's rows."""

    field: str
    type: FieldType
    placement: Placement
    relation: str | None = None
    peers: tuple[str, ...] = ()
    function: Aggregate | None = None
    quantifier: str = Quantifier.SOME.value
    """The quantifier a related row's condition is asked under by default (`is` to-one)."""

    @property
    def name(self) -> str:
        """A readable name: `rows.c_date`, `data[number]`, `rows.max(c_date)`."""
        inner = f"{JSON_COLUMN}[{self.type.value}]" if self.placement is Placement.PATH else ""
        if self.function is not None:
            inner = f"{self.function.value}({self.field})"
        inner = inner or self.field
        return inner if self.relation is None else f"{self.relation}.{inner}"

    def condition(self, body: Any, *, path: tuple[str, ...] = ("a",)) -> dict[str, Any] | None:
        """The where clause of `body` (an operator object or a literal) at this slot, before
        any quantifier; None where `body` has no form here (a bare literal at a path)."""
        if self.placement is Placement.PATH:
            if not isinstance(body, dict):
                return None
            return {JSON_COLUMN: {"path": list(path), **body}}
        if self.function is Aggregate.COUNT:
            return {"count": body}
        if self.function is not None:
            return {self.function.value: {self.field: body}}
        return {self.field: body}

    def where(
        self, body: Any, *, quantifier: str | None = None, path: tuple[str, ...] = ("a",)
    ) -> dict[str, Any] | None:
        """The whole where clause of `body` here: inside `{relation: {quantifier: ...}}` for a
        related row, `{relation: {aggregate...}}` for an aggregate."""
        inner = self.condition(body, path=path)
        if inner is None or self.relation is None:
            return inner
        if self.function is not None:
            return {self.relation: inner}
        return {self.relation: {quantifier or self.quantifier: inner}}


def _element(kind: FieldType) -> FieldType:
    return kind.element or kind


def _own_slots(schema: Schema, relation: Relation | None) -> list[Slot]:
    name = relation.name if relation else None
    quantifier = relation.quantifiers[0].value if relation else Quantifier.SOME.value
    slots = []
    for f in schema.fields:
        if f.type is FieldType.JSON:
            slots += [
                Slot(f.name, kind, Placement.PATH, name, quantifier=quantifier)
                for kind in JSON_VALUE_TYPES
            ]
            continue
        placement = Placement.DECLARED if f.source else Placement.COLUMN
        peers = tuple(
            p.name for p in schema.fields if p.type is f.type and not p.source and not f.source
        )
        slots.append(Slot(f.name, f.type, placement, name, peers, quantifier=quantifier))
    return slots


def _aggregate_slots(relation: Relation) -> list[Slot]:
    slots = [
        Slot("count", FieldType.NUMBER, Placement.AGGREGATE, relation.name, (), Aggregate.COUNT)
    ]
    for function in Aggregate:
        if function is Aggregate.COUNT:
            continue
        for name in relation.aggregable(function):
            kind = relation.schema[name].type
            slots.append(Slot(name, kind, Placement.AGGREGATE, relation.name, (), function))
    return slots


@cache
def slots(schema: Schema = SPACE) -> tuple[Slot, ...]:
    """Every slot of `schema`: its fields and JSON value types at a path, those of each
    relation's rows, and the aggregates of each to-many relation."""
    found = _own_slots(schema, None)
    for relation in schema.relations:
        found += _own_slots(relation.schema, relation)
        if relation.many:
            found += _aggregate_slots(relation)
    return tuple(found)


# ---- operations --------------------------------------------------------------------------------


class Operand(StrEnum):
    """The kinds of operand an operator may take."""

    LITERAL = "literal"
    LIST = "list"
    NULL = "null"
    FLAG = "flag"
    RELATIVE = "relative"
    START = "start"
    PERIOD = "period"
    REFERENCE = "reference"


SHORTHAND = "="
"""The key of the shorthand form: the operand in place of an operator object."""


@dataclass(frozen=True)
class Operation:
    """An operator key with a kind of operand, `mode: "insensitive"` beside it or not, and
    under field-level `not` or not."""

    key: str
    operand: Operand
    insensitive: bool = False
    negated: bool = False

    @property
    def name(self) -> str:
        words = [self.key, self.operand.value]
        words += ["insensitive"] if self.insensitive else []
        return ("not " if self.negated else "") + " ".join(words)

    def body(self, operand: Any) -> Any:
        """The operator object (or shorthand literal) with `operand` in it."""
        inner: Any = operand if self.key == SHORTHAND else {self.key: operand}
        if self.negated:
            inner = {"not": inner}
        if self.insensitive:
            if not isinstance(inner, dict):
                return None
            inner = {**inner, "mode": "insensitive"}
        return inner


def candidate_keys() -> tuple[str, ...]:
    """Every operator key the registries name, the shorthand, `blank` and Prisma's aliases."""
    keys = [SHORTHAND, *(op.value for op in Op), *(op.value for op in ListOp), BLANK]
    keys += list(JSON_STRING_ALIASES)
    return tuple(dict.fromkeys(keys))


def _probe_literal(kind: FieldType) -> Any:
    """A literal of the type (of an item, for a list type): the field table's sample."""
    return _element(kind).entry.sample


def _probe_operand(slot: Slot, operand: Operand) -> Any:
    literal = _probe_literal(slot.type)
    return {
        Operand.LITERAL: literal,
        Operand.LIST: [literal],
        Operand.NULL: None,
        Operand.FLAG: True,
        Operand.RELATIVE: {"ago": "P1D"},
        Operand.START: {"startOf": "day"},
        Operand.PERIOD: {"this": "day"},
        Operand.REFERENCE: {"_ref": reference_names(slot)[-1]},
    }[operand]


def reference_names(slot: Slot) -> tuple[str, ...]:
    """The fields a reference at `slot` names: its peers. A slot with none (inside JSON, an
    aggregate's value) is probed with the column of its type all the same, so that a reference
    the parser ever takes there enters the space and meets every surface."""
    return slot.peers or (f"c_{slug(slot.type)}",)


def accepts(schema: Schema, where: dict[str, Any] | None) -> bool:
    """Whether the library reads `where` (a refusal is a `FilterError`)."""
    if where is None:
        return False
    try:
        parse(where, schema)
    except FilterError:
        return False
    return True


def _accepted(schema: Schema, slot: Slot, operation: Operation) -> bool:
    operand = _probe_operand(slot, operation.operand)
    body = operation.body(operand)
    return body is not None and accepts(schema, slot.where(body))


@cache
def operations(slot: Slot, schema: Schema = SPACE) -> tuple[Operation, ...]:
    """The operations the library accepts at `slot`: each candidate key with each kind of
    operand, then `mode: "insensitive"` and `not` on each accepted one."""
    plain = [
        Operation(key, operand)
        for key in candidate_keys()
        for operand in Operand
        if _accepted(schema, slot, Operation(key, operand))
    ]
    found = list(plain)
    for op in plain:
        for variant in (
            Operation(op.key, op.operand, insensitive=True),
            Operation(op.key, op.operand, negated=True),
            Operation(op.key, op.operand, insensitive=True, negated=True),
        ):
            if _accepted(schema, slot, variant):
                found.append(variant)
    return tuple(found)


# ---- edge values -------------------------------------------------------------------------------

STRINGS = (
    "",
    "a",
    "A",
    "a ",
    "ab",
    "b",
    "a\x00b",
    "\x00",
    "İ",
    "i\u0307",
    "i",
    "I",
    "ı",
    "ß",
    "SS",
    "ss",
    "ẞ",
    "σ",
    "ς",
    "Σ",
    "\u00e9",
    "e\u0301",
    "\u00c9",
    "NaN",
    "Infinity",
    "-0",
    "1",
    "true",
    "null",
    "50%",
    "5_0",
    "a\\b",
    "O'Brien",
    "😀",
    "\uffff",
    "ǅ",
)
"""Strings at the edges: NUL, trailing space, folding traps (İ, ß, σ/ς), NFC beside NFD, text
that reads as a number or a keyword elsewhere, LIKE metacharacters, beyond the BMP."""

COLUMN_NUMBERS = (0, 1, -1, 2, 100, 2**53 - 1, 2**53, 2**53 + 1, 2**63 - 1, -(2**63))
"""Numbers a 64-bit number column holds."""
NUMBERS = (
    *COLUMN_NUMBERS,
    -0.0,
    1.0,
    0.5,
    99.5,
    2.0**53,
    2**63,
    -(2**63) - 1,
    2**64,
    1e23,
    1e300,
    -1e300,
)
"""Numbers of literals and JSON values: past 2^53 and 2^63, 1e23 (not 10**23), 1e300, -0.0."""
WIDE_PARTNERS = {-1: -1e300, 1: 1e300}
"""Beside an integer at or past the 64-bit edges in an `in` list, a double far past every
integer an engine writes exactly, of its sign: one list of both must not be compared as
doubles, where -2^63 - 1 is -2^63."""

ZONES = (
    "UTC",
    "Pacific/Kiritimati",
    "Pacific/Pago_Pago",
    "Europe/Paris",
    "America/Santiago",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Asia/Kolkata",
)
"""From UTC+14 to UTC-11, daylight saving at midnight (Santiago), 30 and 45 minutes."""

NOWS = (
    datetime(2025, 7, 1, tzinfo=UTC),
    datetime(2024, 2, 29, 12, tzinfo=UTC),
    datetime(2025, 2, 28, 23, 30, tzinfo=UTC),
    datetime(2025, 3, 30, 0, 30, tzinfo=UTC),
    datetime(2022, 9, 11, 4, 30, tzinfo=UTC),
    datetime(2025, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2026, 1, 1, 10, 30, tzinfo=UTC),
)
"""Instants to evaluate at: a leap day, the last day of February when Kiritimati is in March,
a daylight-saving day in Paris, Santiago's skipped midnight, the last microsecond of a year,
the hour when the date line's two sides are two days apart."""

FIXED_INSTANTS = (
    datetime(1, 1, 1, tzinfo=UTC),
    datetime(1582, 10, 4, 12, tzinfo=UTC),
    datetime(1582, 10, 15, tzinfo=UTC),
    datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2024, 2, 29, 23, 59, 59, 999999, tzinfo=UTC),
    datetime(2025, 10, 26, 2, 30, fold=1, tzinfo=ZoneInfo("Europe/Paris")),
    datetime(2025, 3, 30, 2, 30, tzinfo=ZoneInfo("Europe/Paris")),
    datetime(2022, 9, 11, 0, 30, tzinfo=ZoneInfo("America/Santiago")),
)
"""Instants far from any `now`: the first and last representable, the Gregorian change, a leap
day's last microsecond, Paris's repeated and skipped hours, Santiago's skipped midnight."""
FIXED_DATES = (
    date(1, 1, 1),
    date(1582, 10, 4),
    date(1582, 10, 15),
    date(9999, 12, 31),
    date(2000, 2, 29),
    date(2024, 2, 29),
    date(2025, 2, 28),
    date(1990, 3, 1),
)

DURATIONS = (
    "PT0S",
    "PT0.000001S",
    "PT1H",
    "P1D",
    "P1W",
    "P30D",
    "P1M",
    "P1M1D",
    "P6M",
    "P1Y",
    "P4Y",
    "P2000Y",
)
UNITS = ("day", "week", "month", "year")
STEPS = (0, 0, 1, -1, 2, -7, 1000, -1000000)
"""Offsets and period lengths: small, and far enough to meet year 1 or 9999."""

_NEAR = (
    timedelta(0),
    timedelta(microseconds=1),
    timedelta(microseconds=-1),
    timedelta(hours=1),
    timedelta(hours=-11),
    timedelta(hours=14),
    timedelta(days=-1),
    timedelta(days=-7),
    timedelta(days=-30),
    timedelta(days=-365),
    timedelta(days=-366 * 4),
    timedelta(days=3),
)


def instants(now: datetime) -> st.SearchStrategy[datetime]:
    """Instants near `now` (a microsecond, hours across the date line, days, years) in any of
    `ZONES`, and the fixed edges."""
    near = st.builds(
        lambda delta, zone: (now + delta).astimezone(ZoneInfo(zone)),
        st.sampled_from(_NEAR),
        st.sampled_from(ZONES),
    )
    return st.one_of(near, near, st.sampled_from(FIXED_INSTANTS))


def days(now: datetime) -> st.SearchStrategy[date]:
    """Dates near `now`'s (in every zone, so either side of the date line), years earlier on
    the same month-day, and the fixed edges."""
    near = st.builds(
        lambda delta, zone: (now + delta).astimezone(ZoneInfo(zone)).date(),
        st.sampled_from(_NEAR),
        st.sampled_from(ZONES),
    )
    return st.one_of(near, near, st.sampled_from(FIXED_DATES))


def spelt_instant(moment: datetime, how: int) -> str:
    """An instant as a literal: in its own offset, in UTC with `Z`, or naive UTC."""
    if how == 0:
        return moment.isoformat()
    text = moment.astimezone(UTC).isoformat()
    return text.replace("+00:00", "Z") if how == 1 else text.replace("+00:00", "")


# ---- operands ----------------------------------------------------------------------------------


def literals(kind: FieldType, now: datetime) -> st.SearchStrategy[Any]:
    """JSON-ready literals of a scalar type."""
    kind = _element(kind)
    if kind is FieldType.STRING:
        return st.sampled_from(STRINGS)
    if kind is FieldType.NUMBER:
        return st.sampled_from(NUMBERS)
    if kind is FieldType.BOOLEAN:
        return st.booleans()
    if kind is FieldType.DATE:
        return days(now).map(date.isoformat)
    return st.builds(spelt_instant, instants(now), st.integers(0, 2))


def starts() -> st.SearchStrategy[dict[str, Any]]:
    """`{"startOf": unit, "offset"?: n, "timeZone"?: zone}`."""
    return st.builds(
        lambda unit, offset, zone: _zoned({"startOf": unit, "offset": offset}, zone),
        st.sampled_from(UNITS),
        st.sampled_from(STEPS),
        st.sampled_from((None, *ZONES)),
    )


def periods() -> st.SearchStrategy[dict[str, Any]]:
    """`{"this": unit}`, `{"last"|"next": n, "unit": unit}`, with a `timeZone` at times."""
    this = st.sampled_from(UNITS).map(lambda unit: {"this": unit})
    counted = st.builds(
        lambda way, n, unit: {way: n, "unit": unit},
        st.sampled_from(("last", "next")),
        st.sampled_from((1, 2, 7, 30, 1000, 1000000)),
        st.sampled_from(UNITS),
    )
    return st.builds(_zoned, st.one_of(this, counted), st.sampled_from((None, *ZONES)))


def _zoned(value: dict[str, Any], zone: str | None) -> dict[str, Any]:
    value = {k: v for k, v in value.items() if v != 0 or k != "offset"}
    return value if zone is None else {**value, "timeZone": zone}


def operands(
    slot: Slot, operation: Operation, now: datetime, values: st.SearchStrategy[Any] | None = None
) -> st.SearchStrategy[Any]:
    """The operands of `operation` at `slot`, literals from `values` (default the edge pool of
    the slot's type)."""
    literal = values if values is not None else literals(slot.type, now)
    kind = operation.operand
    if kind is Operand.LITERAL:
        return literal
    if kind is Operand.LIST:
        return st.lists(literal, max_size=3)
    if kind is Operand.NULL:
        return st.none()
    if kind is Operand.FLAG:
        return st.booleans()
    if kind is Operand.RELATIVE:
        return st.sampled_from(DURATIONS).map(lambda d: {"ago": d})
    if kind is Operand.START:
        return starts()
    if kind is Operand.PERIOD:
        return periods()
    return st.sampled_from(reference_names(slot)).map(lambda peer: {"_ref": peer})


# ---- conditions and where clauses -------------------------------------------------------------

PATHS = (("a",), ("j_string",), ("j_number",), ("n", "a"), ("a", "b"), ("",), ("x.y",))
"""Paths of conditions on `data`: keys records hold, declared fields' keys, nested ones."""


def every_condition(
    schema: Schema = SPACE, *, of: Callable[[Slot], bool] | None = None
) -> Iterator[tuple[Slot, Operation, dict[str, Any]]]:
    """One where clause per slot and operation of `schema`, with the operand the library was
    asked with: the deterministic sweep of the whole space, or of the slots `of` keeps."""
    for slot in slots(schema):
        if of is not None and not of(slot):
            continue
        relation = schema.relation(slot.relation) if slot.relation else None
        quantifiers = [q.value for q in relation.quantifiers] if relation else [None]
        for n, operation in enumerate(operations(slot, schema)):
            body = operation.body(_probe_operand(slot, operation.operand))
            # each quantifier in turn, so the sweep asks every one of them
            where = slot.where(body, quantifier=quantifiers[n % len(quantifiers)])
            if where is not None:
                yield slot, operation, where


def _edge_pool(kind: FieldType, now: datetime) -> tuple[Any, ...]:
    """The edge literals of a scalar type, as JSON operands."""
    kind = _element(kind)
    if kind is FieldType.STRING:
        return STRINGS
    if kind is FieldType.NUMBER:
        return NUMBERS
    if kind is FieldType.BOOLEAN:
        return (True, False)
    if kind is FieldType.DATE:
        return tuple(day.isoformat() for day in (*FIXED_DATES, now.date()))
    return tuple(spelt_instant(moment, n % 3) for n, moment in enumerate((*FIXED_INSTANTS, now)))


def _wide_partner(value: Any) -> tuple[Any, ...]:
    """The far double of `WIDE_PARTNERS` for an integer at or past the 64-bit edges."""
    if type(value) is not int or abs(value) < 2**63 - 1:
        return ()
    return (WIDE_PARTNERS[-1 if value < 0 else 1],)


def edge_conditions(
    schema: Schema = SPACE,
    now: datetime = NOWS[0],
    *,
    every: bool = False,
    of: Callable[[Slot], bool] | None = None,
) -> Iterator[tuple[Slot, Operation, dict[str, Any]]]:
    """Conditions whose operand is an edge literal (`STRINGS`, `NUMBERS`, the fixed dates and
    instants), alone or beside the probe literal in a list: each slot and operation (`not`
    and `mode` variants included) with every edge when `every`, else with one edge each, the
    edges taken in turn so that every edge meets many slots. The library's refusals are left
    out (what it reads is what the surfaces are asked). `of`: the slots it keeps alone (the
    edges then taken in turn over those)."""
    turn = 0
    for slot in slots(schema):
        if of is not None and not of(slot):
            continue
        relation = schema.relation(slot.relation) if slot.relation else None
        quantifiers = [q.value for q in relation.quantifiers] if relation else [None]
        for n, operation in enumerate(operations(slot, schema)):
            if operation.operand not in (Operand.LITERAL, Operand.LIST):
                continue
            pool = _edge_pool(slot.type, now)
            chosen = pool if every else (pool[turn % len(pool)],)
            turn += 1
            for value in chosen:
                if operation.operand is Operand.LIST:
                    operand: Any = [value, _probe_literal(slot.type), *_wide_partner(value)]
                else:
                    operand = value
                body = operation.body(operand)
                where = slot.where(body, quantifier=quantifiers[n % len(quantifiers)])
                if where is not None and accepts(schema, where):
                    yield slot, operation, where


@st.composite
def conditions(draw: st.DrawFn, schema: Schema, now: datetime) -> dict[str, Any]:
    """One condition: a slot, an operation legal there, an operand from the edge pools, and a
    quantifier for a related row."""
    slot = draw(st.sampled_from([s for s in slots(schema) if operations(s, schema)]))
    operation = draw(st.sampled_from(operations(slot, schema)))
    body = operation.body(draw(operands(slot, operation, now)))
    relation = schema.relation(slot.relation) if slot.relation else None
    quantifier = draw(
        st.sampled_from([q.value for q in relation.quantifiers] if relation else [None])
    )
    where = slot.where(body, quantifier=quantifier, path=draw(st.sampled_from(PATHS)))
    assert where is not None
    if relation is not None and relation.many and slot.function is not None and draw(st.booleans()):
        narrow = draw(conditions(relation.schema, now))
        where[relation.name] = {"where": narrow, **where[relation.name]}
    return where


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    if set(left) & set(right):
        return {"AND": [left, right]}
    return {**left, **right}


def where_clauses(
    schema: Schema = SPACE, now: datetime = NOWS[0], *, max_leaves: int = 5
) -> st.SearchStrategy[dict[str, Any]]:
    """Where clauses over the space: conditions in AND, OR and NOT groups (arrays and single
    objects), merged objects, and `{}` now and then."""
    leaf = st.one_of(conditions(schema, now), conditions(schema, now), st.just({}))

    def groups(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
        listed = st.lists(children, max_size=3)
        return st.one_of(
            listed.map(lambda items: {"AND": items}),
            listed.map(lambda items: {"OR": items}),
            listed.map(lambda items: {"NOT": items}),
            children.map(lambda item: {"NOT": item}),
            st.builds(_merge, children, children),
        )

    return st.recursive(leaf, groups, max_leaves=max_leaves)


# ---- records -----------------------------------------------------------------------------------

_MISSING = object()
DATA_KEYS = ("a", "b", "n", "", "x.y")


def json_scalars(now: datetime) -> st.SearchStrategy[Any]:
    """JSON scalars: null, booleans beside 0 and 1, the edge numbers and strings, and dates and
    instants as text."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from(NUMBERS),
        st.sampled_from(STRINGS),
        days(now).map(date.isoformat),
    )


def _declared_value(kind: FieldType, now: datetime) -> st.SearchStrategy[Any]:
    """What a record holds at a declared field's key: mostly its type, another JSON value now
    and then (FALSE for every comparison)."""
    if kind.element is not None:
        item = st.one_of(_json_item(kind.element, now), st.none())
        typed: st.SearchStrategy[Any] = st.lists(item, max_size=3)
    elif kind is FieldType.DATE:
        typed = days(now).map(date.isoformat)
    else:
        typed = _json_item(kind, now)
    return st.one_of(typed, typed, typed, json_scalars(now))


def _json_item(kind: FieldType, now: datetime) -> st.SearchStrategy[Any]:
    if kind is FieldType.NUMBER:
        return st.sampled_from((*NUMBERS, True, False))
    if kind is FieldType.STRING:
        return st.sampled_from(STRINGS)
    return st.one_of(st.booleans(), st.sampled_from((0, 1)))


@cache
def data_objects(schema: Schema, now: datetime) -> st.SearchStrategy[dict[str, Any]]:
    """The JSON column: keys of paths with JSON values of every type (arrays and objects
    too), and the declared fields' keys holding what they declare, mostly. Built once per
    schema and `now`: a record draws it for every row, and hypothesis validates a strategy
    the first time it is drawn."""
    scalar = json_scalars(now)
    inner = st.one_of(
        scalar,
        scalar,
        st.lists(scalar, max_size=3),
        st.dictionaries(st.sampled_from(DATA_KEYS), scalar, max_size=2),
    )
    declared = {
        f.source[1]: st.one_of(st.just(_MISSING), _declared_value(f.type, now))
        for f in schema.fields
        if f.source
    }
    free = st.dictionaries(st.sampled_from(DATA_KEYS), inner, max_size=3)
    return st.builds(
        lambda free, fixed: {**free, **{k: v for k, v in fixed.items() if v is not _MISSING}},
        free,
        st.fixed_dictionaries(declared),
    )


@cache
def field_values(kind: FieldType, now: datetime) -> st.SearchStrategy[Any]:
    """Raw Python values of a column of type `kind`, built once per type and `now` (as
    `data_objects`)."""
    if kind.element is not None:
        item = field_values(kind.element, now)
        return st.lists(st.one_of(item, item, st.none()), max_size=3)
    if kind is FieldType.STRING:
        return st.sampled_from(STRINGS)
    if kind is FieldType.NUMBER:
        return st.sampled_from(COLUMN_NUMBERS)
    if kind is FieldType.BOOLEAN:
        return st.booleans()
    if kind is FieldType.DATE:
        return days(now)
    return instants(now)


@st.composite
def records(
    draw: st.DrawFn, schema: Schema = SPACE, now: datetime = NOWS[0], depth: int = 0
) -> dict[str, Any]:
    """A raw record of `schema`: each column a value, null or missing; the JSON column an
    object (fields declared inside it at their keys); each relation's rows (one level deep)."""
    record: dict[str, Any] = {}
    for name, values in _columns(schema, now):
        chosen = draw(values)
        if chosen is not _MISSING:
            record[name] = chosen
    for relation, rows_of in _relations(schema, now, depth):
        rows: Any = draw(rows_of)
        chosen = draw(st.sampled_from((_MISSING, None, rows, rows, rows)))
        if chosen is not _MISSING:
            record[relation.name] = chosen
    return record


@cache
def _columns(schema: Schema, now: datetime) -> tuple[tuple[str, st.SearchStrategy[Any]], ...]:
    """Each column of a record and what it holds (missing, null or a value), built once per
    schema and `now`: a record is drawn for every row, and hypothesis validates a strategy the
    first time it draws it."""
    columns = []
    for f in schema.fields:
        if f.source:
            continue
        value = data_objects(schema, now) if f.type is FieldType.JSON else field_values(f.type, now)
        columns.append((f.name, st.one_of(st.just(_MISSING), st.none(), value, value, value)))
    return tuple(columns)


@cache
def _relations(
    schema: Schema, now: datetime, depth: int
) -> tuple[tuple[Relation, st.SearchStrategy[Any]], ...]:
    """Each relation of a record (one level deep) and its rows' strategy, built once."""
    found = []
    for relation in schema.relations if depth == 0 else ():
        row = records(relation.schema, now, depth + 1)
        found.append((relation, st.lists(row, max_size=3) if relation.many else row))
    return tuple(found)


def json_encoded(value: Any) -> Any:
    """`value` as it reads back from JSON text: instants and dates as ISO 8601 text (an aware
    instant keeps its offset), tuples as lists, a `Decimal` (an exact witness the examples
    build between two numbers) as its digits read back: an `int` when written whole, else the
    double nearest."""

    def default(item: Any) -> Any:
        if isinstance(item, datetime | date):
            return item.isoformat()
        if isinstance(item, Decimal):
            return json.loads(str(item)) if item.is_finite() else float(item)
        raise TypeError(type(item).__name__)

    return json.loads(json.dumps(value, default=default))


# ---- batches -----------------------------------------------------------------------------------


class Encoding(StrEnum):
    """How a batch's records are handed to the surfaces."""

    RAW = "raw"
    JSON = "json"


@dataclass(frozen=True)
class Batch:
    """Filters and records judged together at one `now`: every surface is asked every filter
    over every record."""

    now: datetime
    schema: Schema
    wheres: tuple[dict[str, Any], ...]
    records: tuple[dict[str, Any], ...]
    encoding: Encoding = Encoding.RAW
    notes: Mapping[str, Any] = field(default_factory=dict)


@st.composite
def batches(
    draw: st.DrawFn,
    *,
    filters: int = 12,
    rows: int = 12,
    zones: tuple[str, ...] = ("UTC", "Pacific/Kiritimati", "Pacific/Pago_Pago"),
    examples: int = 2,
) -> Batch:
    """A batch: a `now` from `NOWS`, the space schema in a zone, `filters` where clauses and
    `rows` records with ids `r0`, `r1`, ... (each related row `r0.0`, ...), in one encoding;
    then the records `af.testing.examples` builds for the first `examples` filters (ids `e0`,
    `e1`, ...; `notes["examples"]` counts them), which sit on each condition's edge."""
    now = draw(st.sampled_from(NOWS))
    schema = space_schema(draw(st.sampled_from(zones)))
    wheres = draw(st.lists(where_clauses(schema, now), min_size=filters, max_size=filters))
    raw = draw(st.lists(records(schema, now), min_size=rows, max_size=rows))
    built = example_records(schema, now, wheres[:examples])
    numbered = tuple(_numbered(i, record) for i, record in enumerate(raw))
    numbered += tuple(_numbered(i, record, "e") for i, record in enumerate(built))
    encoding = draw(st.sampled_from(Encoding))
    if encoding is Encoding.JSON:
        numbered = tuple(json_encoded(record) for record in numbered)
    notes = {"examples": len(built), "example_filters": min(examples, len(wheres))}
    return Batch(now, schema, tuple(wheres), numbered, encoding, notes)


def _numbered(index: int, record: dict[str, Any], prefix: str = "r") -> dict[str, Any]:
    """`record` with the id `name` and each related row without an `id` numbered after it. A
    row's `id` is a field of the relation's schema like any other: one drawn, or built on a
    condition's edge by `af.testing.examples` (`owner.is.id`), is kept, or the record would no
    longer sit where it was built to."""
    name = f"{prefix}{index}"
    record = {"id": name, **record}
    for key in (RELATED, OWNER):
        rows = record.get(key)
        if isinstance(rows, list):
            record[key] = [{"id": f"{name}.{n}", **row} for n, row in enumerate(rows)]
        elif isinstance(rows, dict):
            record[key] = {"id": f"{name}.o", **rows}
    return record


# ---- what a placement holds, each in turn ------------------------------------------------------

JSON_HOLDINGS: tuple[Any, ...] = (
    _MISSING,
    None,
    True,
    False,
    0,
    1,
    -0.0,
    2**53 + 1,
    1e23,
    "",
    "x",
    "2025-07-04",
    "NaN",
    [],
    ["x"],
    [1, True],
    [None],
    {"a": 1},
)
"""What a key of the JSON column may hold: missing, null, every JSON type and the values that
look like another (booleans beside 0 and 1, a date's text, an empty array, an array of null).
Every key of `held_records` holds each of them in turn, whatever the field declared there."""


def _column_pool(kind: FieldType, now: datetime) -> tuple[Any, ...]:
    """The values a column of `kind` holds in `held_records`: null, missing and the edges."""
    near = tuple(now + delta for delta in _NEAR[:4])
    scalars: dict[FieldType, tuple[Any, ...]] = {
        FieldType.STRING: STRINGS,
        FieldType.NUMBER: COLUMN_NUMBERS,
        FieldType.BOOLEAN: (True, False),
        FieldType.DATE: (*FIXED_DATES, *(moment.date() for moment in near)),
        FieldType.DATETIME: (*FIXED_INSTANTS, *near),
    }
    element = kind.element
    if element is None:
        return (_MISSING, None, *scalars[kind])
    items = scalars[element]
    lists = [[], [None], *([item] for item in items), [items[0], None, items[-1]]]
    return (_MISSING, None, *lists)


def _held(pool: tuple[Any, ...], index: int, key: int) -> Any:
    """The value the `key`-th placement holds in record `index`: each key walks the whole
    pool, keys out of step with each other so that records mix their holdings."""
    return pool[(index + 5 * key) % len(pool)]


def _held_row(schema: Schema, now: datetime, index: int) -> dict[str, Any]:
    row: dict[str, Any] = {}
    keys = 0
    data: dict[str, Any] = {}
    for f in schema.fields:
        keys += 1
        if f.source:
            data[f.source[-1]] = _held(JSON_HOLDINGS, index, keys)
        elif f.type is not FieldType.JSON and f.name != "id":
            row[f.name] = _held(_column_pool(f.type, now), index, keys)
    for n, key in enumerate(DATA_KEYS):
        data[key] = _held(JSON_HOLDINGS, index, keys + n)
    data = {k: v for k, v in data.items() if v is not _MISSING}
    if schema.get(JSON_COLUMN) is not None:
        row[JSON_COLUMN] = None if index % len(JSON_HOLDINGS) == 1 else data
    return {k: v for k, v in row.items() if v is not _MISSING}


def held_records(schema: Schema = SPACE, now: datetime = NOWS[0]) -> tuple[dict[str, Any], ...]:
    """Records in which every placement holds each kind of value in turn, not by chance: every
    key of the JSON column (a declared field's or a free path's) each of `JSON_HOLDINGS`,
    every column null, missing and a spread of its edges, and related rows (none, null, empty, one
    and two rows, a to-one row) holding the same. The sweep asks every condition over them, so
    a crossing such as a list declared inside JSON holding text under `not` is always met."""
    count = len(JSON_HOLDINGS)
    found = []
    for index in range(count):
        record = {"id": f"h{index}", **_held_row(schema, now, index)}
        for relation in schema.relations:
            rows = [
                {**_held_row(relation.schema, now, index + n + 1), "id": f"h{index}.{n}"}
                for n in range(index % 3)
            ]
            shape = index % 5
            if shape == 0:
                continue
            if relation.many:
                record[relation.name] = None if shape == 1 else rows
            else:
                record[relation.name] = None if shape == 1 else (rows or [{"id": f"h{index}.o"}])[0]
        found.append(record)
    return tuple(found)


__all__ = [
    "edge_conditions",
    "JSON_HOLDINGS",
    "held_records",
    "Batch",
    "Encoding",
    "Operand",
    "Operation",
    "Placement",
    "SPACE",
    "Slot",
    "accepts",
    "batches",
    "candidate_keys",
    "conditions",
    "every_condition",
    "json_encoded",
    "operations",
    "records",
    "slots",
    "space_schema",
    "where_clauses",
]
