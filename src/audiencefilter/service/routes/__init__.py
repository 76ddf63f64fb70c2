"""One router per resource. `ROUTERS` is what the application mounts under `/v4`.

The audience routes join this tuple when they exist (`routes/audiences.py`); the tables they need
(`audiences`, `audience_members`) are already in the initial migration.
"""

from __future__ import annotations

from fastapi import APIRouter

from . import actions, contacts, lists

ROUTERS: tuple[APIRouter, ...] = (
    lists.router,
    lists.projects_router,
    contacts.router,
    actions.router,
)
