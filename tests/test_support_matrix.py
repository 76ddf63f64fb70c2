"""docs/support.md says what the shape tests prove, no more: it is rendered from their cells."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from tests.shapes import FAMILIES, all_cells, cells, render

PAGE = Path(__file__).resolve().parents[1] / "docs" / "support.md"


def test_the_support_page_is_the_rendering_of_the_cells() -> None:
    assert PAGE.read_text(encoding="utf-8") == render(), (
        "docs/support.md is out of date: run `python -m tests.shapes`"
    )


def test_every_family_declares_cells_and_no_cell_twice() -> None:
    for family in FAMILIES:
        assert cells(family), f"tests/shapes/{family}.py declares no cell"
    ids = Counter((cell.family, cell.id) for cell in all_cells())
    assert [key for key, n in ids.items() if n > 1] == []


def test_every_refusal_names_its_fix() -> None:
    for cell in all_cells():
        if cell.outcome == "refused":
            assert cell.note, f"{cell.id}: a refused cell says the fix"
