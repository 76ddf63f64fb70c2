"""Resources as JSON-ready dicts, matching the response models in `resources.py` and `audiences.py`.

Built by hand rather than through pydantic: a page of 20,000 contacts is serialized straight by
orjson. The tests check real responses against the OpenAPI document, so the two cannot drift.
Contacts are rendered by the domain's read model (`domain/contact_pages.py`), which the use cases
answer with.
"""

from __future__ import annotations

import json
from typing import Any

from ...db.models import Action, Audience, List
from ...domain.audience_filters import filter_text
from ...domain.membership.build import Progress

LIST_FIELDS = (
    "id",
    "url",
    "name",
    "mode",
    "color",
    "title",
    "desc",
    "socialDescription",
    "branding",
    "referrals",
    "startFrom",
    "senderName",
    "replyTo",
    "sender",
    "legal",
    "createdAt",
    "updatedAt",
    "domainId",
    "defaultPageId",
    "referralPageId",
    "successPageId",
    "listSettingsId",
    "whitelistEmailId",
    "templateId",
    "themeId",
    "icon",
    "favicon",
    "ogImage",
    "columns",
    "customHeadCode",
    "customBodyCode",
    "analyticsA",
    "analyticsB",
    "allowedOrigins",
    "publicFields",
    "publicFieldsPolicy",
    "customFields",
    "timeZone",
)
ACTION_FIELDS = ("id", "name", "increase", "createdAt", "updatedAt", "subId")


def list_view(lst: List) -> dict[str, Any]:
    view = {field: getattr(lst, field) for field in LIST_FIELDS}
    view["userId"] = lst.accountId
    return view


def _build_state(progress: Progress | None) -> dict[str, Any]:
    """`status` and `progress`: the build's while the audience builds in the background."""
    if progress is None:
        return {"status": "built", "progress": None}
    return {"status": "building", "progress": {"done": progress.done, "total": progress.total}}


def audience_view(
    audience: Audience, progress: Progress | None = None, **extra: Any
) -> dict[str, Any]:
    """An audience without its members; `progress`: its build's, while it builds in the
    background; `extra` adds `subs` or `subsCount`."""
    filters = audience.filters
    return {
        **_build_state(progress),
        "id": audience.id,
        "name": audience.name,
        "filters": filters,
        "filtersText": filter_text(filters, audience.fields) if filters else None,
        "mode": audience.mode,
        "listId": audience.listId,
        "experiment": json.loads(audience.experiment) if audience.experiment else None,
        "createdAt": audience.createdAt,
        "updatedAt": audience.updatedAt,
        **extra,
    }


def action_view(action: Action) -> dict[str, Any]:
    return {field: getattr(action, field) for field in ACTION_FIELDS}
