"""The examples in the documentation are tests: every `>>>` line runs."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

DOCS = Path(__file__).parent.parent / "docs"
DOCTESTED = [
    "index.md",
    "semantics.md",
    "semantics-calendar.md",
    "semantics-json.md",
    "semantics-relations.md",
    "guide.md",
    "errors.md",
    "interop.md",
    "pandas.md",
]


@pytest.mark.parametrize("name", DOCTESTED)
def test_documentation_examples_run(name: str) -> None:
    path = DOCS / name
    result = doctest.testfile(
        str(path),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


def test_readme_example_runs() -> None:
    result = doctest.testfile(str(DOCS.parent / "README.md"), module_relative=False)
    assert result.failed == 0
