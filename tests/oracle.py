"""The oracle: a deliberately naive three-valued evaluator of where clauses, written from
docs/semantics.md (with the pages of rules it links) and nothing else.

It reads the where clause as JSON-ready data (`Filter.to_dict()`, or what a generator drew)
and a record as `matches` takes it, and answers TRUE, FALSE or None (UNKNOWN). It shares no
code with the library: durations, the start of a unit in a zone, periods, anniversaries,
dates, instants and JSON types are worked out here again from the docs. A schema is read as
data only (its fields' type names, sources, relations and zone). Every surface of the
library is compared with this, never with another surface.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

Truth = bool | None
FIRST = datetime(1, 1, 1, tzinfo=UTC)
LAST = datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC)


def evaluate(flt: Any, record: Mapping[str, Any], now: datetime | None = None) -> Truth:
    """The truth of a `Filter` over `record` at `now`, from its canonical where clause."""
    return truth(flt.to_dict(), record, flt.schema, now)


def truth(
    where: Mapping[str, Any], record: Mapping[str, Any], schema: Any, now: datetime | None = None
) -> Truth:
    """The truth of a where clause over `record`, relative values taken at `now`."""
    return Oracle(schema, now or datetime.now(UTC), schema.time_zone).where(where, record)


# ---- three-valued logic -------------------------------------------------------------------------


def all3(truths: Iterable[Truth]) -> Truth:
    seen = list(truths)
    if False in seen:
        return False
    return None if None in seen else True


def any3(truths: Iterable[Truth]) -> Truth:
    seen = list(truths)
    if True in seen:
        return True
    return None if None in seen else False


def not3(value: Truth) -> Truth:
    return None if value is None else not value


# ---- values -------------------------------------------------------------------------------------


def instant(value: Any) -> datetime:
    """A record's or literal's date-time as a UTC instant: naive is UTC, a date alone is
    midnight UTC, digits past microseconds are dropped."""
    if isinstance(value, str):
        text = re.sub(r"(\.\d{6})\d+", r"\1", value.strip())
        value = datetime.fromisoformat(text.replace("z", "Z"))
        if not isinstance(value, datetime):  # pragma: no cover - fromisoformat gives datetimes
            value = datetime.combine(value, time())
    if not isinstance(value, datetime):
        value = datetime.combine(value, time())
    if value.tzinfo is None:
        return value.replace(tzinfo=UTC)
    return value.astimezone(UTC)


def day(value: Any) -> date:
    """A record's or literal's date: a `date`, or ISO 8601 text."""
    return date.fromisoformat(value) if isinstance(value, str) else value


def json_kind(value: Any) -> str:
    """The JSON type of a value: booleans are not numbers."""
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "other"


_DURATION = re.compile(
    r"^P(?:(\d+)Y)?(?:(\d+)M)?(?:(\d+)W)?(?:(\d+)D)?"
    r"(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+(?:\.\d{1,6})?)S)?)?$",
    re.IGNORECASE,
)


def ago(duration: str, now: datetime) -> datetime:
    """`now` minus an ISO 8601 duration: years and months by the calendar (the day clamped to
    a shorter month), then the rest exactly; before year 1 is the first instant of year 1."""
    found = _DURATION.match(duration)
    assert found, duration
    years, months, weeks, days_, hours, minutes = (int(g or 0) for g in found.groups()[:6])
    seconds = float(found.group(7) or 0)
    micros = round(seconds * 1_000_000)
    moment = now.astimezone(UTC)
    total = moment.year * 12 + moment.month - 1 - (years * 12 + months)
    year, month = divmod(total, 12)
    if year < 1:
        return FIRST
    moment = moment.replace(
        year=year, month=month + 1, day=min(moment.day, _month_days(year, month + 1))
    )
    exact = timedelta(weeks=weeks, days=days_, hours=hours, minutes=minutes, microseconds=micros)
    try:
        return moment - exact
    except OverflowError:
        return FIRST


def _month_days(year: int, month: int) -> int:
    if month == 12:
        return 31
    return (date(year, month + 1, 1) - date(year, month, 1)).days


def local_day(moment: datetime, zone: str) -> date:
    try:
        return moment.astimezone(ZoneInfo(zone)).date()
    except OverflowError:
        return date.max if moment.year > 5000 else date.min


def local_month_day(moment: datetime, zone: str) -> tuple[int, int]:
    """The month and day of `moment` in `zone` on the proleptic Gregorian calendar, also where
    its local year is 0 or 10000 (docs/semantics-calendar.md, "Anniversaries", at the edges):
    there the instant 400 years nearer is taken, whose local month-day is the same (the
    calendar repeats every 146,097 days, and the zone's offset so far from its rules is its
    first or last)."""
    tz = ZoneInfo(zone)
    try:
        local = moment.astimezone(tz)
    except OverflowError:
        cycle = timedelta(days=146_097)
        local = (moment + cycle if moment.year < 5000 else moment - cycle).astimezone(tz)
    return local.month, local.day


def first_instant(when: date, zone: str) -> datetime:
    """The first instant of a local day: its midnight (the first of two), or when the clocks
    skip midnight the instant they jump."""
    tz = ZoneInfo(zone)
    found = []
    for fold in (0, 1):
        local = datetime.combine(when, time(), tzinfo=tz).replace(fold=fold)
        try:
            moment = local.astimezone(UTC)
        except OverflowError:
            return FIRST if when.year < 5000 else LAST
        if moment.astimezone(tz).replace(tzinfo=None) == local.replace(tzinfo=None):
            found.append(moment)
    if found:
        return min(found)
    low = datetime.combine(when, time(), tzinfo=UTC) - timedelta(hours=16)
    high = low + timedelta(hours=32)
    while high - low > timedelta(seconds=1):  # the first instant whose local date is `when`
        middle = low + (high - low) / 2
        if middle.astimezone(tz).date() >= when:
            high = middle
        else:
            low = middle
    return high.replace(microsecond=0)


def _shift(start: date, unit: str, steps: int) -> date | None:
    """`start` moved by whole units; None when outside years 1..9999."""
    try:
        if unit == "day":
            return start + timedelta(days=steps)
        if unit == "week":
            return start + timedelta(weeks=steps)
        months = start.year * 12 + start.month - 1 + steps * (12 if unit == "year" else 1)
        year, month = divmod(months, 12)
        return date(year, month + 1, 1)
    except (OverflowError, ValueError):
        return None


def start_of(unit: str, offset: int, zone: str, now: datetime) -> datetime:
    """The first instant of the unit `offset` units from the current one, in `zone`."""
    today = local_day(now, zone)
    begin = {
        "day": today,
        "week": today - timedelta(days=today.weekday()),
        "month": today.replace(day=1),
        "year": today.replace(month=1, day=1),
    }[unit]
    shifted = _shift(begin, unit, offset)
    if shifted is None:
        return FIRST if offset < 0 else LAST
    return first_instant(shifted, zone)


@dataclass(frozen=True)
class Period:
    """A period's bounds as instants, and its zone."""

    first: datetime
    after: datetime
    zone: str

    def days(self) -> tuple[date, date]:
        return local_day(self.first, self.zone), local_day(self.after, self.zone)


