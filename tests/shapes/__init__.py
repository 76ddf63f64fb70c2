"""The storage shapes users bring, as a dimension of the generated space, and the support
matrix generated from them.

Why: the space proves one truth over the library's own tables; users embed the library on
theirs (a `varchar[]` column, a many-to-many `relationship()`, `Decimal` amounts, a frame
written by `to_csv`, a database created with a libc locale). Each family module here
(`columns`, `settings`, `relations`, `values`, `frames`) lists its shapes as `Cell`s, and
its tests run every cell: a cell whose outcome is `exact`
must give the oracle's answer on every operator of the field type, a cell whose outcome is
`refused` must be refused when the expression is built, with an error naming the shape and
the fix. `docs/support.md` is rendered from the same cells (`render`), and a test holds the
page equal to the rendering, so the page says only what the tests prove.
"""

from __future__ import annotations

import importlib
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Literal

Outcome = Literal["exact", "refused"]

FAMILIES = ("columns", "settings", "relations", "values", "frames")
"""The family modules, in the order the support page shows them."""

TITLES = {
    "columns": "Column types",
    "settings": "Database settings and declared collations",
    "relations": "Relation shapes",
    "values": "Python values",
    "frames": "Frame cells and dtypes",
}


@dataclass(frozen=True)
class Cell:
    """One storage shape on one back-end, and what the library does with it."""

    family: str
    backend: str
    shape: str
    """The shape as the user spells it: `varchar(50)[]`, `relationship(secondary=...)`."""
    field_type: str
    """The filter field type the shape holds (`string[]`, `number`, a relation kind)."""
    outcome: Outcome
    note: str = ""
    """For a refusal, the fix the error suggests; for an exact cell, anything worth knowing."""

    @property
    def id(self) -> str:
        """A pytest id naming the cell."""
        return f"{self.backend}:{self.shape}:{self.field_type}"


@dataclass
class ShapeTally:
    """What the shape tests asked in this run: checks (a filter on a row) per family, the
    cells and engines they ran on, and the disagreements found, printed at the end of a run
    (tests/conftest.py) so that a deep run's figures can be read off it."""

    checks: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cells: set[str] = field(default_factory=set)
    engines: set[str] = field(default_factory=set)
    disagreements: int = 0

    def note(self, cell: Cell, filters: int, rows: int, wrong: int) -> None:
        """One cell's run: `filters` asked of `rows` rows, `wrong` of them answered otherwise."""
        self.checks[cell.family] += filters * rows
        self.cells.add(f"{cell.family}:{cell.id}")
        self.engines.add(cell.backend)
        self.disagreements += wrong


TALLY = ShapeTally()
"""This process's tally (each pytest worker has its own)."""


def cells(family: str) -> tuple[Cell, ...]:
    """The cells a family module declares (`tests/shapes/<family>.py`, `CELLS`)."""
    module = importlib.import_module(f"tests.shapes.{family}")
    found: tuple[Cell, ...] = tuple(module.CELLS)
    return found


def all_cells() -> tuple[Cell, ...]:
    """Every family's cells, in page order."""
    return tuple(cell for family in FAMILIES for cell in cells(family))


def _escape(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """docs/support.md, from the cells."""
    out = [
        "# Support matrix",
        "",
        "> Needs: the library alone (`pip install ./audiencefilter`) for records; each engine's"
        " rows need its extra and driver, as [backends.md](backends.md) says.",
        "",
        "<!-- Generated from tests/shapes by `python -m tests.shapes`;",
        "     tests/test_support_matrix.py holds this page equal to the cells the shape tests run.",
        "     Do not edit by hand. -->",
        "",
        "What the library does with the storage shapes users have, per back-end. **exact**:",
        "every operator of the field type gives the answer of the in-memory oracle",
        "(docs/semantics.md) on this shape, proven by the shape tests on the real engine.",
        "**refused**: the expression is refused when it is built (`FilterError` or",
        "`FrameError`), naming the shape and the fix in the note, never a wrong answer or an",
        "error from the database at run time.",
        "",
    ]
    for family in FAMILIES:
        by_backend: dict[str, list[Cell]] = defaultdict(list)
        for cell in cells(family):
            by_backend[cell.backend].append(cell)
        if not by_backend:
            continue
        out += [f"## {TITLES[family]}", ""]
        for backend, group in by_backend.items():
            out += [f"### {backend}", "", "| shape | field type | outcome | note |"]
            out.append("|---|---|---|---|")
            for cell in group:
                out.append(
                    f"| `{_escape(cell.shape)}` | `{_escape(cell.field_type)}` | "
                    f"{cell.outcome} | {_escape(cell.note)} |"
                )
            out.append("")
        if family == "frames":
            out += importlib.import_module("tests.shapes.frames").render_refused()
    out += importlib.import_module("tests.shapes.catalogues").render()
    out += importlib.import_module("tests.shapes.limits").render()
    return "\n".join(out).rstrip("\n") + "\n"
