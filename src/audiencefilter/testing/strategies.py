"""Hypothesis strategies for filters and records, for this project's tests and for users'.

The values come from small shared pools (mixed case, non-ASCII, LIKE metacharacters, quotes,
integers around 2^53 and 2^63, date-times with offsets and microseconds) so that random
filters often hit random records: a differential test that never matches anything proves
little. Requires the `hypothesis` package, which the core library does not depend on.

Tame pools alone miss the inputs where engines part ways, so `wide=True` (on `records`,
`record_lists`, `where_clauses` and `filters`) mixes in the wide strategies, each also usable on
its own: `data_keys` and `unicode_strings` (all of Unicode: controls, NUL in strings, `-`, `-1`,
`*`, non-ASCII), `wide_numbers` (beyond 2^53, 64 and 128 bits, 300-digit integers, subnormal
floats), `zoned_datetimes` (zoneinfo zones on daylight-saving folds and gaps, half-hour
offsets), `json_scalars` (true and false beside 1 and 0), `wide_data_objects`,
`data_conditions` (`in` lists mixing integers and floats) and `wrong_typed_values` (for
checking that a record of the wrong type raises `RecordError`). The tame pools still supply
half of the values, so that filters keep hitting records. Lone surrogates are never drawn.

`lookalike_conditions`, `lookalike_filters` and `lookalike_data` draw literals Python's `==`
joins across JSON types (`true` and `1`, `false`, `0` and `-0.0`) at one path, so that whatever
shares conditions (`FilterSet`, `simplify`, filter equality) meets them side by side.

Date-time conditions are sometimes relative (`{"ago": "P6M"}`). Their durations are chosen so
that, taken at `NOW`, they land on or next to the instants records hold (`P6M` is exactly
2025-01-01): evaluate with `now=NOW` to make them bite.

    >>> from hypothesis import given
    >>> from audiencefilter.testing.strategies import filters, records
    >>> @given(filters(), records())
    ... def test_my_audience_logic(flt, record): ...
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta, timezone
from functools import partial
from typing import Any

from hypothesis import strategies as st

from ..filter import Filter, parse
from ..language.conditions import REF, REFERENCE_OPS
from ..language.contact import CONTACT
from ..language.data_paths import value_type
from ..language.fields import (
    JSON_STRING_ALIASES,
    JSON_VALUE_TYPES,
    LIST_OPS,
    OPERATORS,
    PERIOD_OPS,
    Field,
    FieldType,
    ListOp,
    Op,
    Schema,
)
from .value_kinds import value_kinds

WORDS = (
    "",
    "a",
    "A",
    "ab",
    "aB",
    "Ab",
    "gmail",
    "GMAIL",
    "Élodie",
    "élodie",
    "ÉLODIE",
    "straße",
    "STRASSE",
    "İstanbul",
    "i̇stanbul",
    "istanbul",
    "ı",
    "50%",
    "5_0",
    "a\\b",
    "a%_\\",
    "O'Brien",
    "o'brien",
    "--",
    "; drop table contacts; --",
    "“quoted”",
    "San Diego",
    "san",
    "Ω",
    "ω",
    "Σίσυφος",
    "😀",
    "e\u0301",
    "\u00e9",
)
"""Strings records and filters share; includes NFC vs NFD forms that must stay different."""

INTEGERS = (
    0,
    1,
    -1,
    2,
    10,
    99,
    100,
    101,
    500,
    1000,
    2**31 - 1,
    -(2**31),
    2**53,
    2**53 + 1,
    -(2**53) - 1,
    2**63 - 1,
    -(2**63),
)
"""Integers records may hold: within a signed 64-bit column, around the float-exact limit."""

_ZONES = (UTC, timezone(timedelta(hours=2)), timezone(timedelta(hours=-5, minutes=-30)))

NOW = datetime(2025, 7, 1, tzinfo=UTC)
"""The instant to evaluate relative date-times of generated filters at."""

DURATIONS = ("PT0S", "PT0.000001S", "P1D", "P1W", "PT1H", "P1M1D", "P6M", "P18M", "P1Y6M", "P2Y")
"""Durations of generated relative date-times: from `NOW`, `P6M` is 2025-01-01, `P18M` and
`P1Y6M` are 2024-01-01 and `PT0.000001S` is the last microsecond of June 2025."""


def _instants() -> st.SearchStrategy[datetime]:
    base = st.sampled_from(
        (
            datetime(2024, 1, 1, tzinfo=UTC),
            datetime(2025, 1, 1, tzinfo=UTC),
            datetime(2025, 6, 30, 23, 59, 59, 999999, tzinfo=UTC),
            NOW,
        )
    )
    shifted = st.builds(
        lambda start, micros: start + timedelta(microseconds=micros),
        base,
        st.sampled_from((0, 1, -1, 3_600_000_000, 86_400_000_000)),
    )
    return st.builds(lambda moment, zone: moment.astimezone(zone), shifted, st.sampled_from(_ZONES))


def strings(hostile: bool = False) -> st.SearchStrategy[str]:
    """Pool words, mixed with short random text over case pairs, non-ASCII letters, quotes and
    LIKE/GLOB metacharacters (optionally with NUL and controls)."""
    alphabet = "aAbBéÉßİı%_\\'\"-; *?[!"
    if hostile:
        alphabet += "\x00\x01\n\t\u2028"
    return st.one_of(st.sampled_from(WORDS), st.text(alphabet, max_size=6))


def numbers() -> st.SearchStrategy[int | float]:
    return st.one_of(
        st.sampled_from(INTEGERS),
        st.integers(-1000, 1000),
        st.sampled_from((0.5, -0.5, 99.5, 100.0, 1e3, 2.0**53)),
    )


def _value(kind: FieldType, hostile: bool = False, wide: bool = False) -> st.SearchStrategy[Any]:
    if wide and kind is FieldType.STRING:
        return st.one_of(strings(hostile), unicode_strings(nul=hostile))
    if wide and kind is FieldType.NUMBER:
        return wide_numbers()
    if wide and kind is FieldType.DATETIME:
        return st.one_of(_instants(), zoned_datetimes())
    if kind is FieldType.STRING:
        return strings(hostile)
    if kind is FieldType.NUMBER:
        return numbers()
    if kind is FieldType.BOOLEAN:
        return st.booleans()
    if kind is FieldType.DATE:
        return dates()
    return _instants()


DATES = (
    date(1990, 11, 16),
    date(1990, 11, 23),
    date(2000, 2, 29),
    date(2024, 2, 29),
    date(1970, 1, 1),
    date(1999, 12, 31),
    date(2026, 1, 1),
    date(2026, 11, 20),
    date(2026, 11, 23),
)
"""Birthdays near the edges a date meets: a week's ends, 29 February, a year's turn."""


def dates() -> st.SearchStrategy[date]:
    """Calendar dates: `DATES`, and any day from 1900 to 2100."""
    return st.one_of(
        st.sampled_from(DATES), st.dates(min_value=date(1900, 1, 1), max_value=date(2100, 12, 31))
    )


DATA_KEYS = ("plan", "seats", "a b", 'q"\\', "x.y", "0", "")
"""Keys of generated `data` objects and paths, hostile ones included."""
DATA_NUMBERS = (0, 1, -1, 5, 100, 2.5, -0.5, 99.5, 2**53, -(2**53))
"""Numbers inside `data`: exact as doubles, as every engine's JSON numbers are (see
docs/backends-sql-rules.md for engines that compare JSON numbers as doubles)."""


def _data_scalar(kind: FieldType) -> st.SearchStrategy[Any]:
    if kind is FieldType.STRING:
        return strings()
    if kind is FieldType.NUMBER:
        return st.one_of(st.sampled_from(DATA_NUMBERS), st.integers(-1000, 1000))
    return st.booleans()


def data_objects() -> st.SearchStrategy[dict[str, Any]]:
    """`data` objects: scalars of every JSON type, nulls, arrays and nested objects."""
    scalar = st.one_of(st.none(), *(_data_scalar(kind) for kind in JSON_VALUE_TYPES))
    inner = st.one_of(
        scalar, st.lists(scalar, max_size=2), st.dictionaries(st.sampled_from(DATA_KEYS), scalar)
    )
    return st.dictionaries(st.sampled_from(DATA_KEYS), inner, max_size=4)


def _record_value(kind: FieldType, hostile: bool, wide: bool = False) -> st.SearchStrategy[Any]:
    if kind is FieldType.NUMBER:  # records hold integers, as the contact columns do
        tame = st.one_of(st.sampled_from(INTEGERS), st.integers(-1000, 1000))
        return st.one_of(tame, st.integers(-(2**63), 2**63 - 1)) if wide else tame
    if kind is FieldType.JSON:
        return st.one_of(data_objects(), wide_data_objects()) if wide else data_objects()
    return _value(kind, hostile, wide)


def _data_condition(field: str, draw: st.DrawFn) -> dict[str, Any]:
    """`{field: {"path": [...], ops...}}`, the operators fitting one drawn value type."""
    kind = draw(st.sampled_from(JSON_VALUE_TYPES))
    value = _data_scalar(kind)
    path = draw(st.lists(st.sampled_from(DATA_KEYS), min_size=1, max_size=2))
    ops = sorted(OPERATORS[kind], key=lambda op: op.value)
    body: dict[str, Any] = {"path": path}
    for op in draw(st.lists(st.sampled_from(ops), min_size=1, max_size=2, unique=True)):
        body[op.value] = _data_operand(draw, op, value)
    body.update(_data_negation(draw, ops, value))
    _add_data_extras(draw, kind, value, body)
    return {field: body}


def _data_operand(draw: st.DrawFn, op: Op, value: st.SearchStrategy[Any]) -> Any:
    operand = draw(st.lists(value, max_size=3) if op in LIST_OPS else value)
    if op in LIST_OPS and draw(st.integers(0, 7)) == 0:
        return None  # a null test, as Prisma reads it
    return operand


def _data_negation(draw: st.DrawFn, ops: list[Op], value: st.SearchStrategy[Any]) -> dict[str, Any]:
    """Now and then a `not`: of null, of a value, or of one operator."""
    negation = draw(st.integers(0, 4))
    if negation == 1:
        return {"not": None}
    if negation == 2:
        return {"not": draw(value)}
    if negation == 3:
        op = draw(st.sampled_from(ops))
        return {"not": {op.value: draw(st.lists(value, max_size=2) if op in LIST_OPS else value)}}
    return {}


def _add_data_extras(
    draw: st.DrawFn, kind: FieldType, value: st.SearchStrategy[Any], body: dict[str, Any]
) -> None:
    """Now and then a null test, a `mode`, a `blank`, or Prisma's string alias beside the
    operators."""
    if draw(st.integers(0, 5)) == 0:
        body["equals"] = None
    if kind is FieldType.STRING and draw(st.booleans()):
        body["mode"] = "insensitive"
    if draw(st.integers(0, 7)) == 0:
        body["blank"] = draw(st.booleans())  # null or "" at the path
    if kind is FieldType.STRING and draw(st.integers(0, 5)) == 0:
        # Prisma's spelling of contains, startsWith or endsWith
        body[draw(st.sampled_from(sorted(JSON_STRING_ALIASES)))] = draw(value)


_MISSING = object()


def records(
    schema: Schema = CONTACT, *, hostile: bool = False, wide: bool = False, kinds: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Records of `schema`: each field a typed value (half the time), null, or missing.

    Values dominate so that comparisons are mostly TRUE or FALSE: with as many nulls as values,
    most filters would be UNKNOWN for most records and select nothing. With `wide`, values also
    come from the wide strategies below (zone-aware date-times, strings and `data` keys from all
    of Unicode, any 64-bit integer, JSON numbers of any size), the tame pools still half the
    time so that filters keep hitting records. With `kinds`, a value (a null too) may come as
    another kind of Python value standing for it (`value_kinds`: `nan`, `pd.NA`, `NaT`, NumPy
    scalars, `Decimal`, `pd.Timestamp`).
    """

    def field(kind: FieldType) -> st.SearchStrategy[Any]:
        value = _record_value(kind, hostile, wide)
        drawn = st.one_of(st.just(_MISSING), st.none(), value, value)
        return drawn.flatmap(_of_any_kind) if kinds else drawn

    fields = {f.name: field(f.type) for f in schema.fields}
    return st.fixed_dictionaries(fields).map(
        lambda row: {name: value for name, value in row.items() if value is not _MISSING}
    )


