"""Mixed reads and writes: the service's final state equals the operations it acknowledged.

Clients create contacts, add and delete actions (points), patch, read and delete contacts, at
random and at once. Each client changes only the contacts it created, so their history is
sequential and a plain model can follow it; all clients also add actions to a few shared *hot*
contacts, whose points change only by additions, which commute: lost updates there would show as
a wrong sum. Every operation must be acknowledged (a 2xx); the model applies exactly the
acknowledged ones. A client reading one of its own contacts must see exactly the model's points
and name (read-your-writes). At the end the list is read back through the API: the same ids, and
for each the same points and first name, or the drill fails.
"""

from __future__ import annotations

import random
import threading
import time
from collections import Counter
from contextlib import AbstractContextManager
from dataclasses import dataclass, field
from typing import Any

import httpx

from . import backends
from .common import Context, Row, rate, row
from .service import (
    UNLIMITED,
    Service,
    client,
    create_key,
    create_list,
    expect,
    migrate,
    running,
)

HOT_CONTACTS = 10


@dataclass
class Contact:
    points: int
    first_name: str
    actions: dict[str, int] = field(default_factory=dict)  # action id -> increase


class Model:
    """The state the acknowledged operations imply."""

    def __init__(self) -> None:
        self.contacts: dict[str, Contact] = {}
        self.lock = threading.Lock()
        self.acknowledged: Counter[str] = Counter()
        self.refused: Counter[str] = Counter()
        self.stale_reads = 0

    def add_points(self, contact_id: str, amount: int) -> None:
        with self.lock:
            self.contacts[contact_id].points += amount


class Worker:
    def __init__(self, number: int, service: Service, key: str, list_id: str, model: Model):
        self.number, self.service, self.key, self.list_id = number, service, key, list_id
        self.model = model
        self.rng = random.Random(number)
        self.own: list[str] = []
        self.hot: list[str] = []
        self.hot_actions: list[tuple[str, str, int]] = []  # action id, contact id, increase
        self.created = 0

    def _ok(self, operation: str, response: httpx.Response, status: int) -> bool:
        with self.model.lock:
            if response.status_code == status:
                self.model.acknowledged[operation] += 1
                return True
            self.model.refused[f"{operation} {response.status_code}"] += 1
            return False

    def create(self, api: httpx.Client) -> None:
        self.created += 1
        email = f"mixed{self.number}-{self.created}@drill.example"
        points, name = self.rng.randrange(0, 50), f"N{self.rng.randrange(1000)}"
        body = {"email": email, "listId": self.list_id, "points": points, "firstName": name}
        response = api.post("/v4/contacts", json=body)
        if self._ok("create", response, 201):
            contact_id = response.json()["data"]["contact"]["id"]
            with self.model.lock:
                self.model.contacts[contact_id] = Contact(points, name)
            self.own.append(contact_id)

    def add_action(self, api: httpx.Client) -> None:
        hot = not self.own or self.rng.random() < 0.5
        target = self.rng.choice(self.hot if hot else self.own)
        increase = self.rng.randrange(-5, 21)
        body = {"name": "drill", "increase": increase, "subId": target}
        response = api.post("/v4/actions", json=body)
        if self._ok("action", response, 201):
            action_id = response.json()["data"]["action"]["id"]
            self.model.add_points(target, increase)
            if hot:
                self.hot_actions.append((action_id, target, increase))
            else:
                with self.model.lock:
                    self.model.contacts[target].actions[action_id] = increase

    def delete_action(self, api: httpx.Client) -> None:
        if self.hot_actions and (not self.own or self.rng.random() < 0.5):
            action_id, target, increase = self.hot_actions.pop(
                self.rng.randrange(len(self.hot_actions))
            )
        else:
            with self.model.lock:
                candidates = [c for c in self.own if self.model.contacts[c].actions]
                if not candidates:
                    target = ""
                else:
                    target = self.rng.choice(candidates)
                    actions = self.model.contacts[target].actions
                    action_id = self.rng.choice(sorted(actions))
                    increase = actions.pop(action_id)
            if not target:
                return self.add_action(api)
        if self._ok("delete action", api.delete(f"/v4/actions/{action_id}"), 200):
            self.model.add_points(target, -increase)

    def patch(self, api: httpx.Client) -> None:
        if not self.own:
            return self.create(api)
        target = self.rng.choice(self.own)
        name = f"P{self.rng.randrange(1000)}"
        points = self.rng.randrange(0, 100) if self.rng.random() < 0.3 else None
        body: dict[str, object] = {"firstName": name}
        if points is not None:
            body["points"] = points
        if self._ok("patch", api.patch(f"/v4/contacts/{target}", json=body), 200):
            with self.model.lock:
                contact = self.model.contacts[target]
                contact.first_name = name
                if points is not None:
                    contact.points = points

    def delete(self, api: httpx.Client) -> None:
        if not self.own:
            return self.create(api)
        target = self.own.pop(self.rng.randrange(len(self.own)))
        if self._ok("delete", api.delete(f"/v4/contacts/{target}"), 200):
            with self.model.lock:
                del self.model.contacts[target]

    def read(self, api: httpx.Client) -> None:
        """A contact only this client changes must read back as the model says, at once."""
        if not self.own:
            return self.create(api)
        target = self.rng.choice(self.own)
        response = api.get(f"/v4/contacts/{target}")
        if self._ok("read", response, 200):
            contact = response.json()["data"]["contact"]
            with self.model.lock:
                expected = self.model.contacts[target]
                if (contact["points"], contact["firstName"]) != (
                    expected.points,
                    expected.first_name,
                ):
                    self.model.stale_reads += 1

    def run(self, operations: int) -> None:
        choices = (
            [self.create] * 25
            + [self.add_action] * 30
            + [self.delete_action] * 10
            + [self.patch] * 12
            + [self.delete] * 8
            + [self.read] * 15
        )
        with client(self.service, self.key) as api:
            for _ in range(operations):
                try:
                    self.rng.choice(choices)(api)
                except httpx.TransportError as exc:
                    with self.model.lock:
                        self.model.refused[f"no answer ({type(exc).__name__})"] += 1


