"""Writes docs/support.md from the shape cells: `python -m tests.shapes`."""

from pathlib import Path

from tests.shapes import render

PAGE = Path(__file__).resolve().parents[2] / "docs" / "support.md"

if __name__ == "__main__":
    PAGE.write_text(render(), encoding="utf-8")
    print(f"wrote {PAGE.name}")