def _of_any_kind(value: Any) -> st.SearchStrategy[Any]:
    return st.just(value) if value is _MISSING else value_kinds(value)


def record_lists(
    schema: Schema = CONTACT,
    *,
    min_size: int = 0,
    max_size: int = 12,
    hostile: bool = False,
    wide: bool = False,
) -> st.SearchStrategy[list[dict[str, Any]]]:
    """Lists of records with unique string ids `r0`, `r1`, ... in the `id` key."""
    rows = records(schema, hostile=hostile, wide=wide)
    return st.lists(rows, min_size=min_size, max_size=max_size).map(
        lambda rows: [{"id": f"r{i}", **row} for i, row in enumerate(rows)]
    )


def _json_literal(kind: FieldType, value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


def relative_values() -> st.SearchStrategy[dict[str, str]]:
    """`{"ago": duration}` from `DURATIONS`, sometimes spelt another way (`P7D` for `P1W`)."""
    spelt = st.sampled_from(DURATIONS) | st.sampled_from(("P7D", "PT60M", "P0D", "p1d", "P12M"))
    return spelt.map(lambda duration: {"ago": duration})


CALENDAR_ZONES = (
    "UTC",
    "Europe/Paris",
    "America/Santiago",
    "Asia/Beirut",
    "Asia/Kolkata",
    "Pacific/Chatham",
    "Australia/Lord_Howe",
)
"""Zones for calendar values: daylight saving at midnight (Santiago, Beirut), half-hour and
45-minute offsets, a half-hour shift (Lord Howe)."""


def _zone_key(draw: st.DrawFn, data: dict[str, Any]) -> dict[str, Any]:
    if draw(st.booleans()):
        data["timeZone"] = draw(st.sampled_from(CALENDAR_ZONES))
    return data


def calendar_starts() -> st.SearchStrategy[dict[str, Any]]:
    """`{"startOf": unit, "offset"?: n, "timeZone"?: zone}` near the current unit."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        data: dict[str, Any] = {"startOf": draw(st.sampled_from(("day", "week", "month", "year")))}
        offset = draw(st.integers(-3, 3))
        if offset:
            data["offset"] = offset
        return _zone_key(draw, data)

    return build()


def calendar_periods() -> st.SearchStrategy[dict[str, Any]]:
    """The operand of `within`: `{"this": unit}` or `{"last"|"next": n, "unit": unit}`."""

    @st.composite
    def build(draw: st.DrawFn) -> dict[str, Any]:
        unit = draw(st.sampled_from(("day", "week", "month", "year")))
        kind = draw(st.sampled_from(("this", "last", "next")))
        data: dict[str, Any] = (
            {"this": unit} if kind == "this" else {kind: draw(st.integers(1, 8)), "unit": unit}
        )
        return _zone_key(draw, data)

    return build()


@st.composite
def _field_condition(
    draw: st.DrawFn, schema: Schema, hostile: bool, wide: bool = False
) -> dict[str, Any]:
    """`{field: literal}`, `{field: null}` or `{field: {ops...}}` with mode and `not`."""
    field = draw(st.sampled_from(schema.fields))
    if field.type is FieldType.JSON:
        return _json_field_condition(draw, field, wide)
    operands = _operands(field, schema, hostile, wide)
    shape = draw(st.integers(0, 9))
    if shape == 0:
        return {field.name: None}
    if shape == 1:
        return {field.name: draw(operands.value)}
    body = _operator_body(draw, operands, shape)
    _add_negation(draw, operands, body)
    _add_string_keys(draw, field.type, body)
    return {field.name: body}


def _json_field_condition(draw: st.DrawFn, field: Field, wide: bool) -> dict[str, Any]:
    if wide and draw(st.booleans()):
        return draw(data_conditions(field=field.name))
    return _data_condition(field.name, draw)


@dataclass(frozen=True)
class _Operands:
    """What a field's conditions are drawn from: its literals, the operand of one comparison,
    the operators it takes, and the fields a reference to it may name."""

    value: st.SearchStrategy[Any]
    operand: st.SearchStrategy[Any]
    ops: list[Op]
    peers: list[str]


def _operands(field: Field, schema: Schema, hostile: bool, wide: bool) -> _Operands:
    kind = field.type
    value = _value(kind, hostile, wide).map(lambda v: _json_literal(kind, v))
    # Where one literal is compared (not in lists, not as a shorthand), a date-time is
    # relative half of the time.
    operand: st.SearchStrategy[Any] = value
    if kind in (FieldType.DATETIME, FieldType.DATE):
        operand = st.one_of(value, relative_values(), calendar_starts())
    ops = [op for op in Op if field.accepts(op)]
    peers = [f.name for f in schema.fields if f.type is kind and not f.source]
    return _Operands(value, operand, ops, [] if field.source else peers)


def _operator_body(draw: st.DrawFn, operands: _Operands, shape: int) -> dict[str, Any]:
    """A field's object of operators: mostly one or two; `{field: {}}` (TRUE) only now and
    then (shape 2)."""
    chosen = draw(
        st.lists(st.sampled_from(operands.ops), min_size=int(shape != 2), max_size=2, unique=True)
    )
    return {op.value: _operator_operand(draw, operands, op) for op in chosen}


def _operator_operand(draw: st.DrawFn, operands: _Operands, op: Op) -> Any:
    if op in LIST_OPS and draw(st.integers(0, 7)) == 0:
        return None  # a null test, as Prisma reads it
    if op in LIST_OPS:
        return draw(st.lists(operands.value, max_size=4))
    if operands.peers and op in REFERENCE_OPS and draw(st.integers(0, 5)) == 0:
        return {REF: draw(st.sampled_from(operands.peers))}  # a field reference
    if op in PERIOD_OPS:
        return draw(calendar_periods())
    return draw(operands.operand)


def _add_negation(draw: st.DrawFn, operands: _Operands, body: dict[str, Any]) -> None:
    """Now and then a `not`: of null, of a literal, or of one operator."""
    negation = draw(st.integers(0, 5))
    if negation == 1:
        body["not"] = None
    elif negation == 2:
        body["not"] = draw(operands.value)
    elif negation == 3:
        op = draw(st.sampled_from(operands.ops))
        listed = op in LIST_OPS
        inner = draw(st.lists(operands.value, max_size=3)) if listed else draw(operands.operand)
        if op in PERIOD_OPS:
            inner = draw(calendar_periods())
        body["not"] = {op.value: inner}


def _add_string_keys(draw: st.DrawFn, kind: FieldType, body: dict[str, Any]) -> None:
    """On a string field, now and then a `mode` (not beside a field reference, which takes
    none) and a `blank`."""
    referenced = any(isinstance(v, dict) and REF in v for v in body.values())
    if kind is FieldType.STRING and not referenced and draw(st.booleans()):
        body["mode"] = draw(st.sampled_from(("insensitive", "default")))
    if kind is FieldType.STRING and draw(st.integers(0, 5)) == 0:
        body["blank"] = draw(st.booleans())  # null or ""


def where_clauses(
    schema: Schema = CONTACT, *, max_leaves: int = 8, hostile: bool = False, wide: bool = False
) -> st.SearchStrategy[dict[str, Any]]:
    """Valid where clauses as JSON-ready dicts, with every shape the semantics allow.

    With `wide`, literals also come from the wide strategies (see `records`), and conditions on
    `data` from `data_conditions`.
    """
    condition = _field_condition(schema, hostile, wide)
    # `{}` (TRUE) one leaf in four: as often as conditions, it made most filters trivially TRUE.
    leaves = st.one_of(condition, condition, condition, st.just({}))
    return st.recursive(leaves, _groups, max_leaves=max_leaves)


def _groups(children: st.SearchStrategy[dict[str, Any]]) -> st.SearchStrategy[dict[str, Any]]:
    """Where clauses made of others: groups of arrays and of single objects, and two clauses
    merged into one object."""
    group = st.lists(children, max_size=3)
    return st.one_of(
        st.builds(lambda items: {"AND": items}, group),
        st.builds(lambda items: {"OR": items}, group),
        st.builds(lambda items: {"NOT": items}, group),
        st.builds(lambda item: {"NOT": item}, children),
        st.builds(lambda item: {"AND": item}, children),
        st.builds(_merge, children, children),
    )


def _merge(left: dict[str, Any], right: dict[str, Any]) -> dict[str, Any]:
    """Two where objects as one object with several keys, when their keys do not clash."""
    if set(left) & set(right):
        return {"AND": [left, right]}
    return {**left, **right}


def filters(
    schema: Schema = CONTACT, *, max_leaves: int = 8, hostile: bool = False, wide: bool = False
) -> st.SearchStrategy[Filter]:
    """Valid `Filter`s of `schema` (`wide`: see `where_clauses`)."""
    return where_clauses(schema, max_leaves=max_leaves, hostile=hostile, wide=wide).map(
        lambda where: parse(where, schema)
    )


def where_noise(
    schema: Schema = CONTACT, *, finite: bool = False, max_leaves: int = 20
) -> st.SearchStrategy[Any]:
    """Arbitrary JSON values shaped like where clauses: the keys are fields, operators, logical
    keys and near misses, the values anything. Most are invalid; that is the point, for
    checking that a reader answers with a `FilterError` and nothing else.

    Args:
        finite: Leave out NaN and infinities (for values that must be valid JSON).
    """
    containers = partial(_noise_containers, _noise_keys(schema))
    return st.recursive(_noise_scalars(finite), containers, max_leaves=max_leaves)


def _noise_keys(schema: Schema) -> st.SearchStrategy[str]:
    """Fields, operators, logical keys and near misses of them."""
    dated = [f.name for f in schema.fields if f.type is FieldType.DATETIME][:1]
    names = [*schema.names[:4], *dated, "AND", "OR", "NOT", "and", "x", ""]
    names += ["not", "mode", "equals", "gt", "in", "notIn", "contains", "startsWith", "ago"]
    return st.sampled_from(names)


def _noise_scalars(finite: bool) -> st.SearchStrategy[Any]:
    """Any scalar, and strings a where clause gives meaning to (a mode, a date, durations)."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.integers(),
        st.floats(allow_nan=not finite, allow_infinity=not finite),
        st.text(max_size=8),
        st.sampled_from(["insensitive", "2025-01-01", "P30D", "PT0.5S", "-P1D", "P1.5D"]),
    )


