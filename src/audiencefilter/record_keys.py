"""The keys `Filter.matches` reads a record by, and records keyed another way.

A record is read by field names (`firstName`); a field kept inside a JSON column by that
column (`data`). Records built from ORM rows (Django's `model_to_dict`, SQLAlchemy's
`__dict__`) are keyed by column names, `first_name`: `matches(record, naming="snake_case")`
reads a field that is not there under its own name by the convention's name, as the other
back-ends find columns (backends/naming.py: the own name first, the convention only standing
in for a missing one).

A missing key is null (docs/semantics.md), so a record keyed the other way would answer
quietly as if every field were null. Without `naming=`, a record that holds none of the keys
the filter reads but holds some of them under the snake_case convention is refused with a
`RecordError` that names them and the fix: such a record is misnamed, not sparse. A record
with none of them under either name is only sparse (`{}`) and is answered.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any, Protocol

from .backends.naming import Naming, naming_function, snake_case
from .errors import RecordError
from .language.fields import Schema

if TYPE_CHECKING:
    from .backends.memory.compiler import Matcher

Record = Mapping[str, Any]


class NamedMatcher(Protocol):
    """`Filter.matches`: a record, the instant relative date-times are taken at, and the
    naming of the record's keys."""

    def __call__(
        self, record: Record, *, now: datetime | None = None, naming: Naming = None
    ) -> bool: ...


def keys_read(fields: frozenset[str], schema: Schema) -> tuple[str, ...]:
    """The record keys the filter's `fields` are read from: a field's own name, or the JSON
    column a declared field is kept in; sorted, each once."""
    keys = set()
    for name in fields:
        field = schema.get(name)
        keys.add(field.source[0] if field is not None and field.source else name)
    return tuple(sorted(keys))


def renamed(record: Record, keys: tuple[str, ...], convention: Callable[[str], str]) -> Record:
    """`record` with each key of `keys` it lacks read from the convention's name, if there."""
    missing = [key for key in keys if key not in record and convention(key) in record]
    if not missing:
        return record
    copy = dict(record)
    for key in missing:
        copy[key] = record[convention(key)]
    return copy


def check_named(record: Record, keys: tuple[str, ...]) -> None:
    """Refuse a record that holds none of `keys` but some under the snake_case convention.

    Raises:
        RecordError: naming the keys read, those found otherwise named, and the fix.
    """
    if not keys or not isinstance(record, Mapping) or any(key in record for key in keys):
        return
    found = {key: snake_case(key) for key in keys if snake_case(key) in record}
    if not found:
        return
    pairs = ", ".join(f"{key} as {other}" for key, other in found.items())
    raise RecordError(
        f"the record has none of the keys the filter reads ({', '.join(keys)}); it has "
        f'{pairs}: pass naming="snake_case" to matches, or key the record by field name'
    )


def _by_naming(record: Record, keys: tuple[str, ...], naming: Naming) -> Record:
    convention = naming_function(naming)
    return record if convention is None else renamed(record, keys, convention)


def named(base: Matcher, keys: tuple[str, ...]) -> NamedMatcher:
    """`matches` with `naming=`, and misnamed records refused (module docstring)."""

    def matches(record: Record, *, now: datetime | None = None, naming: Naming = None) -> bool:
        if naming is not None:
            record = _by_naming(record, keys, naming)
        answer = base(record, now=now)
        if naming is None and keys and keys[0] not in record:
            check_named(record, keys)
        return answer

    matches.__wrapped__ = base  # type: ignore[attr-defined]  # the accelerator it calls
    return matches


def named_predicate(predicate: Callable[[Record], bool], keys: tuple[str, ...]) -> NamedMatcher:
    """`named` for a filter with no relative date-time: its predicate, `now` ignored, in one
    call (a loop of `matches(record)` pays one call more than the predicate)."""

    def matches(record: Record, *, now: datetime | None = None, naming: Naming = None) -> bool:
        if naming is not None:
            record = _by_naming(record, keys, naming)
        answer = predicate(record)
        if naming is None and keys and keys[0] not in record:
            check_named(record, keys)
        return answer

    return matches
