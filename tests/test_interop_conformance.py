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
