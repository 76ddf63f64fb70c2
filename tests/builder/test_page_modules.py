"""The builder page's ES modules under Node's own test runner (`node --test`), in `make test`.

`js/*.test.mjs` import the page's modules as shipped (`service/static/builder/`) and check them
against the library's answers, which `page_cases.py` computes here and hands over as a JSON
file: the page's where-clause reader and writer must give back the canonical JSON the library
writes for every conformance filter, and offer, for each field, the operators the library takes.
Without Node the test is skipped, and fails when `AUDIENCEFILTER_REQUIRE_SERVERS=1` (CI, whose
`.ci/run` installs it).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import audiencefilter as af

from .page_cases import every_type_schema, write

HERE = Path(__file__).resolve().parent
TESTS = sorted((HERE / "js").glob("*.test.mjs"))


def _node() -> str:
    node = shutil.which("node")
    if node is None:
        reason = "node is not installed (apt-get install nodejs)"
        if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1":
            pytest.fail(f"{reason} (AUDIENCEFILTER_REQUIRE_SERVERS=1)", pytrace=False)
        pytest.skip(reason)
    return node


@pytest.mark.parametrize("script", TESTS, ids=[path.name for path in TESTS])
def test_page_module(script: Path, tmp_path: Path) -> None:
    cases = write(tmp_path / "page_cases.json")
    env = {**os.environ, "AUDIENCEFILTER_PAGE_CASES": str(cases)}
    run = subprocess.run(
        [_node(), "--test", str(script)],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-20000:] + run.stderr[-4000:]


def test_the_library_reads_every_filter_the_page_writes(tmp_path: Path) -> None:
    # `js/emit_samples.mjs` writes a filter with every control the page offers; a refusal
    # here is a control the page offers and the library does not take.
    cases = write(tmp_path / "page_cases.json")
    env = {**os.environ, "AUDIENCEFILTER_PAGE_CASES": str(cases)}
    run = subprocess.run(
        [_node(), str(HERE / "js" / "emit_samples.mjs")],
        cwd=HERE,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    samples = json.loads(run.stdout)
    schemas = {"everyType": every_type_schema(), "contact": af.CONTACT}
    refused = []
    for sample in samples:
        try:
            af.parse(sample["where"], schemas[sample["schema"]])
        except af.FilterError as error:
            refused.append(f"{json.dumps(sample['where'])}: {error}")
    assert len(samples) > 300
    assert refused == []
