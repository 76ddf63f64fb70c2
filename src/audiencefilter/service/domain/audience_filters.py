"""Audience filters as the service receives, stores and runs them; the semantics are the library's.

A request gives a filter as `filters` (a string holding a where clause in JSON, or the where
object itself) or as `filtersText` (the library's readable syntax). Both are read by the library
into one `Filter`; what is stored is its canonical JSON (`Filter.to_json()`), so two spellings of
one filter are stored alike and responses show one form.

"Empty" is decided on the parsed filter: a value is empty when it puts no condition on contacts,
that is when it folds to TRUE (`Filter.is_always_true()`: `{}`, `"{}"`, `{"AND": []}`,
`{"points": {}}`, and as much `{"OR": [x, {}]}`, `country = 'XX' OR TRUE` or
`NOT (x AND FALSE)`), or when it is a string with nothing but white space in it. An empty
filter means "everyone", which a smart audience refuses, however it is spelled; `null` means
"not given".

A list may declare custom fields (`custom_fields.py`): typed keys of each contact's `data` that
its filters name directly (`birthday anniversary within this week`). A filter is read with the
schema of its list, and stored with the declarations of the custom fields it reads (the
audience's `fields`), so what was stored reads back with the schema it was written for, whatever
the list declares later; the cache key is the pair. The list's time zone is stored there too
(`ZONE_KEY`), when it is not UTC: a calendar rule naming no zone (`within this week`) is read in
it, and a change of the list's zone rewrites its audiences' `fields` (`list_zone.py`), a change
of their meaning like a change of filter.

Stored filters are parsed again when used; `stored_filter` keeps the parsed filters by canonical
JSON and declarations, and with them their compiled predicates (the library caches one per
`Filter`), so a page of contacts costs one parse and one compilation per distinct filter per
process. That cache and the one of `filter_text` are bounded by entries and by weight
(`weighted_cache.py`): a filter weighs its conditions plus its array values, a text its
characters, so large filters cannot fill the process however many of them an account stores.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import CONTACT, DEFAULT_LIMITS, Cost, Filter, FilterError, Schema, from_format, parse
from ..db.models import Audience
from ..ground import clock
from ..ground.errors import INVALID_FILTERS, AudienceRuleError
from . import experiments, relations
from .experiments import Experiment
from .filter_budget import NOTHING, check_filter, check_list, cost_of
from .weighted_cache import WeightedCache

logger = logging.getLogger("audiencefilter.service")

SCHEMA = CONTACT.with_fields(phoneNumber="string", isGDPR="boolean")
"""The contact fields the service's filters may name: the library's contact model and the two
stored columns it lacks, `phoneNumber` and `isGDPR` (GDPR consent, the first condition of many
segments). The ORM names its attributes as the fields, so SQL and records find them."""


ZONE_KEY = "@timeZone"
"""The key of the list's time zone among the declarations stored beside a filter: no custom
field key starts with `@`, so it never names a field."""
UTC_ZONE = "UTC"


def encode_fields(declared: Mapping[str, str], zone: str = UTC_ZONE) -> str | None:
    """Custom field declarations (`{"birthday": "date"}`) and the list's time zone as the
    canonical text stored beside a filter: what reading it back needs. None for no field in
    UTC, so filters without either are stored and keyed as before; a zone is kept only when it
    is not UTC, the zone a calendar rule naming none was always read in."""
    entries = dict(declared)
    if zone != UTC_ZONE:
        entries[ZONE_KEY] = zone
    if not entries:
        return None
    return json.dumps(dict(sorted(entries.items())), separators=(",", ":"))


def decode_fields(fields: str | None) -> dict[str, str]:
    """The declarations `encode_fields` wrote (without the zone)."""
    decoded = dict(json.loads(fields)) if fields else {}
    decoded.pop(ZONE_KEY, None)
    return decoded


def decode_zone(fields: str | None) -> str:
    """The time zone `encode_fields` wrote: the one calendar rules naming none are read in."""
    return str(json.loads(fields).get(ZONE_KEY, UTC_ZONE)) if fields else UTC_ZONE


def in_zone(fields: str | None, zone: str) -> str | None:
    """The same declarations with another time zone (a list's zone changed)."""
    return encode_fields(decode_fields(fields), zone)


def schema_for(fields: str | None) -> Schema:
    """The filter schema with these custom fields, each read from the key of `data` it names,
    its calendar rules naming no zone read in the zone stored with them."""
    return _schema_with(fields) if fields else SCHEMA


@lru_cache(maxsize=1024)
def _schema_with(fields: str) -> Schema:
    declared = decode_fields(fields)
    schema = SCHEMA.with_fields(**{key: (kind, ("data", key)) for key, kind in declared.items()})
    return schema.in_zone(decode_zone(fields))


def reads_data(flt: Filter) -> bool:
    """Whether the filter reads the `data` column: by a path into it, or by a custom field
    kept there."""
    for name in flt.fields:
        field = flt.schema.get(name)
        if name == "data" or (field is not None and field.source[:1] == ("data",)):
            return True
    return False


def columns_read(flt: Filter) -> frozenset[str]:
    """The contact columns and relations the filter reads: a custom field is its column
    (`data`), so a write of `data` is one every custom field's audience must judge again."""
    columns = set()
    for name in flt.fields:
        field = flt.schema.get(name)
        columns.add(field.source[0] if field is not None and field.source else name)
    return frozenset(columns)


def _key(canonical: str, fields: str | None) -> str:
    return canonical if fields is None else f"{fields}\n{canonical}"


BOTH_FORMS = "Send either filters or filtersText, not both"
LIST_REQUIRED = "listId is required"
FORMAT_WITH_TEXT = "filtersFormat describes filters; filtersText is always the text syntax"
NO_SUCH_FORM = "This filter has no faithful form in the format asked for"
UNSATISFIABLE = "unsatisfiable"
# Entries bound the count (a thousand small audiences of a list are a thousand entries), weight
# the memory: about 160 bytes per unit once parsed, lowered and compiled, some 30 MB at most;
# a list of 1,000 ten-condition audiences weighs about 12,000 units.
CACHED_FILTERS = 8192
CACHED_FILTER_WEIGHT = 200_000
CACHED_TEXT_CHARACTERS = 4_000_000


@dataclass(frozen=True)
class FilterInput:
    """What a request said about filters: nothing, an empty filter, or a filter."""

    given: bool
    filter: Filter | None = None
    canonical: str | None = None  # the filter's canonical JSON, written once
    fields: str | None = None  # the custom fields it reads (`encode_fields`), stored beside it
    cost: Cost = NOTHING  # the filter's cost, measured once when it was read

    @property
    def empty(self) -> bool:
        return self.given and self.filter is None


ABSENT = FilterInput(given=False)
EMPTY = FilterInput(given=True)


def read_filters(
    filters: Any,
    filters_text: str | None,
    declared: Mapping[str, str] | None = None,
    written_in: str | None = None,
    zone: str = UTC_ZONE,
) -> FilterInput:
    """Read `filters` or `filtersText` (None: not given) with the list's custom fields
    `declared` (key to type); `written_in`: the format of `filters` (`filtersFormat`: a
    where clause by default, or one of the library's interop formats); `zone`: the list's time
    zone, which calendar rules naming none are read in. Raise the rule errors of the spec.

    Raises:
        AudienceRuleError: both forms given, the value is not a valid where clause (the
            library's problems are the error's `details`), or it exceeds the budget of one
            filter (`filter_budget`).
    """
    if filters is not None and filters_text is not None:
        raise AudienceRuleError(BOTH_FORMS)
    declared = declared or {}
    if filters_text is not None:
        if written_in not in (None, "json"):
            raise AudienceRuleError(FORMAT_WITH_TEXT)
        return _parsed(filters_text, declared, "text", zone)
    if filters is None:
        return ABSENT
    return _parsed(filters, declared, written_in or "json", zone)


def _parsed(value: Any, declared: Mapping[str, str], written_in: str, zone: str) -> FilterInput:
    if isinstance(value, str) and not value.strip():
        return EMPTY
    schema = schema_for(encode_fields(declared, zone))
    try:
        flt = from_format(value, written_in, schema)
        relations.check_answerable(flt, clock.now())
    except FilterError as exc:
        field = "filtersText" if written_in == "text" else "filters"
        raise AudienceRuleError(INVALID_FILTERS, exc.to_dicts(), field) from None
    if flt.is_always_true():
        return EMPTY
    canonical = flt.to_json()
    cost = check_filter(flt)  # decided now, never when the stored filter is read
    fields = encode_fields({k: kind for k, kind in declared.items() if k in flt.fields}, zone)
    # The filter about to be stored is the one its canonical form reads back to: held in the
    # cache now (weighed by the cost just measured), so the write that stores it never parses
    # it a second time, and nothing measures it again. Only when it was read over the schema
    # the key names: one read with custom fields it does not use is another filter object
    # than what `stored_filter` reads (its schema has more fields), and held under the key
    # it would lend that schema to every list of the process without them.
    key = _key(canonical, fields)
    if flt.schema == schema_for(fields):
        _FILTERS.get(key, lambda: flt, lambda _: _weight_of(cost))
    _COSTS.get(key, lambda: cost, lambda _cost: 1)
    return FilterInput(given=True, filter=flt, canonical=canonical, fields=fields, cost=cost)


_FILTERS: WeightedCache[Filter | None] = WeightedCache(CACHED_FILTERS, CACHED_FILTER_WEIGHT)
_TEXTS: WeightedCache[str | None] = WeightedCache(CACHED_FILTERS, CACHED_TEXT_CHARACTERS)
_COSTS: WeightedCache[Cost] = WeightedCache(CACHED_FILTERS, CACHED_FILTERS)


def stored_cost(canonical: str, fields: str | None = None) -> Cost:
    """The cost of a stored filter, measured once per process (by its canonical JSON): a
    list's room is checked against every other filter of the list on each write."""

    def make() -> Cost:
        flt = stored_filter(canonical, fields)
        return NOTHING if flt is None else cost_of(flt)

    return _COSTS.get(_key(canonical, fields), make, lambda _cost: 1)


def _filter_weight(flt: Filter | None) -> int:
    return 1 if flt is None else _weight_of(cost_of(flt))


def _weight_of(cost: Cost) -> int:
    return 1 + cost.conditions + cost.values


def stored_filter(canonical: str, fields: str | None = None) -> Filter | None:
    """The filter of a stored canonical JSON and the custom fields it reads; None (and a logged
    error) if it no longer parses."""
    return _FILTERS.get(
        _key(canonical, fields), lambda: _parse_stored(canonical, fields), _filter_weight
    )


# A stored filter was read and budgeted when it was sent; the text limit is for input, and a
# filter sent as a JSON object may have a canonical form longer than it (a long `in` list of
# long strings): read back without it, so what was accepted keeps its members.
STORED_LIMITS = replace(DEFAULT_LIMITS, max_text=1 << 40)


def _parse_stored(canonical: str, fields: str | None) -> Filter | None:
    try:
        return parse(canonical, schema_for(fields), limits=STORED_LIMITS)
    except FilterError as exc:
        # Only a schema change between versions could get here: such an audience matches no
        # one rather than failing every page of contacts of its list.
        logger.error("stored audience filter no longer parses: %s", exc)
        return None


def check_list_room(
    session: Session, list_id: str, given: FilterInput, excluding: str | None
) -> None:
    """Refuse the filter `given` (its cost measured when it was read) when, with the stored
    filters of the list's other audiences, it would take the list past its budget
    (`filter_budget`). Every stored filter counts, smart or not: a manual audience becomes
    smart by a PATCH that sends no filter."""
    statement = select(Audience.filters, Audience.fields).where(
        Audience.listId == list_id, Audience.filters.is_not(None)
    )
    if excluding is not None:
        statement = statement.where(Audience.id != excluding)
    others, live = NOTHING, 0
    for canonical, fields in session.execute(statement):
        if canonical:
            cost = stored_cost(canonical, fields)
            others = others + cost
            flt = stored_filter(canonical, fields)
            live += cost.conditions if flt is not None and flt.clock.is_relative else 0
    new_live = (
        given.cost.conditions if given.filter is not None and given.filter.clock.is_relative else 0
    )
    check_list(others, given.cost, live, new_live)


def filter_text(canonical: str, fields: str | None = None) -> str | None:
    """The text form of a stored canonical JSON (None if it no longer parses)."""

    def make() -> str | None:
        flt = stored_filter(canonical, fields)
        return None if flt is None else flt.to_text()

    return _TEXTS.get(_key(canonical, fields), make, lambda text: 1 + len(text or ""))


def filters_as(flt: Filter | None, name: str | None) -> dict[str, Any]:
    """`{"filtersAs": ...}`, the filter in the format `name` asked for (nothing when none was);
    a filter the format cannot say faithfully is a 400 with the library's reasons."""
    if name is None:
        return {}
    if flt is None:
        return {"filtersAs": None}
    try:
        return {"filtersAs": flt.to_format(name)}
    except FilterError as exc:
        raise AudienceRuleError(NO_SUCH_FORM, exc.to_dicts(), "filtersAs") from None


def warnings_for(flt: Filter | None) -> list[dict[str, str]]:
    """Advice about a filter that is valid but can never select anyone."""
    if flt is None or not flt.is_unsatisfiable():
        return []
    return [
        {
            "code": UNSATISFIABLE,
            "message": "These filters can never match any contact: the audience will stay empty.",
        }
    ]


MANUAL = "manual"
SMART = "smart"


def time_dependent(flt: Filter) -> bool:
    """Whether the filter's answer can change with time alone (relative date-times)."""
    return flt.clock.is_relative


def filter_of(mode: str, filters: str | None, fields: str | None) -> Filter | None:
    """The filter in use by an audience: None for a manual one (or a smart one without)."""
    if mode != SMART or not filters:
        return None
    return stored_filter(filters, fields)


@dataclass(frozen=True)
class StoredAudience:
    """What the store needs of an audience: id, name, mode, the filter in use and the
    experiment that draws each entering member's group."""

    id: str
    name: str
    mode: str
    flt: Filter | None
    experiment: Experiment | None = None
    in_sql: bool = field(init=False, repr=False, compare=False)
    """Whether a write judges it in SQL (`relations.decided_in_sql`)."""
    decodes: bool = field(init=False, repr=False, compare=False)
    """Whether it reads the `data` column (`reads_data`)."""
    relations: frozenset[str] = field(init=False, repr=False, compare=False)
    """The relations it reads (`relations.uses`)."""

    def __post_init__(self) -> None:
        # Kept once: a write judges each audience reading its fields, and these were asked
        # of every one of them on every write (a fifth of a PATCH's calls in our code).
        flt = self.flt
        object.__setattr__(self, "in_sql", relations.decided_in_sql(flt))
        object.__setattr__(self, "decodes", flt is not None and reads_data(flt))
        object.__setattr__(self, "relations", relations.uses(flt))

    @classmethod
    def of(cls, audience: Audience) -> StoredAudience:
        flt = filter_of(audience.mode, audience.filters, audience.fields)
        experiment = experiments.stored(audience.experiment)
        return cls(audience.id, audience.name, audience.mode, flt, experiment)
