"""The documentation site builds with warnings as errors, its API reference from the docstrings.

`mkdocs build --strict` (mkdocs.yml at the root, the `docs` extra): a broken link between
pages, a page missing from the navigation or a docstring the reference cannot read fails the
suite, so CI builds the site on every run.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent


def _mkdocs_or_skip() -> None:
    if importlib.util.find_spec("mkdocs") is None:
        if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS"):
            pytest.fail("mkdocs is not installed: pip install -e '.[dev]' (the docs extra)")
        pytest.skip("mkdocs is not installed (the docs extra)")


def test_the_docs_site_builds_strictly_with_the_api_reference(tmp_path: Path) -> None:
    _mkdocs_or_skip()
    site = tmp_path / "site"
    built = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        check=False,
    )
    assert built.returncode == 0, built.stderr[-4000:]
    reference = (site / "api" / "index.html").read_text(encoding="utf-8")
    # Generated from docstrings: the words are the code's, not the page's.
    assert "Read a where clause into a validated" in reference  # parse
    assert "The annotated type of a model field holding a filter" in reference  # FilterField
    assert (site / "guide" / "index.html").exists()


def test_every_page_is_in_the_navigation_and_names_its_extra() -> None:
    config = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for page in sorted((ROOT / "docs").glob("*.md")):
        assert page.name in config, f"{page.name} is missing from mkdocs.yml's nav"
        if page.name != "api.md":
            third = page.read_text(encoding="utf-8").split("\n")[2]
            assert "extra" in third or "library alone" in third, f"{page.name}: which extra?"
