"""The interop conformance files: each source (a react-querybuilder query, a SQL WHERE
condition) reads to the canonical where clause the file states, which selects the records it
states; each refused source is refused at its path. `tests/test_conformance.py` runs the same
where clauses on every back-end, so these readings hold on all of them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import react_querybuilder, sql_where
from audiencefilter.language.nodes import Node

HERE = Path(__file__).parent.parent / "conformance"
READERS: dict[str, Callable[[Any, af.Schema], Node]] = {
    "interop_react_querybuilder": react_querybuilder.read,
    "interop_sql": sql_where.read,
}


def _cases() -> list[Any]:
    params = []
    for stem in READERS:
        suite = json.loads((HERE / f"{stem}.json").read_text(encoding="utf-8"))
        for case in suite["cases"]:
            params.append(pytest.param(stem, suite["given"], case, id=f"{stem}:{case['name']}"))
    return params


@pytest.mark.parametrize(("stem", "given", "case"), _cases())
def test_source_reads_as_stated(
    stem: str, given: list[dict[str, Any]], case: dict[str, Any]
) -> None:
    read = READERS[stem]
    if "source_error" in case:
        with pytest.raises(af.FilterError) as caught:
            read(case["source"], af.CONTACT)
        assert [issue.path for issue in caught.value.errors] == case["source_error"]
        return
    flt = Filter(read(case["source"], af.CONTACT))
    assert flt.to_dict() == case["where"]
    assert [record["id"] for record in flt.select(given)] == case["matches"]