# ---- the evaluator ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Oracle:
    """The evaluator over one schema (a contact's or a related row's), at one `now`, in the
    zone of the contact schema."""

    schema: Any
    now: datetime
    zone: str

    def where(self, where: Mapping[str, Any], record: Mapping[str, Any]) -> Truth:
        return all3(self._key(key, value, record) for key, value in where.items())

    def _key(self, key: str, value: Any, record: Mapping[str, Any]) -> Truth:
        items = value if isinstance(value, list) else [value]
        if key == "AND":
            return all3(self.where(item, record) for item in items)
        if key == "OR":
            return any3(self.where(item, record) for item in items)
        if key == "NOT":
            return not3(any3(self.where(item, record) for item in items))
        relation = next((r for r in self.schema.relations if r.name == key), None)
        if relation is not None:
            return self._relation(relation, value, record)
        return self._field(key, value, record)

    # ---- relations ----

    def _relation(self, relation: Any, body: Mapping[str, Any], record: Mapping[str, Any]) -> Truth:
        held = record.get(relation.name)
        rows = [] if held is None else [held] if isinstance(held, Mapping) else list(held)
        inner = Oracle(relation.schema, self.now, self.zone)
        narrowed = rows
        if "where" in body:
            narrowed = [row for row in rows if inner.where(body["where"], row) is True]
        results = []
        for key, value in body.items():
            if key == "where":
                continue
            if key in ("some", "every", "none", "is", "isNot"):
                results.append(self._quantified(inner, key, value, rows))
            else:
                results.append(self._aggregate(inner, key, value, narrowed))
        return all3(results)

    def _quantified(self, inner: Oracle, key: str, where: Any, rows: list[Any]) -> Truth:
        if key in ("is", "isNot") and where is None:
            return bool(rows) is (key == "isNot")
        hits = [inner.where(where, row) is True for row in rows]
        return {
            "some": any(hits),
            "none": not any(hits),
            "every": all(hits),
            "is": any(hits),
            "isNot": not any(hits),
        }[key]

    def _aggregate(self, inner: Oracle, key: str, value: Any, rows: list[Any]) -> Truth:
        if key == "count":
            return inner._scalar_body(value, len(rows), "number", None)
        ((name, test),) = value.items()
        kind = inner._type(name)
        present = [row.get(name) for row in rows if row.get(name) is not None]
        if key == "sum":
            return inner._scalar_body(test, sum(present), "number", None)
        convert: Callable[[Any], Any] = {"datetime": instant, "date": day}.get(kind, lambda v: v)
        chosen = (min if key == "min" else max)(present, key=convert) if present else None
        return inner._scalar_body(test, chosen, kind, None)

    # ---- fields ----

    def _type(self, name: str) -> str:
        return str(self.schema[name].type.value)

    def _field(self, name: str, body: Any, record: Mapping[str, Any]) -> Truth:
        field = self.schema[name]
        kind = self._type(name)
        if kind == "json":
            return self._path(body, record.get(name), record)
        source = tuple(field.source)
        value = _at(record.get(source[0]), source[1:]) if source else record.get(name)
        if kind.endswith("[]"):
            return self._list_body(body, value, kind[:-2], bool(source))
        return self._scalar_body(body, value, kind, record, declared=bool(source))

    def _scalar_body(
        self,
        body: Any,
        value: Any,
        kind: str,
        record: Mapping[str, Any] | None,
        *,
        declared: bool = False,
    ) -> Truth:
        context = _Scalar(self, value, kind, record, declared, False)
        if isinstance(body, dict):
            context = context.folded(body.get("mode") == "insensitive")
            return context.operators(body)
        if body is None:
            return value is None
        return context.compare("equals", body)

    def _path(self, body: Mapping[str, Any], document: Any, record: Mapping[str, Any]) -> Truth:
        value = _at(document, tuple(body["path"]))
        insensitive = body.get("mode") == "insensitive"
        context = _Scalar(self, value, "json", record, True, insensitive)
        return context.operators({k: v for k, v in body.items() if k != "path"})

    def _list_body(self, body: Any, value: Any, element: str, declared: bool) -> Truth:
        if body is None:
            return value is None
        if isinstance(body, list):
            body = {"equals": body}
        insensitive = body.get("mode") == "insensitive"
        return all3(
            self._list_operator(key, operand, value, element, declared, insensitive)
            for key, operand in body.items()
            if key != "mode"
        )

    def _list_operator(
        self, key: str, operand: Any, value: Any, element: str, declared: bool, insensitive: bool
    ) -> Truth:
        if key == "not":
            if operand is None:
                return value is not None
            if isinstance(operand, list):
                operand = {"equals": operand}
            return not3(
                self._list_body(
                    {**operand, **({"mode": "insensitive"} if insensitive else {})},
                    value,
                    element,
                    declared,
                )
            )
        if key == "equals" and operand is None:
            return value is None
        if value is None:
            return None
        if declared:
            return _json_array(key, operand, value)
        same = _item_equality(element, insensitive)
        items = [item for item in value if item is not None]
        if key == "has":
            return any(same(item, operand) for item in items)
        if key == "hasSome":
            return any(same(item, v) for v in operand for item in items)
        if key == "hasEvery":
            return all(any(same(item, v) for item in items) for v in operand)
        if key == "isEmpty":
            return (len(value) == 0) is operand
        assert key == "equals", key
        return len(value) == len(operand) and all(
            item is not None and same(item, v) for item, v in zip(value, operand, strict=True)
        )


