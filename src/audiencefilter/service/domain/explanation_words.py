"""An explanation's values in a person's words: the list's field labels and related rows by name.

The library's explanation says what a condition saw in the filter's own terms: a custom field
by where it is stored (`data.birthday = 1990-05-01`), the related rows that decided a behaviour
by id (`3 actions where name = "share": act_1, act_4, act_9`). Both are exact, and the API keeps
them (`seen`), but a marketer reads neither: `words` gives the same facts with the labels the
builder shows (`Birthday = 1990-05-01`, `Signed up at = ...`) and each related row by its name
and day (`share on 2026-11-24`), an audience by its name. Nothing is judged here: the text is
the library's, only the names in it are replaced.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from ... import Explanation

_TOKEN = re.compile(r'(?<!["\w-])[A-Za-z0-9_-]+(?![\w"-])')
"""A word that may be a row's id; one written inside quotes (a filter's value) is left alone."""


def row_names(record: Mapping[str, Any], relations: Sequence[str]) -> dict[str, str]:
    """Each related row's id, mapped to its name (and the day it happened, for an action)."""
    names: dict[str, str] = {}
    for relation in relations:
        for row in record.get(relation) or ():
            name, created = row.get("name"), row.get("createdAt")
            if row.get("id") is None or name is None:
                continue
            day = f" on {created.date().isoformat()}" if isinstance(created, datetime) else ""
            names[str(row["id"])] = f"“{name}”{day}" if relation == "audiences" else f"{name}{day}"
    return names


def _value_part(node: Explanation) -> str:
    """What follows the field's name in `seen`: ` = 150`, ` is missing`, ` is null`."""
    if not node.present:
        return " is missing"
    if node.value is None:
        return " is null"
    seen = node.seen
    quoted = False
    for index, char in enumerate(seen):
        quoted = quoted != (char == "`")
        if not quoted and seen.startswith(" = ", index):
            return seen[index:]
    return f" {seen}"


def _field_words(node: Explanation, labels: Mapping[str, str]) -> str:
    """`Birthday = 1990-05-01` for a custom field, `Custom data › plan = "pro"` for a path."""
    field, path = node.field or "", node.path
    if len(path) == 1 and path[0] in labels and field == "data":
        name = labels[path[0]]
    else:
        name = " › ".join([labels.get(field, field), *path])
    return name + _value_part(node)


def words(node: Explanation, labels: Mapping[str, str], rows: Mapping[str, str]) -> str:
    """The node's `seen` with labels and row names; empty where `seen` is."""
    if node.related:
        return _TOKEN.sub(lambda m: rows.get(m.group(0), m.group(0)), node.related)
    if node.field is None or not node.seen:
        return node.seen
    return _field_words(node, labels)