def _noise_containers(
    keys: st.SearchStrategy[str], children: st.SearchStrategy[Any]
) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4)


# ---- wide inputs ----------------------------------------------------------------------------
# The pools above are tame on purpose (values that hit each other); the strategies below reach
# the edges where engines differ: the whole of Unicode in keys and strings, numbers beyond
# doubles and 64 bits, subnormal floats, zone-aware date-times on daylight-saving folds and
# gaps, booleans next to 1 and 0. Lone surrogates are never drawn: they are not Unicode, no
# engine can store them in UTF-8 text, and `parse` rejects them in keys and literals.

SPECIAL_KEYS = (
    "-",
    "-1",
    "*",
    "1",
    "$",
    "[0]",
    "a.b",
    "a-b",
    '"',
    "'",
    "\\",
    " ",
    "é",
    "É",
    "ключ",
    "鍵",
    "😀",
    "\x01",
    "\x1f",
    "\x7f",
    "\n",
    "\u2028",
    "\ufeff",
    "İ",
)
"""Keys that some engine's JSON path syntax cannot address as written: non-ASCII, control
characters, `-`, `-1`, `*`, quotes, dots and brackets."""

_UNICODE = st.characters(exclude_categories=["Cs"])
_KEY_CHARACTERS = st.characters(exclude_categories=["Cs"], exclude_characters="\x00")


