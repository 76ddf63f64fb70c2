"""The suite's order for its workers (`tests/conftest.py`): the files named to go first are
files of the suite, so a renamed one cannot silently drop back to the end."""

from __future__ import annotations

from pathlib import Path

from tests.conftest import LONGEST_FIRST

ROOT = Path(__file__).resolve().parent.parent


def test_the_files_handed_out_first_exist() -> None:
    missing = [path for path in LONGEST_FIRST if not (ROOT / path).is_file()]
    assert not missing
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
