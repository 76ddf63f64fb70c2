"""The helpers users call in their own tests."""

from __future__ import annotations

import pytest

from audiencefilter.testing import assert_members, members

CONTACTS = [
    {"id": "ann", "points": 150, "country": "FR"},
    {"id": "bob", "points": 50, "country": "DE"},
    {"id": "cleo", "points": None, "country": "FR"},
]


def test_members_in_order() -> None:
    assert members('{"country": "FR"}', CONTACTS) == ["ann", "cleo"]


def test_assert_members_passes_on_exact_set() -> None:
    assert_members({"points": {"gte": 100}}, CONTACTS, {"ann"})


def test_assert_members_explains_each_wrong_contact() -> None:
    with pytest.raises(AssertionError) as caught:
        assert_members({"points": {"gte": 100}}, CONTACTS, ["cleo", "zed"])
    text = str(caught.value)
    assert "in but not expected: 'ann'" in text
    assert "expected but out: 'cleo'" in text
    assert "points is null" in text or "UNKNOWN" in text
    assert "not among the contacts: ['zed']" in text
