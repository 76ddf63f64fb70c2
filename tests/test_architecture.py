"""The import rules of docs/architecture.md, read from every module's source with `ast`.

Every import statement counts, including those inside functions (lazy imports) and under
`TYPE_CHECKING`: a type checker follows those too, and a lazy import is still a dependency.
"""

from __future__ import annotations

import ast
import functools
import importlib
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
    "audiencefilter.formats",  # other products' formats
    "audiencefilter.text",  # the package re-exports the reader
)
BACK_ENDS = "audiencefilter.backends"
OUTSIDE_THE_LIBRARY = ("audiencefilter.service", "audiencefilter.cli")


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


@functools.cache
def _is_module(name: str) -> bool:
    if not name.startswith("audiencefilter."):
        return False
    relative = Path(*name.split(".")[1:])
    return (PACKAGE / relative).with_suffix(".py").exists() or (PACKAGE / relative).is_dir()


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
            for alias in node.names:
                name = f"{module}.{alias.name}"
                # `from package import module` imports the module, not the package's names.
                found.add(name if _is_module(name) else module)
                found.add(name)
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
    assert FACADE in MODULES["audiencefilter.testing"]


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
    assert users <= {FACADE, "audiencefilter.explain", "audiencefilter.rewrite.simplify"}


def _module_graph() -> dict[str, set[str]]:
    """Each module's imports narrowed to modules (a `from x import name` of a non-module
    counts as `x`), lazy and `TYPE_CHECKING` imports included."""
    graph: dict[str, set[str]] = {}
    for module, imported in MODULES.items():
        targets = set()
        for name in imported:
            while name and name not in MODULES:
                name = name.rpartition(".")[0]
            if name and name != module:
                targets.add(name)
        graph[module] = targets
    return graph


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles_lazy_and_type_checking_imports_counted() -> None:
    """A package and the modules it re-exports are no exception: every cycle is listed."""
    assert _cycles(_module_graph()) == []


SCRIPTS = ("benchmarks", "drills")
REPOSITORY = Path(__file__).resolve().parents[1]


def _script_graph() -> dict[str, set[str]]:
    """The benchmarks' and drills' modules and which of them each imports (lazily too)."""
    paths = {
        _dotted(path.relative_to(REPOSITORY)): path
        for package in SCRIPTS
        for path in sorted((REPOSITORY / package).rglob("*.py"))
    }
    graph: dict[str, set[str]] = {}
    for module, path in paths.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        named = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom):
                base = package if node.level else node.module or ""
                base = f"{base}.{node.module}" if node.level and node.module else base
                named |= {base} | {f"{base}.{alias.name}" for alias in node.names}
            elif isinstance(node, ast.Import):
                named |= {alias.name for alias in node.names}
        graph[module] = {name for name in named if name in paths and name != module}
    return graph


def _dotted(relative: Path) -> str:
    parts = list(relative.with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def test_no_import_cycles_in_the_benchmarks_and_drills() -> None:
    graph = _script_graph()
    assert "drills.common" in graph["drills.webhooks"]  # relative imports are read
    assert "benchmarks.spark_report" in graph["benchmarks.spark"]
    assert _cycles(graph) == []


def test_the_cycle_finder_finds_a_cycle() -> None:
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


PACKAGE_RULES = {
    # package: the library packages (and root modules) it may import
    "audiencefilter.language": {ERRORS},
    "audiencefilter.rewrite": {LANGUAGE, ERRORS},
    "audiencefilter.where": {LANGUAGE, ERRORS, "audiencefilter.excerpt"},
    "audiencefilter.text": {LANGUAGE, ERRORS, "audiencefilter.where", "audiencefilter.excerpt"},
    "audiencefilter.backends": {LANGUAGE, ERRORS, "audiencefilter.rewrite"},
    # Other products' formats: readers and writers beside `where` and `text`.
    "audiencefilter.formats": {
        LANGUAGE,
        ERRORS,
        "audiencefilter.where",
        "audiencefilter.text",
        "audiencefilter.excerpt",
    },
}


@pytest.mark.parametrize("package", sorted(PACKAGE_RULES))
def test_each_package_imports_only_the_packages_below_it(package: str) -> None:
    """Readers (`where`, `text`) build trees and never reach the facade, a back-end or the root
    package; back-ends never reach a reader, the facade or the root; the language reaches
    nothing but errors. Stated over packages, so a new module is held to them at once."""
    allowed = PACKAGE_RULES[package]
    wrong = {
        f"{module} -> {target}"
        for module, targets in _module_graph().items()
        if _within(module, package)
        for target in targets
        if not _within(target, package, *allowed)
    }
    assert not wrong, sorted(wrong)


#: The back-end families (docs/architecture.md, The packages): each a folder of `backends/`, and the
#: families each may import. A family imports none above it: the set's logic compiles its
#: conditions with the in-memory compiler, the frame engines write Spark SQL's conditions with
#: its dialect, and every back-end that reads storage names columns by `naming.py`.
BACK_END_FAMILIES = {
    "memory": set(),
    "filter_set": {"memory"},
    "frames": {"sql", "naming"},
    "sql": {"naming"},
    "django": {"sql", "naming"},
    "naming": set(),
}
#: What may sit in `backends/` outside a family folder: the shared column naming.
LOOSE_BACK_END_MODULES = {"naming"}


def test_back_ends_sit_in_family_folders() -> None:
    backends = PACKAGE / "backends"
    loose = {p.stem for p in backends.glob("*.py")} - LOOSE_BACK_END_MODULES - {"__init__"}
    assert not loose, f"back-end modules outside a family folder: {sorted(loose)}"
    folders = {p.name for p in backends.iterdir() if (p / "__init__.py").exists()}
    assert folders == set(BACK_END_FAMILIES) - LOOSE_BACK_END_MODULES


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if parts[:2] == ["audiencefilter", "backends"] and len(parts) > 2 else None


@pytest.mark.parametrize("family", sorted(BACK_END_FAMILIES))
def test_each_back_end_family_imports_only_the_families_below_it(family: str) -> None:
    """`frames/` never reads `memory/`, `memory/` reads no other family, `filter_set/` reads
    only `memory/`: a family can be moved or dropped with the ones below it."""
    wrong = {
        f"{module} -> {target}"
        for module, targets in MODULES.items()
        if _family(module) == family
        for target in targets
        if _family(target) not in (None, family, *BACK_END_FAMILIES[family])
    }
    assert not wrong, sorted(wrong)


CEL = "audiencefilter.formats.cel"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, "audiencefilter.formats")])
def test_the_formats_shared_modules_never_import_cel(module: str) -> None:
    """`formats/cel/` is one format over the formats' shared helpers (folding, logic,
    declared fields, refusals); those helpers and the other formats know nothing of it."""
    if _within(module, CEL):
        return
    wrong = {m for m in MODULES[module] if _within(m, CEL)}
    assert not wrong, f"{module} imports {sorted(wrong)}"


