"""`audiencefilter compare` and `audiencefilter examples`: readable text and `--json`."""

from __future__ import annotations

import json

import pytest

import audiencefilter as af
from audiencefilter.cli import EXIT_INVALID, EXIT_OK, main


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def test_compare_prints_the_relation_and_witnesses(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "compare", "points >= 10", '{"points": {"gte": 5}}')
    assert status == EXIT_OK
    assert out.splitlines()[0] == "relation: subset"
    assert "in the second only:" in out


def test_compare_json_witnesses_are_right(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "compare", "--json", 'country = "FR"', 'country in ["FR", "DE"]')
    result = json.loads(out)
    assert status == EXIT_OK and result["relation"] == "subset"
    a, b = af.parse_text('country = "FR"'), af.parse_text('country in ["FR", "DE"]')
    assert b.matches(result["b_only"]) and not a.matches(result["b_only"])
    assert a.matches(result["both"]) and b.matches(result["both"])


def test_compare_reports_an_invalid_filter(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "compare", "points >= 10", '{"pionts": 1}')
    assert status == EXIT_INVALID and "pionts" in err


def test_examples_json_has_a_pair_per_condition(capsys: pytest.CaptureFixture[str]) -> None:
    text = 'country = "FR" or points >= 10'
    status, out, _ = run(capsys, "examples", "--json", text)
    result = json.loads(out)
    flt = af.parse_text(text)
    assert (
        status == EXIT_OK and flt.matches(result["inside"]) and not flt.matches(result["outside"])
    )
    assert set(result["conditions"]) == {"OR[0].country.equals", "OR[1].points.gte"}
    for pair in result["conditions"].values():
        assert flt.matches(pair["inside"]) and not flt.matches(pair["outside"])


def test_examples_text_names_each_condition(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "examples", "points >= 10 and points >= 5")
    assert status == EXIT_OK
    assert "inside:" in out and "dead (never decides)" in out
