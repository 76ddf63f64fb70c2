"""CEL's list macros over an empty list literal read as CEL answers them: `[].all(...)` is
true for every record (a null or missing list too: the body is never evaluated), and
`[].exists(...)` false for every record, so `![].exists(...)` is true for every record; while
`tags.exists(t, t in [])` iterates the record's list, fails for a null one, and is the
filter's `hasSome: []` exactly. Each expression is generated from the macro forms
`cel/lists.py` reads (plain and guarded, with and without `!`, empty and one-value literals)
and compared with the reference evaluator (celpy) on records covering a missing list, a null
one, an empty one and lists with a null item."""

from __future__ import annotations

from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.formats.cel import reader as cel
from audiencefilter.testing.space import STRINGS
from tests.cel_reference import cel_matches

SCHEMA = af.Schema.of("lists", tags="string[]", scores="number[]")

_TAG = STRINGS[0] if STRINGS else "a"
_RECORDS: list[dict[str, Any]] = [
    {},
    {"tags": None, "scores": None},
    {"tags": [], "scores": []},
    {"tags": [None], "scores": [None]},
    {"tags": [_TAG], "scores": [1]},
    {"tags": [_TAG, "b"], "scores": [1, 2]},
    {"tags": ["b"], "scores": [2]},
]


def _literals(kind: str) -> list[str]:
    """An empty list literal and one of one value (the neighbour whose answer depends on the
    record)."""
    one = '"' + _TAG.replace("\\", "\\\\").replace('"', '\\"') + '"' if kind == "s" else "1.0"
    return ["[]", f"[{one}]"]


def _expressions() -> list[str]:
    found = []
    for values in _literals("s"):
        found += [
            f"{values}.all(t, t in tags)",
            f"{values}.exists(t, t in tags)",
            f"tags.exists(t, t in {values})",
        ]
    listed = "(type(scores) == list ? scores : [])"
    for values in _literals("n"):
        found += [
            f"{values}.all(v, {listed}.exists(t, type(t) == double && t == v))",
            f"{listed}.exists(t, type(t) == double && t in {values})",
        ]
    guarded = [f"type(scores) == list && !{e}" for e in found if e.startswith(("[", "("))]
    guarded = [e for e in guarded if "scores" in e.split("&&", 1)[1]]
    negated = [f"!{e}" for e in found if "scores" not in e]
    return found + guarded + negated


EXPRESSIONS = _expressions()


@pytest.mark.parametrize("expression", EXPRESSIONS)
def test_an_empty_list_macro_reads_as_cel_answers(expression: str) -> None:
    flt = af.Filter(cel.read(expression, SCHEMA), SCHEMA)
    for record in _RECORDS:
        expected = cel_matches(expression, record, SCHEMA)
        assert flt.matches(record) is expected, (expression, record, flt.to_dict())


def test_every_form_is_tried() -> None:
    assert len(EXPRESSIONS) == 20
    assert sum("[].all" in e for e in EXPRESSIONS) == 4
    assert sum("[].exists" in e for e in EXPRESSIONS) == 2
