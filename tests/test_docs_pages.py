"""The documentation is shaped for its readers: every page short enough to finish, the site's
navigation in the order a reader goes (start, guide, reference, service, operations,
internals), and every `docs/<page>.md#<section>` that code, tests or pages point to still
there after a page is split."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
MAX_LINES = 800
NAV_SECTIONS = ["Start", "Guide", "Reference", "Service", "Operations", "Internals"]
# Pages still being split by topic; each turns this case into a failure once it is short.
NOT_YET_SPLIT: dict[str, str] = {}
POINTER = re.compile(r"docs/([a-z0-9-]+\.md)(?:#([a-z0-9_-]+))?")
LINK = re.compile(r"\]\(([a-z0-9-]+\.md)?#([a-z0-9_-]+)\)")
# A section named by its words after the page's path, in quotes or in stars, as comments do.
NAMED = re.compile(r'docs/([a-z0-9-]+\.md),? (?:"([^"\n]+)"|\*([^*\n]+)\*)')


def _page_case(page: Path) -> object:
    if page.name in NOT_YET_SPLIT:
        return pytest.param(
            page.name, marks=pytest.mark.xfail(strict=True, reason=NOT_YET_SPLIT[page.name])
        )
    return page.name


@pytest.mark.parametrize("name", [_page_case(page) for page in sorted(DOCS.glob("*.md"))])
def test_every_page_is_short_enough_to_finish(name: str) -> None:
    lines = (DOCS / name).read_text(encoding="utf-8").count("\n")
    assert lines <= MAX_LINES, (
        f"docs/{name} has {lines} lines: split it by topic (at most {MAX_LINES})"
    )


def test_the_navigation_follows_the_readers_path() -> None:
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    sections = [next(iter(entry)) for entry in config["nav"]]
    assert sections == NAV_SECTIONS


def _slug(heading: str) -> str:
    """The anchor mkdocs gives a heading (the `toc` extension's default)."""
    text = re.sub(r"[^\w\s-]", "", heading.replace("`", "").strip().lower())
    return re.sub(r"\s+", "-", text)


def _headings(page: str) -> list[str]:
    """A page's headings, outside code blocks."""
    found, fenced = [], False
    for line in (DOCS / page).read_text(encoding="utf-8").split("\n"):
        fenced ^= line.startswith("```")
        if not fenced and re.match(r"#{1,6} ", line):
            found.append(line.lstrip("#").strip())
    return found


def _sources() -> list[Path]:
    """The files that point into the docs: the pages themselves, the README and the code."""
    sources = [ROOT / "README.md", *DOCS.glob("*.md")]
    for folder in ("src", "tests", "benchmarks", "drills"):
        sources += (ROOT / folder).rglob("*.py")
    return sources


def _pointers(path: Path) -> list[tuple[str, str]]:
    """The (page, anchor) pairs a file names; the anchor is empty for a whole page."""
    text = path.read_text(encoding="utf-8")
    found: list[tuple[str, str]] = POINTER.findall(text)
    if path.parent == DOCS:
        found += [(page or path.name, anchor) for page, anchor in LINK.findall(text)]
    return found


def _is_section(page: str, words: str, headings: dict[str, list[str]]) -> bool:
    wanted = words.replace("`", "").lower()
    return any(wanted in heading.replace("`", "").lower() for heading in headings[page])


def test_every_pointer_into_the_docs_names_a_page_and_section_that_exist() -> None:
    headings = {page.name: _headings(page.name) for page in DOCS.glob("*.md")}
    anchors = {page: {_slug(h) for h in found} for page, found in headings.items()}
    broken = []
    for path in _sources():
        where = path.relative_to(ROOT)
        for page, anchor in _pointers(path):
            if page not in anchors or (anchor and anchor not in anchors[page]):
                broken.append(f"{where}: docs/{page}#{anchor}")
        for page, quoted, starred in NAMED.findall(path.read_text(encoding="utf-8")):
            if page in headings and not _is_section(page, quoted or starred, headings):
                broken.append(f"{where}: docs/{page}, {quoted or starred!r}")
    assert broken == []