def data_keys() -> st.SearchStrategy[str]:
    """Keys of `data` objects and paths from the whole of Unicode (never NUL, which a path may
    not hold, nor a lone surrogate), the special ones and the tame pool most often."""
    return st.one_of(
        st.sampled_from(DATA_KEYS),
        st.sampled_from(SPECIAL_KEYS),
        st.text(_KEY_CHARACTERS, max_size=3),
    )


def unicode_strings(*, nul: bool = True) -> st.SearchStrategy[str]:
    """Strings over the whole of Unicode (with NUL unless `nul=False`), mixed with the pool words
    and with case pairs whose folds differ between Unicode versions and engines."""
    characters = _UNICODE if nul else _KEY_CHARACTERS
    folds = st.text(st.sampled_from("aAİiIıßẞΣσςǅǄǆΩΩKKÅÅⱯɐ\u0345ΐᾈ\x00x"), max_size=4).map(
        lambda text: text if nul else text.replace("\x00", "")
    )
    return st.one_of(st.sampled_from(WORDS), folds, st.text(characters, max_size=5))


WIDE_INTEGERS = (
    2**53 - 1,
    2**53 + 1,
    -(2**53) - 1,
    2**63,
    -(2**63) - 1,
    2**64 - 1,
    2**64,
    2**64 + 1,
    2**127,
    2**128 + 1,
    10**20,
    10**300,
    -(10**300),
    10**400,
    -(10**400),
)
"""Integers beyond what doubles hold exactly, beyond 64 and 128 bits, and beyond any double."""

