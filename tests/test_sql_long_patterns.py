"""Pattern operands longer than SQLite's LIKE and GLOB take (SQLITE_MAX_LIKE_PATTERN_LENGTH,
50,000 bytes by default): `contains`, `startsWith` and `endsWith` of such a value used to stop
with "LIKE or GLOB pattern too complex". They run, and answer as memory does, on every way of
asking (SQL text, SQL with parameters, SQLAlchemy), case-sensitive or not, wherever the field
is (a column, a path inside `data`, a field declared inside JSON, a field of a related row).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.backends.sql.dialects.sqlite import LIKE_PATTERN_LIMIT
from tests.sql_engines import WAYS, open_database

SCHEMA = af.CONTACT.with_fields(note=("string", ("data", "note")))
OPS = ("contains", "startsWith", "endsWith")
MODES = ("default", "insensitive")
NEEDLES = {
    # ASCII: one byte a character, one more than the limit.
    "ascii": ("ab" * LIKE_PATTERN_LIMIT)[: LIKE_PATTERN_LIMIT + 1],
    # GLOB writes `[` as `[[]`: a third of the limit is already too long once escaped.
    "brackets": "[*?" * (LIKE_PATTERN_LIMIT // 9 + 1),
    # Two bytes a character: the limit counts bytes.
    "accented": "é" * (LIKE_PATTERN_LIMIT // 2 + 1),
}
PLACEMENTS = {
    "column": lambda test: {"email": test},
    "data path": lambda test: {"data": {"path": ["note"], **_path_op(test)}},
    "declared in JSON": lambda test: {"note": test},
    "related row": lambda test: {"actions": {"some": {"name": test}}},
}
WHEN = datetime(2026, 1, 1, tzinfo=UTC)


def _path_op(test: dict[str, Any]) -> dict[str, Any]:
    """A data path's pattern operators are `string_contains`, `string_starts_with`, ..."""
    (op, value), *mode = test.items()
    name = {"contains": "string_contains", "startsWith": "string_starts_with"}.get(
        op, "string_ends_with"
    )
    return {name: value, **dict(mode)}


def _texts(needle: str) -> list[str | None]:
    return [
        needle,
        "x" + needle + "y",
        needle.upper(),
        needle[:-1] + "#",
        "#" + needle[1:],
        "pre" + needle,
        needle + "post",
        needle[: len(needle) // 2],
        "",
        None,
    ]


def _records(needle: str) -> list[dict[str, Any]]:
    records = []
    for index, text in enumerate(_texts(needle)):
        records.append(
            {
                "id": f"r{index}",
                "email": text,
                "data": {} if text is None else {"note": text},
                "actions": [{"id": f"a{index}", "name": text, "increase": 1, "createdAt": WHEN}],
            }
        )
    return records


def _where(placement: str, op: str, mode: str, needle: str) -> dict[str, Any]:
    test: dict[str, Any] = {op: needle}
    if mode != "default":
        test["mode"] = mode
    return PLACEMENTS[placement](test)  # type: ignore[no-untyped-call, no-any-return]


@pytest.mark.parametrize("kind", list(NEEDLES))
@pytest.mark.parametrize("placement", list(PLACEMENTS))
@pytest.mark.parametrize("way", WAYS)
def test_an_operand_longer_than_the_like_limit_runs_as_memory_answers(
    way: str, placement: str, kind: str, request: pytest.FixtureRequest
) -> None:
    needle = NEEDLES[kind]
    records = _records(needle)
    db = open_database("sqlite", request)
    table = db.table_for(records, SCHEMA)
    for op in OPS:
        for mode in MODES:
            flt = af.parse(_where(placement, op, mode, needle), SCHEMA)
            expected = {r["id"] for r in records if flt.matches(r)}
            got = db.way(way)(flt, table, WHEN)
            assert got == expected, (op, mode)
            assert expected, "each filter selects someone"


def test_a_pattern_within_the_limit_keeps_the_engines_like_and_glob() -> None:
    """The accelerators stay for every operand they can hold; only longer ones leave them."""
    short = "a" * 100
    for op, form in (("startsWith", "GLOB"), ("contains", "LIKE")):
        mode = {} if op == "startsWith" else {"mode": "insensitive"}
        sql = af.parse({"email": {op: short, **mode}}).to_sql("sqlite")
        assert form in sql
        long = af.parse({"email": {op: NEEDLES["ascii"], **mode}}).to_sql("sqlite")
        assert "GLOB" not in long and "LIKE" not in long
