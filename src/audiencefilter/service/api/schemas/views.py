"""Resources as JSON-ready dicts, matching the response models in `resources.py` and `audiences.py`.

Built by hand rather than through pydantic: a page of 20,000 contacts is serialized straight by
orjson. The tests check real responses against the OpenAPI document, so the two cannot drift.
Contacts are rendered from the row dicts of `db.queries.fetch_rows`, in place: the row already has
the interface's field names, and only the list summary, audiences, links and position are added.
"""

from __future__ import annotations

from typing import Any

import orjson

from ...db.models import Action, Audience, List
from ...domain.audience_filters import filter_text
from ...settings import Settings

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
)
SUMMARY_FIELDS = ("id", "name", "url", "mode", "referrals", "color", "title", "desc")
ACTION_FIELDS = ("id", "name", "increase", "createdAt", "updatedAt", "subId")


def list_view(lst: List) -> dict[str, Any]:
    view = {field: getattr(lst, field) for field in LIST_FIELDS}
    view["userId"] = lst.accountId
    return view


class ContactRenderer:
    """Renders contacts of one list; the list summary and link bases are computed once."""

    def __init__(self, lst: List, settings: Settings) -> None:
        self.summary = {field: getattr(lst, field) for field in SUMMARY_FIELDS}
        self.page = f"{settings.pages_base_url}/{lst.url}"

    def __call__(
        self, row: dict[str, Any], position: int, audiences: list[dict[str, str]]
    ) -> dict[str, Any]:
        """The contact of `row` (a dict of `db.queries.fetch_rows`, reused as the view)."""
        code = row.pop("referralCode")
        row["data"] = orjson.Fragment(row["data"])  # the stored JSON text, as it is
        row["list"] = self.summary
        row["audiences"] = audiences
        row["referralLink"] = f"{self.page}?ref={code}"
        row["privateLink"] = f"{self.page}/subscriber/{row['id']}"
        row["position"] = position
        return row


def audience_view(audience: Audience, **extra: Any) -> dict[str, Any]:
    """An audience without its members; `extra` adds `subs` or `subsCount`."""
    filters = audience.filters
    return {
        "id": audience.id,
        "name": audience.name,
        "filters": filters,
        "filtersText": filter_text(filters, audience.fields) if filters else None,
        "mode": audience.mode,
        "listId": audience.listId,
        "createdAt": audience.createdAt,
        "updatedAt": audience.updatedAt,
        **extra,
    }


def action_view(action: Action) -> dict[str, Any]:
    return {field: getattr(action, field) for field in ACTION_FIELDS}


def pagination(total: int, page: int, per_page: int) -> dict[str, int]:
    return {
        "total": total,
        "pages": -(-total // per_page),
        "currentPage": page,
        "perPage": per_page,
    }