def _at(value: Any, path: tuple[str, ...]) -> Any:
    for key in path:
        value = value.get(key) if isinstance(value, Mapping) else None
    return value


def _fold(value: Any, insensitive: bool) -> Any:
    return value.lower() if insensitive and isinstance(value, str) else value


def _item_equality(element: str, insensitive: bool) -> Callable[[Any, Any], bool]:
    if element == "datetime":
        return lambda item, v: instant(item) == instant(v)
    if element == "date":
        return lambda item, v: day(item) == day(v)
    return lambda item, v: _fold(item, insensitive) == _fold(v, insensitive)


def _json_equal(item: Any, literal: Any, insensitive: bool = False) -> bool:
    return json_kind(item) == json_kind(literal) and _fold(item, insensitive) == _fold(
        literal, insensitive
    )


def _json_array(key: str, operand: Any, value: Any, insensitive: bool = False) -> Truth:
    """A JSON array at a path: a declared list's `has`/`hasSome`/`hasEvery`/`isEmpty`, or
    Prisma's `array_*` filters. A missing or null value, and a present value that is no array
    (a number, a string, an object), is UNKNOWN: neither the test nor its `not` holds."""
    if not isinstance(value, list):
        return None
    if key == "isEmpty":  # a null item is an item
        return (len(value) == 0) is operand
    items = [item for item in value if item is not None]

    def holds(literal: Any) -> bool:
        return any(_json_equal(item, literal, insensitive) for item in items)

    if key in ("has",):
        return holds(operand)
    if key == "hasSome":
        return any(holds(v) for v in operand)
    if key == "hasEvery":
        return all(holds(v) for v in operand)
    if key == "array_contains":
        return all(holds(v) for v in operand) if isinstance(operand, list) else holds(operand)
    if not value:
        return False
    end = value[0] if key == "array_starts_with" else value[-1]
    return end is not None and _json_equal(end, operand, insensitive)


