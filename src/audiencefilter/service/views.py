"""Resources as JSON-ready dicts, matching the response models in `schemas.py`.

Built by hand rather than through pydantic: a page of 20,000 contacts is serialized straight by
orjson. The tests check real responses against the OpenAPI document, so the two cannot drift.
"""

from __future__ import annotations

from typing import Any

from .models import Action, Contact, List
from .settings import Settings

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
)
SUMMARY_FIELDS = ("id", "name", "url", "mode", "referrals", "color", "title", "desc")
CONTACT_FIELDS = (
    "id",
    "email",
    "firstName",
    "lastName",
    "phoneNumber",
    "createdAt",
    "points",
    "referrals",
    "listId",
    "isVerified",
    "unsubscribed",
    "data",
    "address",
    "isGDPR",
    "name",
    "socialOne",
    "socialTwo",
    "website",
    "company",
    "country",
    "city",
)
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

    def __call__(self, contact: Contact, position: int) -> dict[str, Any]:
        view = {field: getattr(contact, field) for field in CONTACT_FIELDS}
        view["list"] = self.summary
        # Filled by the audience routes once they exist; the field is part of the shape already.
        view["audiences"] = []
        view["referralLink"] = f"{self.page}?ref={contact.referralCode}"
        view["privateLink"] = f"{self.page}/subscriber/{contact.id}"
        view["position"] = position
        return view


def action_view(action: Action) -> dict[str, Any]:
    return {field: getattr(action, field) for field in ACTION_FIELDS}


def pagination(total: int, page: int, per_page: int) -> dict[str, int]:
    return {
        "total": total,
        "pages": -(-total // per_page),
        "currentPage": page,
        "perPage": per_page,
    }