WIDE_FLOATS = (
    5e-324,
    -5e-324,
    1e-320,
    2.2250738585072014e-308,
    1e-7,
    0.1,
    1.5,
    1e16,
    1e23,
    2.0**60,
    2.0**64,
    1e300,
    1.7976931348623157e308,
    -1.7976931348623157e308,
)
"""Floats that are subnormal, tiny, above 2^53 with a short decimal (`1e23`), or the largest."""


def wide_numbers() -> st.SearchStrategy[int | float]:
    """Numbers from the tame pool, the wide ones, and any finite float or integer."""
    return st.one_of(
        numbers(),
        st.sampled_from(WIDE_INTEGERS),
        st.sampled_from(WIDE_FLOATS),
        st.integers(),
        st.floats(allow_nan=False, allow_infinity=False),
    )


ZONES = (
    "Europe/Berlin",
    "America/New_York",
    "America/St_Johns",
    "Australia/Lord_Howe",
    "Pacific/Chatham",
    "Asia/Kolkata",
    "UTC",
)
"""Time zones with daylight-saving folds and gaps, half-hour and 45-minute offsets and a
half-hour daylight-saving shift (Lord Howe)."""

_TRANSITIONS = (
    ("Europe/Berlin", datetime(2024, 10, 27, 2)),  # fold 02:00-03:00
    ("Europe/Berlin", datetime(2025, 3, 30, 2)),  # gap 02:00-03:00
    ("America/New_York", datetime(2024, 11, 3, 1)),  # fold 01:00-02:00
    ("America/New_York", datetime(2025, 3, 9, 2)),  # gap
    ("America/St_Johns", datetime(2024, 11, 3, 1)),  # fold, at -03:30
    ("America/St_Johns", datetime(2025, 3, 9, 2)),  # gap
    ("Australia/Lord_Howe", datetime(2025, 4, 6, 1, 30)),  # fold of half an hour
    ("Australia/Lord_Howe", datetime(2024, 10, 6, 2)),  # gap of half an hour
    ("Pacific/Chatham", datetime(2025, 4, 6, 2, 45)),  # fold, at +13:45
    ("Pacific/Chatham", datetime(2024, 9, 29, 2, 45)),  # gap
    ("Asia/Kolkata", datetime(2025, 1, 1, 5, 30)),  # +05:30, no daylight saving
)
"""Wall times where a zone's clock repeats an hour (fold) or skips one (gap)."""


