"""Columns shapes users bring: their cells for the support matrix (tests/shapes/__init__.py)."""

from __future__ import annotations

from tests.shapes import Cell

CELLS: list[Cell] = []
