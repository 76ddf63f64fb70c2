"""The specification as data: every case of tests/conformance/*.json on every engine.

Each file holds `given` records and `cases`; a case has a `where` (a JSON object, or a JSON
string in `where_json` to test text-level rules such as duplicate keys) and either `matches`
(the ids selected, in any order) or `error` (the paths of the expected issues). A file may fix
the clock with `now` (an ISO 8601 instant; a case may give its own): every engine then takes
relative date-times (`{"ago": ...}`) at that instant, so membership that moves with time is
pinned down. A case may list in `refused` the databases (`mysql`, ...) that must raise
`FilterError` for it instead of answering. Set `CONFORMANCE=<file stem>` to run one file.
"""

from __future__ import annotations

import json
import os
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.values import parse_datetime
from tests.engines import Engine, engine_params, selector

HERE = Path(__file__).parent / "conformance"


def _load() -> list[Any]:
    wanted = os.environ.get("CONFORMANCE")
    params = []
    for path in sorted(HERE.glob("*.json")):
        if wanted and path.stem != wanted:
            continue
        suite = json.loads(path.read_text(encoding="utf-8"))
        for index, case in enumerate(suite["cases"]):
            name = case.get("name", str(index))
            if "now" in suite:
                case = {"now": suite["now"], **case}
            if "schema" in suite:  # a suite of its own fields (list fields, say)
                case = {**case, "schema": suite["schema"]}
            if "refused" in suite or "refused" in case:
                case = {**case, "refused": suite.get("refused", []) + case.get("refused", [])}
            params.append(pytest.param(suite["given"], case, id=f"{path.stem}:{name}"))
    return params


CASES = _load()


def _where(case: dict[str, Any]) -> Any:
    return case["where_json"] if "where_json" in case else case["where"]


def _schema(case: dict[str, Any]) -> af.Schema:
    return af.Schema.from_mapping(case["schema"]) if "schema" in case else af.CONTACT


def _family(engine: str) -> str:
    """The engine an engine's name runs on: `sql-sqlite` -> sqlite, `polars-untyped` ->
    polars, `pandas-pyarrow` (and `pyarrow-table`, read by the same back-end) -> pandas."""
    if engine.startswith(("pandas", "pyarrow")):
        return "pandas"
    return "polars" if engine.startswith("polars") else engine.rsplit("-", 1)[-1]


def _now(case: dict[str, Any]) -> datetime | None:
    return parse_datetime(case["now"]) if "now" in case else None


_parsed: dict[int, tuple[dict[str, Any], af.Filter]] = {}


def _filter(case: dict[str, Any]) -> af.Filter:
    """The case's filter, read once for every engine that is asked it (a filter is
    immutable; the case is held beside it, so its id is never another's)."""
    held = _parsed.get(id(case))
    if held is None or held[0] is not case:
        held = _parsed[id(case)] = (case, af.parse(_where(case), _schema(case)))
    return held[1]


@pytest.mark.parametrize(("given", "case"), [c for c in CASES if "matches" in c.values[1]])
@pytest.mark.parametrize("engine", engine_params())
def test_case_selects_expected_ids(
    engine: Engine,
    given: list[dict[str, Any]],
    case: dict[str, Any],
    request: pytest.FixtureRequest,
) -> None:
    flt = _filter(case)
    if flt.clock.is_relative:
        assert "now" in case, "a case with relative date-times must fix the clock"
    refused = case.get("refused", ())
    if _family(engine.name) in refused or any(engine.name.endswith(f"-{d}") for d in refused):
        # The engine cannot answer faithfully: it must say so, never answer differently.
        with pytest.raises(af.FilterError):
            selector(engine, request)(flt, given, _now(case))
        return
    assert selector(engine, request)(flt, given, _now(case)) == set(case["matches"])


@pytest.mark.parametrize(("given", "case"), [c for c in CASES if "error" in c.values[1]])
def test_case_is_rejected_at_path(given: list[dict[str, Any]], case: dict[str, Any]) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse(_where(case), _schema(case))
    expected = case["error"] if isinstance(case["error"], list) else [case["error"]]
    assert [issue.path for issue in caught.value.errors] == expected
    if "suggestion" in case:
        assert caught.value.errors[0].suggestion == case["suggestion"]


@pytest.mark.parametrize(("given", "case"), [c for c in CASES if "matches" in c.values[1]])
def test_case_round_trips_through_canonical_json(
    given: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    schema = _schema(case)
    flt = af.parse(_where(case), schema)
    assert af.parse(flt.to_json(), schema) == flt
    assert af.parse_text(flt.to_text(), schema) == flt
    if "canonical" in case:
        assert flt.to_dict() == case["canonical"]


def test_every_suite_file_has_cases() -> None:
    assert CASES, "no conformance cases found"
