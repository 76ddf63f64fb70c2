"""Helpers for users' own tests: assert who is in an audience, and see why when it's wrong.

A failing membership assertion prints, for each contact wrongly in or out, the explanation tree
of the filter over that contact, so a test failure says which condition decided it. Works with
pytest's plain `assert` machinery (raises `AssertionError`) and needs nothing from pytest.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping
from typing import Any

from ..filter import Filter, parse
from ..language.contact import CONTACT
from ..language.fields import Schema
from .examples import ConditionExample, Examples, examples

__all__ = ["ConditionExample", "Examples", "as_filter", "assert_members", "examples", "members"]

Where = Filter | str | bytes | Mapping[str, Any]


def as_filter(where: Where, schema: Schema = CONTACT) -> Filter:
    """A `Filter` from a filter, JSON text or a where mapping."""
    return where if isinstance(where, Filter) else parse(where, schema)


def members(
    where: Where,
    contacts: Iterable[Mapping[str, Any]],
    *,
    id_key: str = "id",
    schema: Schema = CONTACT,
) -> list[Any]:
    """The ids of the contacts in the audience, in the contacts' order."""
    predicate = as_filter(where, schema).predicate
    return [contact[id_key] for contact in contacts if predicate(contact)]


def assert_members(
    where: Where,
    contacts: Iterable[Mapping[str, Any]],
    expected: Collection[Any],
    *,
    id_key: str = "id",
    schema: Schema = CONTACT,
) -> None:
    """Assert that exactly the contacts with ids in `expected` belong to the audience.

    Raises:
        AssertionError: listing the contacts wrongly in and wrongly out, each with the
            explanation of the filter over it.
    """
    flt = as_filter(where, schema)
    rows = list(contacts)
    got = members(flt, rows, schema=schema, id_key=id_key)
    wanted = set(expected)
    unexpected = [r for r in rows if r[id_key] in set(got) - wanted]
    missing = [r for r in rows if r[id_key] in wanted - set(got)]
    unknown = wanted - {r[id_key] for r in rows}
    if not unexpected and not missing and not unknown:
        return
    lines = [
        f"audience {flt.to_text()!s}",
        f"  members:  {got!r}",
        f"  expected: {sorted(wanted, key=repr)!r}",
    ]
    for title, group in (("in but not expected", unexpected), ("expected but out", missing)):
        for row in group:
            lines.append(f"{title}: {row[id_key]!r}")
            lines.extend("    " + line for line in str(flt.explain(row)).splitlines())
    if unknown:
        lines.append(f"expected ids that are not among the contacts: {sorted(unknown, key=repr)!r}")
    raise AssertionError("\n".join(lines))
