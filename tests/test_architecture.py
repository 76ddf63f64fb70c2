"""The import rules of docs/architecture.md, read from every module's source with `ast`.

Every import statement counts, including those inside functions (lazy imports) and under
`TYPE_CHECKING`: a type checker follows those too, and a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import audiencefilter

PACKAGE = Path(audiencefilter.__file__).parent

LANGUAGE = "audiencefilter.language"
ERRORS = "audiencefilter.errors"
FACADE = "audiencefilter.filter"
READERS = (
    "audiencefilter.where.read",
    "audiencefilter.where.positions",
    "audiencefilter.text.read",
    "audiencefilter.text.grammar",
    "audiencefilter.text.errors",
    "audiencefilter.text",  # the package re-exports the reader
)
BACK_ENDS = "audiencefilter.backends"
OUTSIDE_THE_LIBRARY = ("audiencefilter.service", "audiencefilter.cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _imports(path: Path) -> set[str]:
    """The library modules `path` imports, relative imports resolved; `from x import y`
    counts as `x.y` as well, since `y` may be a module."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
                module = ".".join(base + ([node.module] if node.module else []))
            else:
                module = node.module or ""
            found.add(module)
            found.update(f"{module}.{alias.name}" for alias in node.names)
    return {m for m in found if m == "audiencefilter" or m.startswith("audiencefilter.")}


MODULES = {
    _module_name(path): _imports(path)
    for path in sorted(PACKAGE.rglob("*.py"))
    if "grammar" not in path.relative_to(PACKAGE).parts[:1]
}


def _within(module: str, *packages: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in packages)


def _library() -> list[str]:
    return [m for m in MODULES if not _within(m, *OUTSIDE_THE_LIBRARY)]


def test_the_import_reader_sees_the_whole_package() -> None:
    assert "audiencefilter.backends.sql.text" in MODULES
    assert "audiencefilter.language.nodes" in MODULES["audiencefilter.language.visitor"]
    assert FACADE in MODULES["audiencefilter.where.read"]


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, LANGUAGE)])
def test_the_language_imports_nothing_of_the_library_but_errors(module: str) -> None:
    outside = {m for m in MODULES[module] if not _within(m, LANGUAGE, ERRORS)}
    assert not outside, f"{module} imports {sorted(outside)}"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, "audiencefilter.rewrite")])
def test_rewrites_import_only_the_language(module: str) -> None:
    outside = {m for m in MODULES[module] if not _within(m, LANGUAGE, ERRORS, module)}
    outside = {m for m in outside if not _within(m, "audiencefilter.rewrite")}
    assert not outside, f"{module} imports {sorted(outside)}"


@pytest.mark.parametrize("module", [m for m in MODULES if m in READERS or _within(m, *READERS)])
def test_readers_never_import_back_ends(module: str) -> None:
    wrong = {m for m in MODULES[module] if _within(m, BACK_ENDS)}
    assert not wrong, f"{module} imports {sorted(wrong)}"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, BACK_ENDS)])
def test_back_ends_never_import_the_facade_readers_or_the_service(module: str) -> None:
    wrong = {
        m
        for m in MODULES[module]
        if m in (FACADE, "audiencefilter") or m in READERS or _within(m, *OUTSIDE_THE_LIBRARY)
    }
    wrong |= {m for m in MODULES[module] if any(_within(m, r) for r in READERS[:-1])}
    assert not wrong, f"{module} imports {sorted(wrong)}"


@pytest.mark.parametrize("module", _library())
def test_the_library_never_imports_the_service_or_the_cli(module: str) -> None:
    wrong = {m for m in MODULES[module] if _within(m, *OUTSIDE_THE_LIBRARY)}
    assert not wrong, f"{module} imports {sorted(wrong)}"


def test_only_the_facade_lowers_for_the_back_ends() -> None:
    lowering = "audiencefilter.rewrite.lower"
    users = {m for m, imported in MODULES.items() if lowering in imported}
    # explain lowers each condition it shows; simplify shares lowering's list rules.
    assert users <= {FACADE, "audiencefilter.backends.explain", "audiencefilter.rewrite.simplify"}
