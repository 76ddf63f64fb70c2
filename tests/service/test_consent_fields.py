"""`phoneNumber` and `isGDPR` are stored with every contact and now filterable: GDPR consent is
the first condition of many real segments (issue 27)."""

from __future__ import annotations

from .audience_helpers import member_emails, smart
from .conftest import Tenant


def test_consent_and_phone_number_filter_audiences(tenant: Tenant) -> None:
    list_id = tenant.new_list()["id"]
    tenant.new_contact(list_id, "fr@example.com", isGDPR=True, phoneNumber="+33 6 12 34 56 78")
    tenant.new_contact(list_id, "us@example.com", isGDPR=True, phoneNumber="+1 555 0100")
    tenant.new_contact(list_id, "no@example.com", isGDPR=False, phoneNumber="+33 7 00 00 00 00")
    text = 'isGDPR = true and phoneNumber starts with "+33"'
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"listId": list_id, "name": "Consenting FR", "mode": "smart", "filtersText": text},
    )["audience"]
    assert member_emails(tenant, audience["id"]) == ["fr@example.com"]
    consent = smart(tenant, list_id, {"isGDPR": True}, "Consent")
    assert sorted(member_emails(tenant, consent["id"])) == ["fr@example.com", "us@example.com"]
    preview = tenant.ok(
        "POST", "/v4/audiences/preview", json={"listId": list_id, "filters": {"isGDPR": False}}
    )
    assert [c["email"] for c in preview["contacts"]] == ["no@example.com"]
