"""The service's floors, read from its imports with `ast` (lazy and `TYPE_CHECKING` imports
counted): the ground (`ground/`, `settings.py`), then `db`, then `domain` and `http` side by
side, then `api`, then the application (`app.py`, `commands/`, `__main__.py`). Each floor
imports only floors below it: the domain raises the ground's errors and `http/` maps them to
responses, so neither imports the other.

Within the floors, read from each module's syntax tree: the routes hold no transaction and no
query of their own (the use cases of `domain/use_cases/` do); the domain and `db/` raise no
HTTP error and import no web framework (a refusal names no status: `http/errors.py` gives it
one); and the domain names no SQL engine (its per-dialect statements live in `db/dialects.py`).
"""

from __future__ import annotations

import ast
import inspect
from collections.abc import Iterator
from pathlib import Path

import pytest

import audiencefilter.service

from .test_architecture import _module_graph

SERVICE = "audiencefilter.service."
FLOORS = {
    "ground": 0,
    "settings": 0,
    "db": 1,
    "domain": 2,
    "http": 2,
    "api": 3,
    "app": 4,
    "commands": 4,
    "__main__": 4,
}
TOP = 4
# No exception: a migration describes the tables of its revision itself, so later code cannot
# change what it does (migration 0004 fills memberships with the library's public API alone).
EXCEPTIONS: set[tuple[str, str]] = set()


def _floor(module: str) -> tuple[str, int]:
    part = module.removeprefix(SERVICE).split(".")[0]
    return part, FLOORS[part]


def _edges() -> list[tuple[str, str]]:
    return [
        (module, target)
        for module, targets in _module_graph().items()
        if module.startswith(SERVICE)
        for target in targets
        if target.startswith(SERVICE)
    ]


def test_every_service_module_stands_on_a_floor() -> None:
    for module, _ in _edges():
        assert module.removeprefix(SERVICE).split(".")[0] in FLOORS, module


@pytest.mark.parametrize("floor", sorted(FLOORS))
def test_a_floor_imports_only_floors_below_it(floor: str) -> None:
    wrong = []
    for module, target in _edges():
        (name, level), (target_name, target_level) = _floor(module), _floor(target)
        if name != floor or name == target_name or (module, target) in EXCEPTIONS:
            continue
        # The top floor (the application and its commands) is one floor in several modules.
        if target_level > level or (target_level == level and level < TOP):
            wrong.append(f"{module} -> {target}")
    assert not wrong, wrong


SERVICE_DIRECTORY = Path(audiencefilter.service.__file__).parent
ROUTES = sorted((SERVICE_DIRECTORY / "api" / "routes").glob("*.py"))
COMMANDS = sorted((SERVICE_DIRECTORY / "commands").glob("*.py"))
RULES = sorted(
    [*(SERVICE_DIRECTORY / "domain").rglob("*.py"), *(SERVICE_DIRECTORY / "db").glob("*.py")]
)
# What a route may not import: queries and transactions are the use cases' (`db.models`, for
# the types of what a use case answers, and `db.engine`, for the readiness probe, are allowed).
ROUTE_FORBIDDEN_IMPORTS = ("sqlalchemy", "db.queries", "db.bulk", "db.dialects")
# What a route may not call: a session's or a database's transaction and statements.
ROUTE_FORBIDDEN_CALLS = frozenset(
    {
        "begin",
        "begin_nested",
        "commit",
        "rollback",
        "flush",
        "execute",
        "scalar",
        "scalars",
        "transaction",
        "reading",
        "session",
        "connection",
    }
)
HTTP_ERRORS = frozenset({"ApiError", "HTTPException", "RequestValidationError"})
WEB_FRAMEWORKS = ("fastapi", "starlette")


def _tree(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), str(path))


