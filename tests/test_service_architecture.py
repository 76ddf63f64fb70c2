"""The service's floors, read from its imports with `ast` (lazy and `TYPE_CHECKING` imports
counted): the ground (`ground/`, `settings.py`), then `db`, then `domain` and `http` side by
side, then `api`, then the application (`app.py`, `commands/`, `__main__.py`). Each floor
imports only floors below it: the domain raises the ground's errors and `http/` maps them to
responses, so neither imports the other.
"""

from __future__ import annotations

import pytest

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
