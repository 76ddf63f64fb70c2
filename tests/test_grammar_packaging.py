"""The grammar file is found the same way from a source checkout, a wheel and an sdist's wheel.

The package reads `audiencefilter/grammar/filter.lark`. In the repository that folder is a link
to the top-level `grammar/`; a wheel built from the tree follows the link, and an sdist stores
a copy where the link stands. These tests build both with the project's build backend.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tarfile
import zipfile
from pathlib import Path

import pytest

from audiencefilter.text.grammar import GRAMMAR_FILE, grammar_text

ROOT = Path(__file__).resolve().parent.parent
GRAMMAR = ROOT / "grammar" / GRAMMAR_FILE
IN_WHEEL = f"audiencefilter/grammar/{GRAMMAR_FILE}"


def test_the_installed_package_reads_the_repository_grammar() -> None:
    import audiencefilter

    if not Path(audiencefilter.__file__).resolve().is_relative_to(ROOT):
        pytest.skip("audiencefilter is not installed from this checkout")
    assert grammar_text() == GRAMMAR.read_text(encoding="utf-8")


def _build(target: str, root: Path, out: Path) -> Path:
    """Build with hatchling in-process, or with pip (which fetches it) when it is absent."""
    try:
        from hatchling.builders.sdist import SdistBuilder
        from hatchling.builders.wheel import WheelBuilder
    except ImportError:
        if target == "sdist":
            pytest.skip("hatchling is not installed: no sdist without it")
        result = subprocess.run(
            [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", str(out), str(root)],
            capture_output=True,
            text=True,
            timeout=300,
            check=False,
        )
        if result.returncode != 0:
            pytest.skip(f"the build backend cannot be reached: {result.stderr[-300:]}")
        return next(out.glob("*.whl"))
    builder = WheelBuilder(str(root)) if target == "wheel" else SdistBuilder(str(root))
    return Path(next(iter(builder.build(directory=str(out)))))


def test_a_wheel_built_from_the_tree_ships_the_grammar_where_the_loader_reads(
    tmp_path: Path,
) -> None:
    wheel = _build("wheel", ROOT, tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(IN_WHEEL).decode("utf-8") == GRAMMAR.read_text(encoding="utf-8")
        archive.extractall(tmp_path / "site")
    # Import the package from the unpacked wheel, not from the checkout, and parse with it.
    site = str(tmp_path / "site")
    code = (
        "import audiencefilter as af, pathlib; "
        f"assert pathlib.Path(af.__file__).is_relative_to({site!r}), af.__file__; "
        "print(af.parse_text('points >= 100 and email contains \"gmail\"').to_json())"
    )
    env = {**os.environ, "PYTHONPATH": str(tmp_path / "site")}
    result = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == '{"points":{"gte":100},"email":{"contains":"gmail"}}\n'


def test_a_wheel_built_from_the_sdist_ships_the_grammar_too(tmp_path: Path) -> None:
    sdist = _build("sdist", ROOT, tmp_path / "sdist")
    with tarfile.open(sdist) as archive:
        archive.extractall(tmp_path / "unpacked", filter="data")
    (source,) = (tmp_path / "unpacked").iterdir()
    wheel = _build("wheel", source, tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        assert archive.read(IN_WHEEL).decode("utf-8") == GRAMMAR.read_text(encoding="utf-8")
