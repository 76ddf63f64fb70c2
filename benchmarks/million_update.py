"""One contact update in a list of many smart audiences, ours and hand-written, side by side.

`python -m benchmarks.million --audiences 100` measures the update with this: besides the
benchmark's big audience, each list gets `audiences - 1` more smart audiences whose thresholds
on points are spread between 6 and 400, each over the same 20 US contacts. Moving one of those
contacts from 5 points to 500 and back moves it into and out of every audience of its list, the
most an update can move: 100 membership rows and 100 events written, the judgement of 100
filters, the position in the answer.

The hand-written update is what one would write knowing the filters in advance: the row updated
with its `RETURNING`, the filters as Python conditions on it, the contact's memberships read,
the difference deleted and inserted, the events appended after the list's last position. The
extra audiences are stored by hand on the hand list (a set `INSERT ... SELECT` each; not timed).
After the measure both lists must hold the same memberships for those 20 contacts, or the
harness fails: a cheaper update cannot be a wrong one.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from datetime import UTC, datetime
from itertools import cycle
from typing import Any, Protocol

from sqlalchemy import Engine, bindparam, text

from audiencefilter.service.db.models import new_id


class Service(Protocol):
    """What this module needs of `million.Service` (which imports this module)."""

    ours: str
    hand: str
    engine: Engine

    def call(self, method: str, path: str, **kwargs: Any) -> Any: ...

    def sql_rows(self, statement: str, **params: Any) -> list[Any]: ...


CONTACTS = 20
LOW, HIGH = 5, 500  # an update moves a contact between these points


def thresholds(count: int) -> list[int]:
    """`count` thresholds on points spread over [6, 400], all between LOW and HIGH."""
    return [6 + (394 * k) // max(1, count - 1) for k in range(count)]


def chosen_emails(rows: Sequence[Mapping[str, Any]]) -> list[str]:
    """The first US contacts of the import: the ones every extra audience is about."""
    emails = [str(row["email"]) for row in rows if row.get("country") == "US"][:CONTACTS]
    assert emails, "no US contact in the rows"
    return emails


def extra_filter(threshold: int, emails: Sequence[str]) -> dict[str, Any]:
    return {"points": {"gte": threshold}, "email": {"in": list(emails)}}


class Audiences:
    """The extra audiences of both lists and the hand list's filters as Python conditions."""

    def __init__(self, service: Service, rows: Sequence[Mapping[str, Any]], extra: int) -> None:
        self.service = service
        self.emails = chosen_emails(rows)
        self.thresholds = thresholds(extra)
        for index, threshold in enumerate(self.thresholds):
            body = {"name": f"x{index}", "listId": service.ours,
                    "filters": extra_filter(threshold, self.emails)}  # fmt: skip
            service.call("POST", "/audiences?limit=1&wait=true", json=body)
        self.hand_conditions: list[tuple[str, Callable[[Mapping[str, Any]], bool]]] = []
        for index, threshold in enumerate(self.thresholds):
            audience_id = self._store_hand(index, threshold)
            self.hand_conditions.append((audience_id, _condition(threshold, set(self.emails))))

    def _store_hand(self, index: int, threshold: int) -> str:
        audience_id = new_id("aud")
        now = datetime.now(UTC)
        with self.service.engine.begin() as connection:
            connection.execute(
                text(
                    "INSERT INTO audiences (id, list_id, name, mode, filters, created_at, "
                    "updated_at) VALUES (:id, :list, :name, 'smart', :filters, :now, :now)"
                ),
                {"id": audience_id, "list": self.service.hand, "name": f"x{index}", "now": now,
                 "filters": json.dumps(extra_filter(threshold, self.emails))},
            )  # fmt: skip
            connection.execute(
                text(
                    "INSERT INTO memberships (audience_id, contact_id, entered_at) SELECT "
                    "CAST(:audience AS VARCHAR(64)), c.id, :now FROM contacts c "
                    "WHERE c.list_id = :list AND c.points >= :threshold AND c.email IN :emails"
                ).bindparams(bindparam("emails", expanding=True)),
                {"audience": audience_id, "now": now, "list": self.service.hand,
                 "threshold": threshold, "emails": self.emails},
            )  # fmt: skip
        return audience_id

    def ids(self, list_id: str) -> list[str]:
        rows = self.service.sql_rows(
            "SELECT id FROM contacts WHERE list_id = :list AND email IN :emails ORDER BY email",
            list=list_id, emails=self.emails,
        )  # fmt: skip
        assert len(rows) == len(self.emails), (len(rows), len(self.emails))
        return [str(row[0]) for row in rows]

    def memberships(self, list_id: str) -> list[int]:
        """How many audiences each chosen contact is in, in email order."""
        rows = self.service.sql_rows(
            "SELECT c.email, COUNT(m.audience_id) FROM contacts c LEFT JOIN memberships m "
            "ON m.contact_id = c.id WHERE c.list_id = :list AND c.email IN :emails "
            "GROUP BY c.email ORDER BY c.email",
            list=list_id, emails=self.emails,
        )  # fmt: skip
        return [int(row[1]) for row in rows]


