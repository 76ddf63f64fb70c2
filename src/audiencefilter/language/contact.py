"""The contact schema of the interface specification: its fields, its `data` document and
its relations (`actions`, `audiences`).

Its own module so that `fields.py` (what a schema is) and the relations it declares stay
one-way: this module imports both, neither imports it.
"""

from __future__ import annotations

from .fields import _CONTACT_FIELDS, Relation, Schema


def _contact() -> Schema:
    actions = Schema.from_mapping(
        {"id": "string", "name": "string", "increase": "number", "createdAt": "datetime"},
        name="action",
    )
    audiences = Schema.from_mapping(
        {"id": "string", "name": "string", "mode": "string"}, name="audience"
    )
    return _CONTACT_FIELDS.with_relations(
        Relation(
            "actions",
            actions,
            table="actions",
            foreign_key="sub_id",
            columns=(("createdAt", "created_at"),),
        ),
        Relation("audiences", audiences, table="contact_audiences", foreign_key="contact_id"),
    )


CONTACT = _contact()
"""The filterable contact fields of the interface specification, `data`, the contact's
free-form JSON object, filtered through paths, and two relations: `actions` (the contact's
points events: `id`, `name`, `increase`, `createdAt`) and `audiences` (the audiences the
contact is in: `id`, `name`, `mode`)."""