def zoned_datetimes() -> st.SearchStrategy[datetime]:
    """Aware date-times in `ZONES` (`zoneinfo`), mostly on or next to a daylight-saving fold or
    gap: repeated wall times with `fold` 0 and 1, and wall times that do not exist."""
    from zoneinfo import ZoneInfo

    near = st.builds(
        lambda transition, minutes, micros, fold: (
            transition[1] + timedelta(minutes=minutes, microseconds=micros)
        ).replace(tzinfo=ZoneInfo(transition[0]), fold=fold),
        st.sampled_from(_TRANSITIONS),
        st.sampled_from((-1, 0, 15, 29, 30, 59, 60)),
        st.sampled_from((0, 0, 1, 999_999)),
        st.integers(0, 1),
    )
    anywhere = st.datetimes(
        min_value=datetime(2024, 1, 1),
        max_value=datetime(2026, 1, 1),
        timezones=st.sampled_from(ZONES).map(ZoneInfo),
    )
    return st.one_of(near, near, anywhere)


def json_scalars(
    strings: st.SearchStrategy[str] | None = None,
    numbers: st.SearchStrategy[int | float] | None = None,
) -> st.SearchStrategy[Any]:
    """JSON scalars: null, booleans, 1 and 0 (next to true and false), numbers and strings."""
    return st.one_of(
        st.none(),
        st.booleans(),
        st.sampled_from((1, 0, 1.0, 0.0, -0.0)),
        numbers if numbers is not None else wide_numbers(),
        strings if strings is not None else unicode_strings(),
    )


def wide_data_objects(
    keys: st.SearchStrategy[str] | None = None,
    scalars: st.SearchStrategy[Any] | None = None,
) -> st.SearchStrategy[dict[str, Any]]:
    """`data` objects over `data_keys()` and `json_scalars()`, with arrays and nested objects."""
    keys = keys if keys is not None else data_keys()
    scalar = scalars if scalars is not None else json_scalars()
    inner = st.one_of(
        scalar, scalar, st.lists(scalar, max_size=2), st.dictionaries(keys, scalar, max_size=3)
    )
    return st.dictionaries(keys, inner, max_size=4)


def data_conditions(
    keys: st.SearchStrategy[str] | None = None,
    literals: st.SearchStrategy[Any] | None = None,
    *,
    field: str = "data",
    max_depth: int = 2,
) -> st.SearchStrategy[dict[str, Any]]:
    """`{field: {"path": [...], op: literal}}` conditions: the operators fit the JSON type of
    the drawn literal; `in`/`notIn` lists may mix integers and floats; `mode` and `not` now and
    then. Paths are drawn from `keys` (default `data_keys()`)."""
    keys = keys if keys is not None else data_keys()
    literals = literals if literals is not None else json_scalars().filter(lambda v: v is not None)
    return _data_path_condition(keys, literals, field, max_depth)


@st.composite
def _data_path_condition(
    draw: st.DrawFn,
    keys: st.SearchStrategy[str],
    literals: st.SearchStrategy[Any],
    field: str,
    max_depth: int,
) -> dict[str, Any]:
    path = draw(st.lists(keys, min_size=1, max_size=max_depth))
    literal = draw(literals)
    kind = value_type(literal)
    op = draw(st.sampled_from(sorted(OPERATORS[kind], key=lambda o: o.value)))
    items = _same_type_items(literals, kind)
    operand: Any = draw(st.lists(items, max_size=3)) if op in LIST_OPS else literal
    body = {"path": path, **_maybe_negated(draw, op.value, operand)}
    _add_path_keys(draw, kind, body)
    return {field: body}


