"""One router per resource. `ROUTERS` is what the application mounts under `/v4`.

`audiences.router` comes before `members.router`, and inside it `POST /audiences/preview` is
declared before the `/{id}` routes, so no path parameter ever swallows a fixed segment; for the
same reason `imports.router` (`/contacts/import`) comes before `contacts.router`, and
`analysis.router` (`/audiences/estimate`, `/audiences/compare`) before `audiences.router`.
"""

from __future__ import annotations

from fastapi import APIRouter

from . import (
    action_names,
    actions,
    analysis,
    audiences,
    contacts,
    custom_fields,
    erasure,
    events,
    exports,
    imports,
    list_fields,
    lists,
    members,
    webhooks,
)

ROUTERS: tuple[APIRouter, ...] = (
    lists.router,
    lists.projects_router,
    analysis.lists_router,
    list_fields.router,
    action_names.router,
    custom_fields.router,
    erasure.router,
    imports.router,
    contacts.router,
    actions.router,
    analysis.router,
    audiences.router,
    members.router,
    exports.router,
    events.router,
    webhooks.router,
)
