"""Where each claim is written: the `<!-- claim: ID -->` markers of the performance pages.

A claim's words live in whichever page holds its topic (the method, a history page); the
registry names only the section's heading, so a section moved to another page keeps its
claims. Each marker stands just before the text holding its claim; consecutive markers share
that text, which runs to the next marker or heading.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = "performance*.md"
MARKER = re.compile(r"^<!-- claim: (\S+) -->$")
GENERATED = "<!-- Everything below is generated"


@dataclass(frozen=True)
class Marked:
    """One marker: the page and the heading it is under, and the text it stands before."""

    page: str
    heading: str
    text: str

    @property
    def link(self) -> str:
        """The section as a link from another page of docs/."""
        return f"[{self.heading}]({self.page}#{slug(self.heading)})"


def slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (the `toc` extension's default)."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").strip().lower())
    return re.sub(r"\s+", "-", text)


def title(page: str, docs: Path = DOCS) -> str:
    """A page's title, its first heading."""
    first = (docs / page).read_text(encoding="utf-8").split("\n", 1)[0]
    return first.lstrip("#").strip()


def marked(docs: Path = DOCS) -> dict[str, list[Marked]]:
    """Every marker's id and each place it stands, over the performance pages (a claim is
    written in one place: a list of one)."""
    found: dict[str, list[Marked]] = {}
    for path in sorted(docs.glob(PAGES)):
        for claim_id, place in _page(path):
            found.setdefault(claim_id, []).append(place)
    return found


def _page(path: Path) -> list[tuple[str, Marked]]:
    found: list[tuple[str, Marked]] = []
    heading, waiting, text, fenced = "", list[str](), list[str](), False
    lines = path.read_text(encoding="utf-8").split(GENERATED)[0].splitlines()
    for line in [*lines, "# end"]:
        fenced ^= line.startswith("```")
        is_heading = not fenced and re.match(r"#{1,6} ", line) is not None
        match = MARKER.match(line.strip())
        if (match or is_heading) and waiting and text:
            place = Marked(path.name, heading, "\n".join(text))
            found += [(claim_id, place) for claim_id in waiting]
            waiting, text = [], []
        if match:
            waiting.append(match.group(1))
        elif is_heading:
            heading, waiting = line.lstrip("#").strip(), []
        elif waiting:
            text.append(line)
    return found