def _maybe_negated(draw: st.DrawFn, name: str, operand: Any) -> dict[str, Any]:
    """`{name: operand}`, or now and then `{"not": {name: operand}}`."""
    condition = {name: operand}
    return {"not": condition} if draw(st.integers(0, 4)) == 0 else condition


def _add_path_keys(draw: st.DrawFn, kind: FieldType, body: dict[str, Any]) -> None:
    """Now and then a `mode` (beside a string) and a `blank` at a data path."""
    if kind is FieldType.STRING and draw(st.booleans()):
        body["mode"] = "insensitive"
    if draw(st.integers(0, 7)) == 0:
        body["blank"] = draw(st.booleans())  # null or "" at the path


def _same_type_items(literals: st.SearchStrategy[Any], kind: FieldType) -> st.SearchStrategy[Any]:
    """The items of a list at a data path: of one JSON type, and for numbers integers beside
    floats (engines that read a list as one type merge neighbours beyond 2^53:
    `[2**53 + 1, 0.5]`)."""
    same_type = literals.filter(lambda v: value_type(v) is kind)
    if kind is FieldType.NUMBER:
        return st.one_of(same_type, st.sampled_from((0, 1, 0.5, 1.0, 2**53 + 1)))
    return same_type


def wrong_typed_values(kind: FieldType) -> st.SearchStrategy[Any]:
    """Values a record may hold by mistake for a field of `kind`: another type's values (a
    string `"1"` for a number, 1 for a boolean, a number for a date-time)."""
    others: dict[FieldType, st.SearchStrategy[Any]] = {
        FieldType.STRING: st.one_of(st.integers(-2, 2), st.booleans(), st.just(1.5)),
        FieldType.NUMBER: st.one_of(
            st.sampled_from(("1", "0", "1.5", "", "abc")), st.booleans(), st.just([1])
        ),
        FieldType.BOOLEAN: st.one_of(st.sampled_from(("true", "false", "1", "")), st.just(2)),
        FieldType.DATETIME: st.one_of(st.integers(0, 2**31), st.just(1.5), st.booleans()),
        FieldType.DATE: st.one_of(
            st.integers(0, 2**31), st.booleans(), st.just(datetime(1990, 11, 23, tzinfo=UTC))
        ),
    }
    return others[kind]


# ---- list fields ------------------------------------------------------------------------------

LIST_SCHEMA = Schema.of(
    "lists", tags="string[]", scores="number[]", flags="boolean[]", dates="datetime[]"
)
"""A schema of one list field of each item type, for `list_records` and `list_conditions`."""

_LIST_POOLS: dict[FieldType, tuple[Any, ...]] = {
    # Folding pairs (`A`/`a`, `ß`, the dotted `İ` whose lower case is two code points).
    FieldType.STRING: ("a", "A", "b", "ß", "SS", "İ", "i\u0307", ""),
    # Equal numbers of two Python types, and a fraction; every one a double exactly.
    FieldType.NUMBER: (0, 1, 1.0, 2.5, -1, -0.0),
    FieldType.BOOLEAN: (True, False),
    # One instant in three zones, and another.
    FieldType.DATETIME: (
        datetime(2025, 1, 1, tzinfo=UTC),
        datetime(2025, 1, 1, 2, tzinfo=timezone(timedelta(hours=2))),
        datetime(2024, 12, 31, 19, tzinfo=timezone(timedelta(hours=-5))),
        datetime(2025, 6, 1, 12, 30, 0, 500, tzinfo=UTC),
    ),
}


def _list_value(kind: FieldType) -> st.SearchStrategy[Any]:
    element = kind.element
    assert element is not None
    item = st.sampled_from(_LIST_POOLS[element])
    return st.lists(st.one_of(item, item, item, st.none()), max_size=4)


def list_records(schema: Schema = LIST_SCHEMA) -> st.SearchStrategy[dict[str, Any]]:
    """Records of a schema of list fields: each list drawn from a small pool of items (so that
    filters meet them), null items among them, or the list null or missing."""

    def field(kind: FieldType) -> st.SearchStrategy[Any]:
        value = _list_value(kind)
        return st.one_of(st.just(_MISSING), st.none(), value, value, value)

    fields = {f.name: field(f.type) for f in schema.fields if f.type.element is not None}
    return st.fixed_dictionaries(fields).map(
        lambda row: {name: value for name, value in row.items() if value is not _MISSING}
    )


@st.composite
def list_conditions(draw: st.DrawFn, schema: Schema = LIST_SCHEMA) -> dict[str, Any]:
    """A where clause of one or two list conditions (`has`, `hasSome`, `hasEvery`, `isEmpty`,
    `equals`: those each field takes, `Field.list_operators`; under `not` at times,
    `mode: "insensitive"` where it applies), operands from the pools of `list_records`."""
    listed = [f for f in schema.fields if f.type.element is not None]
    fields = draw(st.lists(st.sampled_from(listed), min_size=1, max_size=2, unique=True))
    return {field.name: _list_condition(draw, field) for field in fields}