SERVICE = "audiencefilter.service"


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, SERVICE)])
def test_the_service_uses_only_the_public_api(module: str) -> None:
    """The service is built on what users get: `audiencefilter` and the names in its
    `__all__`, never a module of the library."""
    wrong = {m for m in MODULES[module] if _within(m, "audiencefilter") and not _within(m, SERVICE)}
    wrong -= {"audiencefilter"} | {f"audiencefilter.{name}" for name in audiencefilter.__all__}
    assert not wrong, f"{module} imports {sorted(wrong)}"


CLI = "audiencefilter.cli"
# The public submodules the CLI may import from besides `audiencefilter` (docs/api.md).
CLI_PUBLIC_SUBMODULES = ("audiencefilter.testing",)


def _public_names() -> set[str]:
    """What a user may import: the package and its `__all__`, each public submodule and its
    `__all__` (`from audiencefilter.testing import examples` reads as that name)."""
    names = {"audiencefilter"} | {f"audiencefilter.{name}" for name in audiencefilter.__all__}
    for submodule in CLI_PUBLIC_SUBMODULES:
        exported = importlib.import_module(submodule).__all__
        names |= {submodule} | {f"{submodule}.{name}" for name in exported}
    return names


@pytest.mark.parametrize("module", [m for m in MODULES if _within(m, CLI)])
def test_the_cli_uses_only_the_public_api(module: str) -> None:
    """The command line is a user of the library like the service: `audiencefilter`, the names
    in its `__all__` and the public submodules, never a module of the library."""
    wrong = {m for m in MODULES[module] if not _within(m, CLI)} - _public_names()
    assert not wrong, f"{module} imports {sorted(wrong)}"


def _af_attributes(path: Path) -> set[str]:
    """The names read as `af.<name>` in `path`."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        node.attr
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute)
        and isinstance(node.value, ast.Name)
        and node.value.id == "af"
    }


@pytest.mark.parametrize("path", sorted((PACKAGE / "cli").glob("*.py")), ids=lambda p: p.name)
def test_the_cli_reads_only_public_names_of_af(path: Path) -> None:
    """`af.backends.spark...` would reach a module through an attribute: only the public names
    (and the version) may follow `af.`."""
    allowed = set(audiencefilter.__all__) | {"__version__", "testing"}
    wrong = _af_attributes(path) - allowed
    assert not wrong, f"{path.name} reads af.{sorted(wrong)}"


FRAME_RULES = {
    "integer_bound",
    "out_of_range",
    "double_exact",
    "double_bound",
    "as_integer",
    "refused_nested",
    "relation_of",
    "value_schema",
    "Quantifier",
}
"""The number and relation rules: the frame core takes them, the engines' adapters do not."""


def _names_imported(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {
        alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom)
        for alias in node.names
    }


@pytest.mark.parametrize("adapter", ["polars.py", "spark.py"])
def test_the_frame_engines_take_number_and_relation_rules_from_the_core(adapter: str) -> None:
    path = PACKAGE / "backends" / "frames" / adapter
    assert "audiencefilter.backends.frames.core" in _imports(path)
    assert _names_imported(path) & FRAME_RULES == set()


#: What the frame core reads of a frame's types once for every engine: a field's column type
#: and a relation's struct field types; an engine says only how its list of structs looks.
FRAME_TYPE_LOOKUPS = {"dtype", "struct_dtypes"}


def test_the_frame_engines_read_column_types_through_the_core() -> None:
    defined = {
        path.name: {
            n.name
            for n in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
            if isinstance(n, ast.FunctionDef) and n.name in FRAME_TYPE_LOOKUPS
        }
        for path in (PACKAGE / "backends" / "frames").glob("*.py")
    }
    assert defined.pop("core.py") == FRAME_TYPE_LOOKUPS
    assert not any(defined.values()), defined


def test_the_frame_core_knows_no_engine() -> None:
    tree = ast.parse((PACKAGE / "backends" / "frames" / "core.py").read_text(encoding="utf-8"))
    imported = {
        alias.name for n in ast.walk(tree) if isinstance(n, ast.Import) for alias in n.names
    }
    imported |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {name for name in imported if name.split(".")[0] in ("polars", "pyspark")}
    core = PACKAGE / "backends" / "frames" / "core.py"
    assert FRAME_RULES - {"Quantifier"} <= _names_imported(core)
