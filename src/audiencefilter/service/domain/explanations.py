"""Why one contact is in or out of a filter's audience, in the library's words.

An audience builder previews a filter and shows, for a contact the user picks, which conditions
held. The answer is the library's `Filter.explain` on the contact's record as the service judges
it in memory (its row, `data` decoded, and the related rows the filter reads), turned into a
tree of plain values a page can render. The service decides nothing itself. Each node also
carries its value in a person's words (`words`: field labels, related rows by name), see
`explanation_words.py`.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from sqlalchemy.orm import Session

from ... import Explanation, Filter
from ..db.models import Contact, List
from ..db.queries import contact_rows, fetch_rows
from ..ground.errors import not_found
from . import field_catalogue, relations
from .explanation_words import row_names, words


def explain_contact(
    session: Session, list_id: str, flt: Filter, contact_id: str, now: datetime
) -> dict[str, Any]:
    """The explanation tree of `flt` for the contact `contact_id` of the list, at `now`.

    Raises:
        NotFound: the list holds no such contact.
    """
    rows = fetch_rows(session, contact_rows([Contact.id == contact_id, Contact.listId == list_id]))
    if not rows:
        raise not_found("Contact")
    record = rows[0]
    if isinstance(record.get("data"), str):
        record["data"] = json.loads(record["data"])
    used = relations.uses(flt)
    if used:
        relations.attach(rows, relations.related_rows(session, [contact_id], used))
    view = NodeView(_labels(session.get(List, list_id)), row_names(record, sorted(used)))
    return {"contactId": contact_id, **view(flt.explain(record, now=now))}


def _labels(lst: List | None) -> dict[str, str]:
    """Each field's label as the list's builder shows it, by key."""
    if lst is None:
        return {}
    return {entry.key: entry.label for entry in field_catalogue.of_list(lst).fields}


class NodeView:
    """Explanation nodes as plain values, their `words` in the list's labels and row names."""

    def __init__(self, labels: dict[str, str], rows: dict[str, str]) -> None:
        self.labels = labels
        self.rows = rows

    def __call__(self, node: Explanation) -> dict[str, Any]:
        """One node: its outcome, the condition or group, the value it saw, its items."""
        children = None if node.is_condition else [self(child) for child in node.children]
        return {
            "outcome": node.outcome.value,
            "label": node.label,
            "seen": node.seen,
            "words": words(node, self.labels, self.rows),
            "children": children,
        }