def read_back(api: httpx.Client, list_id: str) -> dict[str, tuple[int, str | None]]:
    found: dict[str, tuple[int, str | None]] = {}
    page = 1
    while True:
        params: dict[str, str | int] = {"listId": list_id, "limit": 1000, "page": page}
        body = expect(api.get("/v4/contacts", params=params), 200)
        for contact in body["contacts"]:
            found[contact["id"]] = (contact["points"], contact["firstName"])
        if page >= body["pagination"]["pages"]:
            return found
        page += 1


def mixed(ctx: Context) -> Row:
    return _mixed("mixed", ctx, f"sqlite:///{ctx.workdir / 'mixed.db'}")


def mixed_postgres(ctx: Context) -> Row:
    """The same on PostgreSQL, where the clients' concurrent PATCHes share turns."""
    cluster: AbstractContextManager[Any] = backends.postgres()
    with cluster as postgres:
        migrate(postgres.database_url)
        return _mixed("mixed-postgres", ctx, postgres.database_url)


def _mixed(name: str, ctx: Context, url: str) -> Row:
    key = create_key(url)
    settings = {"RATE_LIMIT_FREE": UNLIMITED}
    model = Model()
    with running(url, ctx.workdir / f"{name}.log", settings=settings) as service:
        with client(service, key) as api:
            list_id = create_list(api)
            hot = []
            for index in range(HOT_CONTACTS):
                body = {"email": f"hot{index}@drill.example", "listId": list_id, "firstName": "H"}
                hot.append(expect(api.post("/v4/contacts", json=body), 201)["contact"]["id"])
                model.contacts[hot[-1]] = Contact(0, "H")
        workers = [
            Worker(number, service, key, list_id, model)
            for number in range(ctx.sizes.mixed_clients)
        ]
        for worker in workers:
            worker.hot = hot
        per_worker = ctx.sizes.mixed_operations // len(workers)
        threads = [threading.Thread(target=w.run, args=(per_worker,), daemon=True) for w in workers]
        started = time.monotonic()
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(timeout=600)
        seconds = time.monotonic() - started
        with client(service, key) as api:
            stored = read_back(api, list_id)
    expected = {cid: (c.points, c.first_name) for cid, c in model.contacts.items()}
    missing = len(set(expected) - set(stored))
    extra = len(set(stored) - set(expected))
    wrong = sum(stored[cid] != state for cid, state in expected.items() if cid in stored)
    acknowledged = sum(model.acknowledged.values())
    passed = (
        not model.refused and missing == 0 and extra == 0 and wrong == 0 and not model.stale_reads
    )
    operations = ", ".join(f"{op} {count:,}" for op, count in sorted(model.acknowledged.items()))
    figures = (
        f"{len(workers)} clients, {acknowledged:,} acknowledged ops ({operations}), "
        f"{rate(acknowledged, seconds)}; final {len(stored):,} contacts: missing {missing}, "
        f"extra {extra}, wrong points or name {wrong}; stale reads {model.stale_reads}"
    )
    if model.refused:
        figures += f"; not acknowledged: {dict(model.refused)}"
    return row(name, passed, figures)
