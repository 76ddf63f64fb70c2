"""docs/syntax.md is executable: every filter, JSON twin, error rendering and `>>>` line in it."""

from __future__ import annotations

import doctest
import json
import re
from pathlib import Path

import pytest

from audiencefilter import FilterError, parse, parse_text, render_error

SYNTAX = Path(__file__).parent.parent / "docs" / "syntax.md"
_BLOCK = re.compile(r"```(\w+)\n(.*?)```\n", re.DOTALL)


def _blocks() -> list[tuple[str, str]]:
    return [(m.group(1), m.group(2)) for m in _BLOCK.finditer(SYNTAX.read_text(encoding="utf-8"))]


def _examples() -> list[tuple[str, str | None]]:
    blocks = _blocks()
    found = []
    for index, (kind, body) in enumerate(blocks):
        if kind == "filter":
            twin = blocks[index + 1] if index + 1 < len(blocks) else None
            found.append((body, twin[1] if twin and twin[0] == "json" else None))
    return found


def _errors() -> list[tuple[str, str]]:
    pairs = []
    for kind, body in _blocks():
        if kind == "error":
            text, _, rendering = body.partition("\n---\n")
            pairs.append((text, rendering.rstrip("\n")))
    return pairs


def test_the_page_has_examples() -> None:
    assert len(_examples()) >= 15 and len(_errors()) >= 3
    assert sum(twin is not None for _, twin in _examples()) >= 15


@pytest.mark.parametrize(("text", "twin"), _examples(), ids=lambda v: (v or "")[:40])
def test_filter_examples_parse_round_trip_and_match_their_json(text: str, twin: str | None) -> None:
    flt = parse_text(text)
    assert parse_text(flt.to_text()) == flt
    if twin is not None:
        json.loads(twin)  # the twin is valid JSON on its own
        assert parse(twin) == flt


@pytest.mark.parametrize(("text", "rendering"), _errors(), ids=lambda v: v[:40])
def test_error_examples_render_as_shown(text: str, rendering: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_text(text)
    assert render_error(caught.value) == rendering


def test_doctests_run() -> None:
    result = doctest.testfile(str(SYNTAX), module_relative=False)
    assert result.attempted > 0 and result.failed == 0