def _list_condition(draw: st.DrawFn, field: Field) -> dict[str, Any]:
    """The object of one list field's condition."""
    from ..where.write import json_value

    element = field.type.element
    assert element is not None
    op = draw(st.sampled_from(field.list_operators))
    body: dict[str, Any] = {op.value: _list_operand(draw, op, element, json_value)}
    if draw(st.integers(0, 3)) == 0:
        body = {"not": body}
    if field.takes_mode and draw(st.booleans()):
        body["mode"] = "insensitive"
    return body


def _list_operand(
    draw: st.DrawFn, op: ListOp, element: FieldType, as_json: Callable[[Any], Any]
) -> Any:
    """True or false for `isEmpty`, one item for `has`, a list of them for the others."""
    item = st.sampled_from(_LIST_POOLS[element]).map(as_json)
    if op is ListOp.IS_EMPTY:
        return draw(st.booleans())
    if op is ListOp.HAS:
        return draw(item)
    return draw(st.lists(item, max_size=3))


_ARRAY_ITEMS: tuple[Any, ...] = ("a", "A", "1", "", 1, 1.0, 2.5, 0, True, False)


def array_documents() -> st.SearchStrategy[dict[str, Any]]:
    """`data` objects whose key `tags` holds a JSON array of lookalike items (`1`, `1.0`,
    `true`, `"1"`, case pairs, null, a nested array or object), another JSON value, or
    nothing: the inputs of `array_contains`, `array_starts_with` and `array_ends_with`."""
    item = st.one_of(
        st.sampled_from(_ARRAY_ITEMS),
        st.sampled_from(_ARRAY_ITEMS),
        st.none(),
        st.just([1]),
        st.just({"k": "a"}),
    )
    tags = st.one_of(
        st.lists(item, max_size=4),
        st.lists(item, max_size=4),
        st.sampled_from(["a", 1, None, {"tags": ["a"]}]),
    )
    return st.one_of(st.fixed_dictionaries({"tags": tags}), st.just({}))


@st.composite
def array_conditions(draw: st.DrawFn) -> dict[str, Any]:
    """A where clause testing `data.tags` with one of the JSON array operators, under `not`
    at times, with `mode: "insensitive"` at times; literals from the pool of
    `array_documents`."""
    op = draw(st.sampled_from(["array_contains", "array_starts_with", "array_ends_with"]))
    literal = st.sampled_from(_ARRAY_ITEMS)
    operand: Any = draw(literal)
    if op == "array_contains" and draw(st.booleans()):
        operand = draw(st.lists(literal, max_size=3))
    body: dict[str, Any] = {op: operand}
    if draw(st.integers(0, 3)) == 0:
        body = {"not": body}
    body = {"path": ["tags"], **body}
    if draw(st.booleans()):
        body["mode"] = "insensitive"
    return {"data": body}


# ---- lookalike literals -----------------------------------------------------------------------

LOOKALIKES: tuple[Any, ...] = (True, False, 1, 0, 1.0, 0.0, -0.0)
"""Literals Python's `==` and `hash` join across JSON types (`True == 1`, `False == 0 == -0.0`):
a filter keeps a boolean apart from a number, while numbers equal by value are one number."""
_LOOKALIKE_NUMBERS = tuple(v for v in LOOKALIKES if not isinstance(v, bool))
_LOOKALIKE_OPS = ("equals", "not", "in", "notIn", "array_contains", "array_starts_with")


@st.composite
def lookalike_conditions(draw: st.DrawFn, field: str = "data") -> dict[str, Any]:
    """A condition on `field.optin` (a scalar) or `field.flags` (an array) whose literal is
    one of `LOOKALIKES`: drawn together, conditions that only Python's `==` makes equal meet
    in one filter or one set. `in`/`notIn` take numbers only (booleans take `equals`)."""
    literal = draw(st.sampled_from(LOOKALIKES))
    op = draw(st.sampled_from(_LOOKALIKE_OPS))
    if op.startswith("array"):
        operand: Any = literal
        if op == "array_contains" and draw(st.booleans()):
            operand = [literal, *draw(st.lists(st.sampled_from(LOOKALIKES), max_size=2))]
        return {field: {"path": ["flags"], op: operand}}
    if op in ("in", "notIn") and isinstance(literal, bool):
        op = "equals" if op == "in" else "not"
    if op in ("in", "notIn"):
        operand = [literal, *draw(st.lists(st.sampled_from(_LOOKALIKE_NUMBERS), max_size=2))]
    else:
        operand = literal
    return {field: {"path": ["optin"], op: operand}}


def lookalike_data() -> st.SearchStrategy[dict[str, Any]]:
    """`data` objects whose `optin` holds one of `LOOKALIKES` or null, and `flags` an array of
    them (or a scalar, no array): the records `lookalike_conditions` tell apart."""
    item = st.one_of(st.sampled_from(LOOKALIKES), st.sampled_from(LOOKALIKES), st.none())
    flags = st.one_of(st.lists(item, max_size=3), st.lists(item, max_size=3), item)
    return st.fixed_dictionaries({"optin": item, "flags": flags})


def lookalike_filters(max_leaves: int = 6) -> st.SearchStrategy[Filter]:
    """Filters of the contact schema grouping `lookalike_conditions` every way."""
    return st.recursive(lookalike_conditions(), _groups, max_leaves=max_leaves).map(parse)
