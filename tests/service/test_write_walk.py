"""A list's write walks one pipeline, measured as it runs: its stages in order, never up into
`api/`, and its returns held where they are.

A PATCH of a contact and an import turn are one write of different sizes (`domain/list_write.py`:
the list's lock, then the batch's fields, its events, its judgement and what is stored of it, in
that order). These tests run a real PATCH and a real JSON import on SQLite through the app with
a profiler on every thread (`threading.setprofile`; a fresh app, so its threads start under
it), from the use case's entrance to its end, the second such write of the process (the first
builds statements and caches once, which depend on what ran before in the process), and
record:

- the service's modules in the order calls enter them, consecutive calls within one module
  collapsed, and the *returns*: a module entered again after the walk had left it;
- every call of a function of `api/` made from a frame of the domain (there must be none: the
  HTTP floor stands above the domain);
- the handle's stages called, in their order: the same for a PATCH and for an import.

The returns count every module of the service the walk calls, down to `db/dialects.py` and
`ground/clock.py`, but not what SQLAlchemy calls back, with all it calls in turn (the listeners
of every statement, the write meter and the prepared statements' mirror, and the column types'
conversions: `db/`), which are no step of the walk. Most of them
are the judgement's and the store's own (their helpers called in turn). On the commit before
the pipeline a PATCH's walk made 105 returns, a 3-row JSON import's 165 and a CSV import's
batch 146; the handle's stages add a few (the handle calls a stage's module and takes the walk
back), so the bounds below hold today's walk from growing while the stages' insides are
reworked.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from audiencefilter.service import create_app

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

SERVICE = "audiencefilter.service."
DOMAIN = SERVICE + "domain"
API = SERVICE + "api"
HANDLE = DOMAIN + ".list_write"
STAGES = ("for_contact", "for_contacts", "for_list", "update_contact", "wrote")
STAGES += ("effects", "judge", "store")
PATCH_RETURNS = 90
"""A PATCH's returns: 105 before the pipeline, 112 with it, both the first write of a fresh
process (statements built on first use counted); 99 for a write after a first (`skip`); 85 with
what SQLAlchemy calls back left out (below); 88 with its fixed statements run on the driver's
cursor (`db/driver_path.py`, entered by each where SQLAlchemy was); 90 with its door's list
made from the row the driver path read (`driver_path.loaded`, not the ORM's loading)."""
IMPORT_RETURNS = 137
"""A 3-row JSON import's returns: 165 before the pipeline, 176 with it, 185 with its rows read
in the domain (`import_rows.py`, entered once a row), first writes; 181 after a first; 136 with
what SQLAlchemy calls back left out; 137 with the driver path (its memberships' insert)."""
CSV_RETURNS = 126
"""A 2-row CSV import's batch: 146 before the pipeline, 165 with it, first writes; 164 after a
first; 125 with what SQLAlchemy calls back left out; 126 with the driver path."""


def returns(modules: list[str]) -> int:
    """How many times `modules` (consecutive repeats collapsed) enters a module it had left."""
    walk = collapsed(modules)
    left: set[str] = set()
    count = 0
    for before, now in zip(walk, walk[1:], strict=False):
        left.add(before)
        count += now in left
    return count


def collapsed(modules: list[str]) -> list[str]:
    return [m for i, m in enumerate(modules) if i == 0 or modules[i - 1] != m]


@dataclass
class Walk:
    """The service's modules entered by calls, in order, from `entrance`'s call to its end, on
    the thread that made it; every call of `api/` made from a frame of the domain; and the
    handle's stages called."""

    entrance: str
    skip: int = 0
    """Walks of the entrance to leave out first: the first write of a fresh process builds
    statements and caches once, which the walk of a write is not about."""
    modules: list[str] = field(default_factory=list)
    upward: list[str] = field(default_factory=list)
    stages: list[str] = field(default_factory=list)
    _thread: int | None = None
    _depth: int = 0
    _listening: int | None = None

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event not in ("call", "return"):
            return
        name = frame.f_globals.get("__name__", "")
        if not name.startswith(SERVICE) or not self._walking(frame, name, event):
            return
        self._depth += 1 if event == "call" else -1
        if self._listening is not None:  # inside a listener SQLAlchemy called back
            if event == "return" and self._depth < self._listening:
                self._listening = None
            return
        if event == "return":
            if self._depth <= 0 and self.skip:
                self.skip -= 1  # a warm-up walk: forgotten, the next call of the entrance counts
                self._thread, self.modules, self.upward, self.stages = None, [], [], []
            elif self._depth <= 0:
                self._thread = -1  # the entrance returned: the walk is over
            return
        function = frame.f_code.co_name
        caller = frame.f_back
        caller_name = "" if caller is None else caller.f_globals.get("__name__", "")
        if caller_name.startswith("sqlalchemy."):
            self._listening = self._depth  # a listener called on every statement: not a step
            return
        self.modules.append(name.removeprefix(SERVICE))
        if name == HANDLE and function in STAGES:
            self.stages.append(function)
        if name.startswith(API) and caller_name.startswith(DOMAIN):
            self.upward.append(f"{name}.{function}")

    def _walking(self, frame: FrameType, name: str, event: str) -> bool:
        """Whether this event is the walk's: its entrance's call starts it, on its thread."""
        if self._thread is None and event == "call":
            if f"{name}.{frame.f_code.co_name}" == self.entrance:
                self._thread, self._depth = threading.get_ident(), 0
        return self._thread == threading.get_ident()

    @property
    def returns(self) -> int:
        return returns(self.modules)


@contextmanager
def walked(entrance: str, skip: int = 0) -> Iterator[Walk]:
    """Profiles this thread and every thread started meanwhile for `entrance`'s walk, the
    first `skip` walks left out."""
    walk = Walk(entrance, skip)
    threading.setprofile(walk.profile)
    sys.setprofile(walk.profile)
    try:
        yield walk
    finally:
        sys.setprofile(None)
        threading.setprofile(None)  # type: ignore[arg-type]


def _traced(tmp_path: Path, entrance: str, write: Callable[[Tenant, str, str], None]) -> Walk:
    """A fresh app (its threads started under the profiler), two lists alike, each with two
    smart audiences and a contact, and `write(tenant, list id, contact id)` on each: the
    first warms what a process builds once, the second's walk is traced."""
    settings = sqlite_settings(tmp_path / "walk.db", membership_sweep_seconds=0)
    with walked(entrance, skip=1) as walk:
        api = ApiClient(create_app(settings))
        try:
            tenant = make_tenant(api)
            for _ in range(2):
                list_id = tenant.new_list()["id"]
                for name, flt in (("French", 'country = "FR"'), ("Pointed", "points > 1")):
                    body = {"listId": list_id, "name": name, "filtersText": flt}
                    tenant.ok("POST", "/v4/audiences", 201, json=body)
                contact = tenant.new_contact(list_id, "walk@example.com")
                write(tenant, list_id, contact["id"])
        finally:
            api.close()
    assert walk.modules, "the write was not traced"
    return walk


def test_returns_count_a_module_entered_again_after_leaving_it() -> None:
    assert returns(["A", "B", "A", "B"]) == 2
    assert returns(["A", "A", "B", "B", "C"]) == 0
    assert returns(["A", "B", "C", "B", "A"]) == 2


def test_a_patch_is_a_batch_of_one_through_the_pipeline(tmp_path: Path) -> None:
    def patch(tenant: Tenant, list_id: str, contact_id: str) -> None:
        body = {"firstName": "Ada", "country": "FR"}
        tenant.ok("PATCH", f"/v4/contacts/{contact_id}", json=body)

    walk = _traced(tmp_path, DOMAIN + ".use_cases.contacts.update", patch)
    assert walk.stages == ["for_contact", "update_contact", "effects", "judge", "store"]
    assert walk.upward == []
    assert walk.returns <= PATCH_RETURNS, collapsed(walk.modules)


def test_a_json_import_walks_the_same_stages(tmp_path: Path) -> None:
    def imported(tenant: Tenant, list_id: str, contact_id: str) -> None:
        rows = [
            {"email": "walk@example.com", "firstName": "Ada"},
            {"email": "new@example.com", "country": "FR"},
            {"email": "other@example.com", "lastName": "Lovelace"},
        ]
        tenant.ok("POST", f"/v4/contacts/import?listId={list_id}&mode=upsert", json=rows)

    walk = _traced(tmp_path, DOMAIN + ".use_cases.imports.run", imported)
    entrances = [stage for stage in walk.stages if stage.startswith("for_")]
    assert entrances and set(entrances) == {"for_list"}
    assert walk.stages[len(entrances) :] == ["wrote", "effects", "judge", "store"]
    assert walk.upward == []
    assert walk.returns <= IMPORT_RETURNS, collapsed(walk.modules)


def test_a_csv_import_walks_the_same_stages(tmp_path: Path) -> None:
    """A CSV file is JSON imports of a batch each (`csv_imports.py`): the first batch's."""

    def imported(tenant: Tenant, list_id: str, contact_id: str) -> None:
        text = "email,firstName,country\nwalk@example.com,Ada,\nnew@example.com,,FR\n"
        query = {"listId": list_id, "mode": "upsert"}
        headers = {"Content-Type": "text/csv"}
        response = tenant.call(
            "POST", "/v4/contacts/import", params=query, content=text.encode(), headers=headers
        )
        assert response.status_code == 200, response.text

    walk = _traced(tmp_path, DOMAIN + ".use_cases.imports.run", imported)
    entrances = [stage for stage in walk.stages if stage.startswith("for_")]
    assert entrances and set(entrances) == {"for_list"}
    assert walk.stages[len(entrances) :] == ["wrote", "effects", "judge", "store"]
    assert walk.upward == []
    assert walk.returns <= CSV_RETURNS, collapsed(walk.modules)
