"""The interop formats as data: every case of tests/conformance/interop_*.json.

A file names its `format`; a case gives a rule in it (`source`) and either the canonical where
clause it reads as (`where`) with the ids of the `given` contacts it selects (`matches`), or
the paths of the issues that refuse it (`source_error`). The format's reference evaluator
(`tests/interop_reference.py`) must select the same contacts, and the where clause written
back in the format must select them too. `tests/test_conformance.py` runs each `where` on
every engine, as any conformance case.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from tests.interop_reference import REFERENCES

HERE = Path(__file__).parent / "conformance"


def _cases(kind: str) -> list[Any]:
    params = []
    for path in sorted(HERE.glob("interop_*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        if "format" not in suite:
            continue  # react-querybuilder and SQL: their runner is tests/interop/
        for case in suite["cases"]:
            if kind in case:
                name = f"{path.stem}:{case['name']}"
                params.append(pytest.param(suite["format"], suite["given"], case, id=name))
    return params


@pytest.mark.parametrize(("fmt", "given", "case"), _cases("matches"))
def test_rule_reads_as_the_where_clause_and_selects_the_same(
    fmt: str, given: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    flt = af.from_format(case["source"], fmt)
    assert flt.to_dict() == case["where"]
    assert sorted(r["id"] for r in given if flt.matches(r)) == case["matches"]
    reference = REFERENCES.get(fmt)
    if reference is not None:
        assert (
            sorted(r["id"] for r in given if reference(case["source"], r, af.CONTACT))
            == case["matches"]
        )
        written = flt.to_format(fmt)
        assert (
            sorted(r["id"] for r in given if reference(written, r, af.CONTACT)) == case["matches"]
        )


@pytest.mark.parametrize(("fmt", "given", "case"), _cases("source_error"))
def test_rule_is_refused_at_its_paths(
    fmt: str, given: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format(case["source"], fmt)
    assert [issue.path for issue in caught.value.errors] == case["source_error"]


def test_every_interop_file_has_cases() -> None:
    assert _cases("matches") and _cases("source_error")


def test_convert_exits_with_the_usage_status_for_an_unknown_format(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from audiencefilter.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE, main

    with pytest.raises(SystemExit) as exited:
        main(["convert", "--from", "jsonlogik", "--to", "text", "{}"])
    assert exited.value.code == EXIT_USAGE
    assert "invalid choice: 'jsonlogik'" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["convert", "--from", "english", "--to", "text", "x"])
    assert exited.value.code == EXIT_USAGE
    rule = '{"in": ["Gmail", {"var": "email"}]}'
    assert main(["convert", "--from", "jsonlogic", "--to", "json", rule]) == EXIT_INVALID
    assert "in[0]: " not in capsys.readouterr().out
    assert main(["convert", "--from", "json", "--to", "jsonlogic", '{"points": 1}']) == EXIT_OK
    assert json.loads(capsys.readouterr().out) == {"===": [{"var": "points"}, 1]}


def test_the_registry_names_every_format_and_refuses_others() -> None:
    from audiencefilter.formats import FORMATS

    assert set(FORMATS) == {"jsonlogic", "mongodb", "react-querybuilder", "sql", "cel", "english"}
    with pytest.raises(af.FilterError) as caught:
        af.from_format("{}", "jsonlogik")
    assert '"jsonlogic"' in str(caught.value) and "json and text" in str(caught.value)
    with pytest.raises(af.FilterError):
        af.parse({"points": 1}).to_format("yaml")
    assert af.from_format('{"points": 1}', "json") == af.parse({"points": 1})
    assert af.from_format("points = 1", "text").to_format("json") == {"points": {"equals": 1}}
    assert af.parse({"points": 1}).to_format("text") == "points = 1"