def _imported(tree: ast.Module) -> Iterator[tuple[str, str]]:
    """(module, name) of every import, lazy ones included; relative modules keep their dots
    stripped (`...db.queries` is `db.queries`)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from ((alias.name, "") for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            module = node.module or ""
            yield from ((module, alias.name) for alias in node.names)


def _name(path: Path) -> str:
    return str(path.relative_to(SERVICE_DIRECTORY))


@pytest.mark.parametrize("route", ROUTES, ids=_name)
def test_a_route_imports_no_query_and_no_sqlalchemy(route: Path) -> None:
    wrong = [
        f"{module} {name}".strip()
        for module, name in _imported(_tree(route))
        if module.startswith(ROUTE_FORBIDDEN_IMPORTS)
        or f"{module}.{name}".endswith(ROUTE_FORBIDDEN_IMPORTS)
    ]
    assert not wrong, wrong


@pytest.mark.parametrize("route", ROUTES + COMMANDS, ids=_name)
def test_a_route_opens_no_transaction_and_runs_no_statement(route: Path) -> None:
    """Its handlers call a use case; the session, its transaction and statements are there.
    The commands (`keys ...`, `demo`, `sweep`) call the same use cases, held alike."""
    calls = [
        f"line {line}: .{name}()"
        for line, name in _method_calls(_tree(route))
        if name in ROUTE_FORBIDDEN_CALLS
    ]
    assert not calls, calls


def _method_calls(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, name) of every call of an attribute: `session.execute(...)` is `execute`."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            yield node.lineno, node.func.attr


def _raised_names(tree: ast.Module) -> Iterator[tuple[int, str]]:
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise) and node.exc is not None:
            target = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
            if isinstance(target, ast.Name):
                yield node.lineno, target.id
            elif isinstance(target, ast.Attribute):
                yield node.lineno, target.attr


@pytest.mark.parametrize("module", RULES, ids=_name)
def test_the_domain_and_db_raise_no_http_error(module: Path) -> None:
    """A refusal is a domain exception (`NotFound`, `Conflict`, `Invalid`...), whose status
    only `http/errors.py` knows: no web framework, no HTTP error, raised or imported."""
    tree = _tree(module)
    imported = [
        f"{name} from {source}"
        for source, name in _imported(tree)
        if source.split(".")[0] in WEB_FRAMEWORKS or name in HTTP_ERRORS
    ]
    raised = [f"line {line}: {name}" for line, name in _raised_names(tree) if name in HTTP_ERRORS]
    assert not imported and not raised, imported + raised


@pytest.mark.parametrize("module", sorted((SERVICE_DIRECTORY / "domain").rglob("*.py")), ids=_name)
def test_the_domain_names_no_sql_engine(module: Path) -> None:
    """What differs between engines is `db/dialects.py`'s: the domain passes a dialect's name
    through (`dialect_of(session)`) and never compares it."""
    engines = {"sqlite", "postgresql", "mysql", "mariadb"}
    named = [
        f"line {node.lineno}: {node.value!r}"
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.Constant) and node.value in engines
    ]
    assert not named, named


def test_the_checks_read_what_they_mean_to() -> None:
    """The rules above would pass vacuously on an empty list or on a blind walker."""
    assert len(ROUTES) >= 10 and any("use_cases" in str(path) for path in RULES)
    bad = ast.parse(
        "from sqlalchemy import select\n"
        "def handler(database):\n"
        "    with database.transaction() as session:\n"
        "        raise ApiError(404, 'x')\n"
    )
    assert [module for module, _ in _imported(bad)] == ["sqlalchemy"]
    assert [name for _, name in _raised_names(bad)] == ["ApiError"]
    assert [name for _, name in _method_calls(bad)] == ["transaction"]


def test_the_refusals_below_http_carry_no_status() -> None:
    """The exceptions the domain and `db/` raise (`ground/errors.py`) say what kind of refusal
    they are, never an HTTP status: `http/errors.STATUSES` is the one mapping."""
    from audiencefilter.service.ground import errors
    from audiencefilter.service.http.errors import STATUSES

    raised = [
        value
        for value in vars(errors).values()
        if isinstance(value, type) and issubclass(value, Exception)
    ]
    assert raised and all(issubclass(kind, errors.DomainError) for kind in raised)
    for kind in raised:
        assert "status" not in inspect.signature(kind).parameters, kind
        assert kind is errors.DomainError or any(issubclass(kind, k) for k in STATUSES), kind
