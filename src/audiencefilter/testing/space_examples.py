"""A record source of the generated space: the records `examples` builds for a filter.

Why: the space's other records are drawn at random or walk fixed pools, so a condition whose
truth turns on one value (an `in` list's neighbour, a range's edge, a null under `not`) is met
only by chance. `examples` builds, for each condition, a pair of records that differ only in
what that condition reads and fall on opposite sides of the filter: records sitting on each
condition's edge. Joined to a batch's records, every surface is asked about them too.

Only records holding what the space's own records hold join (a number column holds integers of
64 bits, as `COLUMN_NUMBERS`): the algebra's representatives also include doubles, decimals and
non-finite numbers, which no surface of the space stores in a number column.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime
from typing import Any

from ..filter import parse
from ..language.fields import FieldType, Schema
from .examples import Examples, examples

_INT64 = range(-(2**63), 2**63)


def example_records(
    schema: Schema, now: datetime, wheres: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, Any], ...]:
    """The records of `examples` for each of `wheres` at `now` (inside, outside and each
    condition's pair), without repeats, those the space's columns can hold."""
    found: list[dict[str, Any]] = []
    for where in wheres:
        for record in shown_records(examples(parse(dict(where), schema), now=now)):
            if fits(schema, record) and record not in found:
                found.append(record)
    return tuple(found)


def shown_records(shown: Examples) -> Iterable[dict[str, Any]]:
    """Every record of `shown`: inside, outside, then each condition's pair."""
    yield from (r for r in (shown.inside, shown.outside) if r is not None)
    for pair in shown.conditions.values():
        yield from (r for r in (pair.inside, pair.outside) if r is not None)


def fits(schema: Schema, record: Mapping[str, Any]) -> bool:
    """Whether each number column of `record` (and of its related rows) holds null or a 64-bit
    integer, as the space's records do."""
    for name, value in record.items():
        declared = schema.get(name)
        if declared is not None and declared.type is FieldType.NUMBER and not declared.source:
            if value is not None and (type(value) is not int or value not in _INT64):
                return False
        relation = next((r for r in schema.relations if r.name == name), None)
        if relation is not None and not _rows_fit(relation.schema, value):
            return False
    return True


def _rows_fit(schema: Schema, rows: Any) -> bool:
    if isinstance(rows, Mapping):
        return fits(schema, rows)
    if isinstance(rows, list):
        return all(isinstance(row, Mapping) and fits(schema, row) for row in rows)
    return True


__all__ = ["example_records", "fits", "shown_records"]
