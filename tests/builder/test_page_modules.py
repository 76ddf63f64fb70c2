"""The builder page's ES modules under Node's own test runner (`node --test`), in `make test`.

`js/*.test.mjs` import the page's modules as shipped (`service/static/builder/`) and check them
against the library's answers, which `page_cases.py` computes here and hands over as a JSON
file: the page's where-clause reader and writer must give back the canonical JSON the library
writes for every conformance filter, and offer, for each field, the operators the library takes.
Without Node the test is skipped, and fails when `AUDIENCEFILTER_REQUIRE_SERVERS=1` (CI, whose
`.ci/run` installs it).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from .page_cases import write

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
