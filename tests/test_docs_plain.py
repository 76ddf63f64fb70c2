"""The doctested pages pass under plain doctest, as a reader running `python -m doctest
docs/<page>.md` runs them: only `ELLIPSIS`, no `NORMALIZE_WHITESPACE` from the test runner.
Whitespace that matters to a reader (the columns of an explanation) is then compared as
printed, and an example whose output truly differs by whitespace says so itself with a
`# doctest: +NORMALIZE_WHITESPACE` directive beside it."""

from __future__ import annotations

import doctest
from pathlib import Path

import pytest

from tests.test_docs import DOCTESTED
from tests.test_sql_docs import BACKEND_PAGES

DOCS = Path(__file__).parent.parent / "docs"


@pytest.mark.parametrize("name", [*DOCTESTED, *BACKEND_PAGES])
def test_documentation_examples_run_under_plain_doctest(name: str) -> None:
    result = doctest.testfile(str(DOCS / name), module_relative=False, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0