def _condition(threshold: int, emails: set[str]) -> Callable[[Mapping[str, Any]], bool]:
    return lambda row: row["points"] >= threshold and row["email"] in emails


def update_pair(
    service: Service,
    audiences: Audiences,
    big_hand: tuple[str, Callable[[Mapping[str, Any]], bool]],
) -> tuple[Callable[[], Any], Callable[[], Any]]:
    """PATCH one of the chosen contacts between LOW and HIGH points, against the hand path."""
    ours_steps = cycle([(i, p) for i in audiences.ids(service.ours) for p in (LOW, HIGH)])
    hand_steps = cycle([(i, p) for i in audiences.ids(service.hand) for p in (LOW, HIGH)])
    conditions = [big_hand, *audiences.hand_conditions]

    def ours() -> Any:
        contact_id, points = next(ours_steps)
        return service.call("PATCH", f"/contacts/{contact_id}", json={"points": points})

    def hand() -> None:
        contact_id, points = next(hand_steps)
        hand_update(service, conditions, contact_id, points)

    return ours, hand


def hand_update(
    service: Service,
    conditions: Sequence[tuple[str, Callable[[Mapping[str, Any]], bool]]],
    contact_id: str,
    points: int,
) -> None:
    """The update, its membership difference and one event per change and one for the update."""
    now = datetime.now(UTC)
    with service.engine.begin() as connection:
        row: Mapping[str, Any] = dict(
            connection.execute(
                text(
                    "UPDATE contacts SET points = :points WHERE id = :contact "
                    "RETURNING id, list_id, email, country, points"
                ),
                {"points": points, "contact": contact_id},
            )
            .mappings()
            .one()
        )
        now_in = {audience for audience, holds in conditions if holds(row)}
        was_in = {
            str(r[0])
            for r in connection.execute(
                text("SELECT audience_id FROM memberships WHERE contact_id = :contact"),
                {"contact": contact_id},
            )
        }
        left, entered = sorted(was_in - now_in), sorted(now_in - was_in)
        if left:
            connection.execute(
                text(
                    "DELETE FROM memberships WHERE contact_id = :contact AND audience_id IN :ids"
                ).bindparams(bindparam("ids", expanding=True)),
                {"contact": contact_id, "ids": left},
            )
        if entered:
            connection.execute(
                text(
                    "INSERT INTO memberships (audience_id, contact_id, entered_at) "
                    "VALUES (:audience, :contact, :now)"
                ),
                [{"audience": a, "contact": contact_id, "now": now} for a in entered],
            )
        changes: list[tuple[str, str | None]] = [("contact.updated", None)]
        changes += [("audience.left", a) for a in left] + [("audience.entered", a) for a in entered]
        head = connection.execute(
            text("SELECT COALESCE(MAX(position), 0) FROM events WHERE list_id = :list"),
            {"list": row["list_id"]},
        ).scalar_one()
        connection.execute(
            text(
                "INSERT INTO events (id, list_id, position, type, contact_id, audience_id, "
                "cause, occurred_at, payload) VALUES (:id, :list, :position, :type, :contact, "
                "CAST(:audience AS VARCHAR(64)), 'contact.updated', :now, '{}')"
            ),
            [
                {"id": new_id("evt"), "list": row["list_id"], "position": head + n + 1,
                 "type": kind, "contact": contact_id, "audience": audience, "now": now}
                for n, (kind, audience) in enumerate(changes)
            ],
        )  # fmt: skip
