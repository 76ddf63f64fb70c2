"""The package as users install it: the package is on no index, so every install line of the
README and of the docs' "Needs:" notes names the repository's folder or the wheel built from
it, never the bare name (`pip install audiencefilter` fails). The wheel and the sdist are
built from the tree, the wheel is installed into a fresh virtual environment (no system
site-packages; its dependencies come from pip's configured index) and the README's first
Python example runs against it, not against this checkout."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import tarfile
import textwrap
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]

_INSTALL = re.compile(r"pip install (?:-e )?(?P<target>'[^']*'|\"[^\"]*\"|\S+)")


def _install_lines() -> list[tuple[str, str]]:
    """Each `pip install` of the package in the pages: (page, the target as written)."""
    found = []
    for page in PAGES:
        for match in _INSTALL.finditer(page.read_text(encoding="utf-8")):
            target = match["target"].strip("'\"`")
            if "audiencefilter" in target or target.startswith((".", "/")):
                found.append((page.name, target))
    return found


def test_every_install_line_names_the_repository_or_a_wheel() -> None:
    lines = _install_lines()
    assert len(lines) >= 10, lines
    wrong = [
        (page, target)
        for page, target in lines
        if not (target.startswith(("./", ".[", "path/to/")) or ".whl" in target)
    ]
    assert wrong == [], "install lines naming the package on an index it is not on"


def _build(out: Path) -> tuple[Path, Path]:
    """The wheel and the sdist: `python -m build --no-isolation` when the `build` package is
    there (the dev extra has it), else hatchling, the project's build backend, in process."""
    if importlib.util.find_spec("build") is not None:
        command = [sys.executable, "-m", "build", "--no-isolation", "--outdir", str(out), str(ROOT)]
        result = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)
        assert result.returncode == 0, result.stderr[-2000:]
    else:
        from hatchling.builders.sdist import SdistBuilder
        from hatchling.builders.wheel import WheelBuilder

        for builder in (WheelBuilder(str(ROOT)), SdistBuilder(str(ROOT))):
            list(builder.build(directory=str(out)))
    return next(out.glob("*.whl")), next(out.glob("*.tar.gz"))


def _index_options() -> list[str]:
    """Where the dependencies come from: pip's configured index, and where only extra
    indexes are configured (a local mirror), the first of them as the index, so that no
    unreachable default index is waited for."""
    listed = subprocess.run(
        [sys.executable, "-m", "pip", "config", "list"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    ).stdout
    found = dict(re.findall(r"^[^.\n]*\.(index-url|extra-index-url)='([^']*)'", listed, re.M))
    if "index-url" in found or "extra-index-url" not in found:
        return []
    first, *others = found["extra-index-url"].split()
    return ["--index-url", first, *(f"--extra-index-url={url}" for url in others)]


def _first_python_example() -> str:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    match = re.search(r"```python\n(.*?)```", readme, re.DOTALL)
    assert match is not None, "the README has no Python example"
    return match[1]


def test_the_wheel_installs_into_a_fresh_venv_and_runs_the_readme_example(
    tmp_path: Path,
) -> None:
    wheel, sdist = _build(tmp_path / "dist")
    with zipfile.ZipFile(wheel) as archive:
        assert "audiencefilter/grammar/filter.lark" in archive.namelist()
    with tarfile.open(sdist) as archive:
        names = archive.getnames()
    assert any(name.endswith("/pyproject.toml") for name in names)
    assert any(name.endswith("/src/audiencefilter/grammar/filter.lark") for name in names)

    # No pip inside the venv (ensurepip alone takes longer than the rest): this pip installs
    # into it (`--python`), with the index it is configured with.
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    install = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q"]
    install += ["--no-input", *_index_options(), str(wheel)]
    result = subprocess.run(install, capture_output=True, text=True, timeout=300, check=False)
    if result.returncode != 0 and "No matching distribution" in result.stderr:
        pytest.skip(f"the dependencies cannot be reached from here: {result.stderr[-300:]}")
    assert result.returncode == 0, result.stderr[-2000:]

    example = tmp_path / "example.txt"
    example.write_text(_first_python_example(), encoding="utf-8")
    code = textwrap.dedent(
        f"""
        import doctest, pathlib, sys
        import audiencefilter
        where = pathlib.Path(audiencefilter.__file__).resolve()
        assert where.is_relative_to(pathlib.Path({str(venv)!r}).resolve()), where
        result = doctest.testfile({str(example)!r}, module_relative=False)
        sys.exit(1 if result.failed or not result.attempted else 0)
        """
    )
    ran = subprocess.run(
        [str(python), "-I", "-c", code], capture_output=True, text=True, timeout=120, check=False
    )
    assert ran.returncode == 0, ran.stdout[-2000:] + ran.stderr[-2000:]
