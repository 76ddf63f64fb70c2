"""Replay the fuzzing corpus: every saved input still parses or raises FilterError, and every
valid one survives all writers and back-ends (see tests/fuzz/targets.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.targets import check_json, check_text

CORPUS = Path(__file__).parent / "fuzz" / "corpus"


def _inputs(kind: str) -> list[Path]:
    return sorted((CORPUS / kind).iterdir())


def test_corpus_is_not_empty() -> None:
    assert len(_inputs("json")) > 50 and len(_inputs("text")) > 50


@pytest.mark.parametrize("kind", ["json", "text"])
def test_corpus_inputs_parse_or_raise_filter_error(kind: str) -> None:
    check = check_json if kind == "json" else check_text
    for path in _inputs(kind):
        check(path.read_bytes())