_ALIASES = {
    "string_contains": "contains",
    "string_starts_with": "startsWith",
    "string_ends_with": "endsWith",
}
_ORDER: dict[str, Callable[[Any, Any], bool]] = {
    "equals": lambda a, b: bool(a == b),
    "gt": lambda a, b: bool(a > b),
    "gte": lambda a, b: bool(a >= b),
    "lt": lambda a, b: bool(a < b),
    "lte": lambda a, b: bool(a <= b),
}


@dataclass(frozen=True)
class _Scalar:
    """One value compared: its type (`json` at a path: the literal's), whether it is read
    inside JSON (another JSON type is FALSE), whether strings fold."""

    oracle: Oracle
    value: Any
    kind: str
    record: Mapping[str, Any] | None
    declared: bool
    insensitive: bool

    def folded(self, insensitive: bool) -> _Scalar:
        return _Scalar(self.oracle, self.value, self.kind, self.record, self.declared, insensitive)

    def operators(self, body: Mapping[str, Any]) -> Truth:
        return all3(self.operator(key, operand) for key, operand in body.items() if key != "mode")

    def operator(self, key: str, operand: Any) -> Truth:
        if key == "not":
            return self.negation(operand)
        if key == "blank":
            return (self.value is None or self.value == "") is operand
        if key in ("equals", "in") and operand is None:
            return self.value is None
        if key == "notIn" and operand is None:
            return self.value is not None
        if key.startswith("array_"):
            return _json_array(key, operand, self.value, self.insensitive)
        return self.compare(_ALIASES.get(key, key), operand)

    def negation(self, operand: Any) -> Truth:
        if operand is None:
            return self.value is not None
        if isinstance(operand, dict) and "_ref" not in operand:
            return all3(not3(self.operator(key, inner)) for key, inner in operand.items())
        return not3(self.compare("equals", operand))

    def compare(self, op: str, operand: Any) -> Truth:
        if op == "in" and operand == []:
            return False
        if op == "notIn" and operand == []:
            return True
        if isinstance(operand, dict) and "_ref" in operand:
            return self._reference(op, operand["_ref"])
        if self.value is None:
            return None
        kind = self.kind
        if kind == "json":
            sample = operand[0] if isinstance(operand, list) else operand
            kind = json_kind(sample)
        if self.declared and kind != "date" and json_kind(self.value) != kind:
            return False
        if kind == "datetime":
            return self._instants(op, operand)
        if kind == "date":
            return self._dates(op, operand)
        return self._plain(op, self.value, operand)

    def _plain(self, op: str, value: Any, operand: Any) -> Truth:
        folded = self.insensitive or op == "contains"
        value = _fold(value, folded)
        operand = (
            [_fold(v, folded) for v in operand]
            if isinstance(operand, list)
            else _fold(operand, folded)
        )
        if op == "contains":
            return operand in value
        if op == "startsWith":
            return bool(value.startswith(operand))
        if op == "endsWith":
            return bool(value.endswith(operand))
        if op == "in":
            return any(_same(value, v) for v in operand)
        if op == "notIn":
            return all(not _same(value, v) for v in operand)
        if op == "equals":
            return _same(value, operand)
        return _ORDER[op](value, operand)

    def _reference(self, op: str, other_name: str) -> Truth:
        assert self.record is not None
        other = self.record.get(other_name)
        if self.value is None or other is None:
            return None
        convert = {"datetime": instant, "date": day}.get(self.kind, lambda v: v)
        return _ORDER[op](convert(self.value), convert(other))

    def _bound(self, operand: Any) -> datetime:
        if isinstance(operand, dict) and "ago" in operand:
            return ago(operand["ago"], self.oracle.now)
        if isinstance(operand, dict) and "startOf" in operand:
            zone = operand.get("timeZone") or self.oracle.zone
            return start_of(operand["startOf"], operand.get("offset", 0), zone, self.oracle.now)
        return instant(operand)

    def period(self, operand: Mapping[str, Any]) -> Period:
        zone = operand.get("timeZone") or self.oracle.zone
        now = self.oracle.now
        if "this" in operand:
            unit, low, high = operand["this"], 0, 1
        elif "last" in operand:
            unit, low, high = operand["unit"], -operand["last"], 0
        else:
            unit, low, high = operand["unit"], 1, operand["next"] + 1
        return Period(start_of(unit, low, zone, now), start_of(unit, high, zone, now), zone)

    def _instants(self, op: str, operand: Any) -> Truth:
        value = instant(self.value)
        if op == "within":
            period = self.period(operand)
            return period.first <= value < period.after
        if op == "anniversary":
            period = self.period(operand)
            return _anniversary(local_month_day(value, period.zone), period)
        if op in ("in", "notIn"):
            hit = any(value == instant(v) for v in operand)
            return hit if op == "in" else not hit
        return _ORDER[op](value, self._bound(operand))

    def _day_of(self, operand: Any) -> date:
        if isinstance(operand, dict):
            zone = operand.get("timeZone") or self.oracle.zone
            return local_day(self._bound(operand), zone)
        return day(operand)

    def _dates(self, op: str, operand: Any) -> Truth:
        """A date column compares days; a date declared inside JSON compares its text."""
        if self.declared and not isinstance(self.value, str):
            return False
        as_text = self.declared
        value: Any = self.value if as_text else day(self.value)
        shown: Callable[[date], Any] = date.isoformat if as_text else (lambda d: d)
        if op in ("within", "anniversary"):
            period = self.period(operand)
            first, after = period.days()
            if op == "within":
                return shown(first) <= value < shown(after)
            if as_text:
                return _text_anniversary(value, period)
            return _anniversary(value, period)
        if op in ("in", "notIn"):
            hit = any(value == shown(day(v)) for v in operand)
            return hit if op == "in" else not hit
        return _ORDER[op](value, shown(self._day_of(operand)))


