"""The service's floors, read from its imports with `ast` (lazy and `TYPE_CHECKING` imports
counted): the ground (`ground/`, `settings.py`), then `db`, then `domain` and `http` side by
side, then `api`, then the application (`app.py`, `commands/`, `__main__.py`). Each floor
imports only floors below it: the domain raises the ground's errors and `http/` maps them to
responses, so neither imports the other.

Within the floors, read from each module's syntax tree: the routes hold no transaction and no
query of their own (the use cases of `domain/use_cases/` do); the domain and `db/` raise no
HTTP error and import no web framework (a refusal names no status: `http/errors.py` gives it
one); and the domain names no SQL engine (its per-dialect statements live in `db/dialects.py`).
The API hands the domain no function of its own (the import's rows were once read by a route's
callback the use case called back), and the import's API modules hold no rule of a row.
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


DOMAIN_MODULES = sorted((SERVICE_DIRECTORY / "domain").rglob("*.py"))
#: HTTP's names for the parts of a request, as a JSON pointer starts with them.
REQUEST_PARTS = ("/body", "/query")


@pytest.mark.parametrize("module", DOMAIN_MODULES, ids=_name)
def test_the_domain_writes_no_pointer_into_the_request(module: Path) -> None:
    """The domain says where a problem is with a path in the request's document
    (`RequestProblem(("contactIds", 3), ...)`); `http/errors.py` alone writes it as a JSON
    pointer (`/body/contactIds/3`), escaping each key once: no module of the domain spells a
    pointer into the body or the query, in code or in words."""
    text = module.read_text(encoding="utf-8")
    found = [part for part in REQUEST_PARTS if part in text]
    assert not found, found


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


# ---- the list's write path: one door ---------------------------------------------------------

DOOR = SERVICE_DIRECTORY / "domain" / "list_lock.py"
SERVICE_MODULES = sorted(SERVICE_DIRECTORY.rglob("*.py"))
# What takes a list's lock: the advisory lock's statement (`db/dialects.advisory_lock`), a write
# of the counter's row (`event_heads`, whose row lock serialises a list's appends), or the SQL
# of either spelled out.
LOCK_SQL = ("pg_advisory", "event_heads")
COUNTER = "EventHead"
WRITES = frozenset({"update", "insert", "delete"})
SQL = ("SELECT", "UPDATE", "INSERT", "DELETE", "WITH")


def _locks_taken(tree: ast.Module) -> Iterator[tuple[int, str]]:
    """(line, what) of every way this module takes a list's lock: the advisory lock asked of
    the dialects, the counter's row written (`update(EventHead)`...), or their SQL in a string
    (a docstring naming them, or a model's `__tablename__`, is no lock)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            name = node.func.attr if isinstance(node.func, ast.Attribute) else ""
            name = node.func.id if isinstance(node.func, ast.Name) else name
            if name == "advisory_lock":
                yield node.lineno, "advisory_lock()"
            elif name in WRITES and any(_names(arg, COUNTER) for arg in node.args):
                yield node.lineno, f"{name}({COUNTER})"
        elif isinstance(node, ast.Constant) and isinstance(node.value, str):
            if node.value.lstrip().upper().startswith(SQL) and any(
                sql in node.value for sql in LOCK_SQL
            ):
                yield node.lineno, repr(node.value[:40])


def _names(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(node))


# Where the lock's pieces are defined, not taken: the statements (`db/dialects.py`) and the
# migrations that create the counter's table (and fill it once, at their revision).
LOCK_DEFINED = ("db/dialects.py", "db/migrations/")


@pytest.mark.parametrize("module", SERVICE_MODULES, ids=_name)
def test_only_the_door_takes_a_lists_lock(module: Path) -> None:
    """Every writer of a list passes `domain/list_lock.py` (`take`, `share`, `advance`,
    `locked_*`): nothing else asks for the advisory lock or writes the counter's row, so the
    order in which writers of one list are serialised is decided in one place."""
    if module == DOOR or _name(module).startswith(LOCK_DEFINED):
        return
    taken = [f"line {line}: {what}" for line, what in _locks_taken(_tree(module))]
    assert not taken, taken


def test_the_door_rule_sees_a_lock_taken_elsewhere() -> None:
    """The rule above fails on each way of taking the lock outside the door."""
    bad = ast.parse(
        "def write(session, list_id):\n"
        "    session.execute(dialects.advisory_lock('postgresql', shared=False))\n"
        "    session.execute(update(EventHead).values(position=EventHead.position))\n"
        "    session.execute(text('SELECT pg_advisory_xact_lock(:k)'))\n"
    )
    assert sorted(line for line, _ in _locks_taken(bad)) == [2, 3, 4]
    assert [what for _, what in _locks_taken(_tree(DOOR))]  # the door does take it


def _domain_imports(module: Path) -> set[str]:
    """The domain modules `module` imports (`from .. import events` is `events`)."""
    found: set[str] = set()
    for source, name in _imported(_tree(module)):
        parts = [part for part in f"{source}.{name}".split(".") if part]
        found.update(parts)
    return found


DOMAIN = SERVICE_DIRECTORY / "domain"
APART = [
    # The feed reads events; the outbox writes them: neither needs the other.
    ("event_feed.py", "events"),
    ("events.py", "event_feed"),
    # The door stands below everything that writes a list.
    ("list_lock.py", "events"),
    ("list_lock.py", "write_effects"),
    ("list_lock.py", "membership"),
    # Judging decides; storing writes what was decided.
    ("membership/judge.py", "store"),
    ("membership/judge.py", "events"),
    # A PATCH and an import turn talk to their list's write (`list_write.py`), whose stages
    # call the membership and the events: not to those themselves.
    ("use_cases/contacts.py", "membership"),
    ("contact_import.py", "membership"),
    ("contact_import.py", "write_effects"),
]


@pytest.mark.parametrize(("module", "forbidden"), APART, ids=[f"{m}-{f}" for m, f in APART])
def test_the_write_path_modules_stay_apart(module: str, forbidden: str) -> None:
    assert forbidden not in _domain_imports(DOMAIN / module)


@pytest.mark.parametrize("module", SERVICE_MODULES, ids=_name)
def test_the_service_imports_its_own_modules_by_their_names(module: Path) -> None:
    """No `from .x import y as z` inside the service: an alias kept an old flat name alive
    (`membership_store` for `membership/store.py`) or re-exported a name from a floor below."""
    aliased = [
        f"line {node.lineno}: {alias.name} as {alias.asname}"
        for node in ast.walk(_tree(module))
        if isinstance(node, ast.ImportFrom) and node.level > 0
        for alias in node.names
        if alias.asname is not None
    ]
    assert not aliased, aliased


# ---- an import's rows: read in the domain, never by a callback of the API --------------------

API_MODULES = sorted((SERVICE_DIRECTORY / "api").rglob("*.py"))
IMPORT_MODULES = [SERVICE_DIRECTORY / "api" / "routes" / "imports.py"]
IMPORT_MODULES.append(SERVICE_DIRECTORY / "api" / "csv_import.py")


def _domain_names(tree: ast.Module) -> set[str]:
    """The names a module binds to the domain: its modules (`from ...domain.use_cases import
    imports`) and what it imports from them (`from ...domain.import_rows import read`)."""
    return {
        alias.asname or alias.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and "domain" in (node.module or "").split(".")
        for alias in node.names
    }


def _is_domain(node: ast.expr, domain: set[str]) -> bool:
    """Whether `node` names something of the domain: `imports`, `imports.run`, `a.b.c`."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return isinstance(node, ast.Name) and node.id in domain


def _callbacks_into_the_domain(tree: ast.Module) -> Iterator[tuple[int, str, str]]:
    """(line, domain callee, own function) of every call of the domain, direct (`imports.run(
    job, _row, writes)`) or through a runner (`run_in_threadpool(imports.run, job, _row)`),
    that passes a function this module defines as an argument."""
    own = {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    domain = _domain_names(tree)
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        runs = [arg for arg in node.args[:1] if _is_domain(arg, domain)]
        callee = node.func if _is_domain(node.func, domain) else next(iter(runs), None)
        if callee is None:
            continue
        for arg in [*node.args, *(keyword.value for keyword in node.keywords)]:
            if isinstance(arg, ast.Name) and arg.id in own:
                yield node.lineno, ast.unparse(callee), arg.id


@pytest.mark.parametrize("module", API_MODULES, ids=_name)
def test_the_api_hands_the_domain_no_function_of_its_own(module: Path) -> None:
    """The domain reads what it is given itself (an import's rows: `domain/import_rows.py`):
    no rule of the API comes back into it as a callback, so a rule has one floor."""
    passed = [
        f"line {line}: {callee}(... {name} ...)"
        for line, callee, name in _callbacks_into_the_domain(_tree(module))
    ]
    assert not passed, passed


def test_the_callback_rule_sees_the_old_row_reader() -> None:
    """The rule above fails on the shape the import had (the route's `_row` handed to the use
    case), directly or through a thread pool, and passes a value that is no function."""
    bad = ast.parse(
        "from ...domain.use_cases import imports\n"
        "def _row(number, value, lst):\n"
        "    return value\n"
        "def handler(job, writes):\n"
        "    imports.run(job, _row, writes)\n"
        "    run_in_threadpool(imports.run, job, read_row=_row)\n"
        "    imports.run(job, writes)\n"
    )
    found = list(_callbacks_into_the_domain(bad))
    assert found == [(5, "imports.run", "_row"), (6, "imports.run", "_row")], found
    assert API_MODULES and all(_domain_names(_tree(module)) for module in IMPORT_MODULES)


ROW_RULE_IMPORTS = frozenset({"ValidationError", "ContactImportRow", "TypeAdapter"})
ROW_RULE_CALLS = frozenset({"model_validate", "model_validate_json", "validate_python"})


def _row_rules(tree: ast.Module) -> Iterator[str]:
    """What reads a row's fields: pydantic's errors or the row's model imported, a model's
    validation called."""
    for source, name in _imported(tree):
        if name in ROW_RULE_IMPORTS:
            yield f"{name} from {source}"
    for line, name in _method_calls(tree):
        if name in ROW_RULE_CALLS:
            yield f"line {line}: .{name}()"


@pytest.mark.parametrize("module", IMPORT_MODULES, ids=_name)
def test_the_api_of_the_imports_holds_no_row_rule(module: Path) -> None:
    """The import's API modules decode bytes and map answers: a row's fields and a CSV file's
    cells are read in the domain (`import_rows.py`, `csv_rows.py`)."""
    rules = list(_row_rules(_tree(module)))
    assert not rules, rules


def test_the_row_rule_sees_a_row_read_in_the_api() -> None:
    bad = ast.parse(
        "from pydantic import ValidationError\n"
        "from ..schemas.resources import ContactImportRow\n"
        "def _problems(value):\n"
        "    return ContactImportRow.model_validate(value)\n"
    )
    assert len(list(_row_rules(bad))) == 3