def _same(value: Any, literal: Any) -> bool:
    """Equality of scalars of one JSON type (`True == 1` is no match)."""
    return json_kind(value) == json_kind(literal) and value == literal


def _month_days_of(period: Period) -> set[tuple[int, int]] | None:
    """The month-days a period covers (29 February stands for itself and, in a common year,
    its anniversary on 28 February); None when it covers every month-day."""
    first, after = period.days()
    if (after - first).days >= 366:
        return None
    covered: set[tuple[int, int]] = set()
    current = first
    while current < after:
        covered.add((current.month, current.day))
        if (current.month, current.day) == (2, 28) and _month_days(current.year, 2) == 28:
            covered.add((2, 29))
        current += timedelta(days=1)
    return covered


def _anniversary(value: date | tuple[int, int], period: Period) -> bool:
    covered = _month_days_of(period)
    month_day = (value.month, value.day) if isinstance(value, date) else value
    return covered is None or month_day in covered


def _text_anniversary(text: str, period: Period) -> bool:
    """How the text ends: a period that covers every month-day still asks it, so a text that
    ends in no month-day (`"ß"`) is no anniversary even over a whole leap year."""
    covered = _month_days_of(period)
    if covered is None:
        covered = {
            (month, day_)
            for month in range(1, 13)
            for day_ in range(1, _month_days(2000, month) + 1)
        }
    return any(text.endswith(f"-{month:02d}-{day_:02d}") for month, day_ in covered)
