"""The plain-English sentence of a filter: every node kind, negations in natural words, nested
groups unambiguous, and a new node kind stopping each format's writer loudly."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

import pytest
from hypothesis import given, settings

import audiencefilter as af
from audiencefilter.formats import english, react_querybuilder, sql_where
from audiencefilter.language.nodes import UnhandledNodeError
from audiencefilter.testing.strategies import filters

SCHEMA = af.CONTACT.with_fields(tags="string[]", birthday="date")


def _say(text: str) -> str:
    return english.write(af.parse_text(text, SCHEMA).root, SCHEMA)


@pytest.mark.parametrize(
    ("text", "sentence"),
    [
        (
            'points >= 100 and country in ["FR", "DE"]',
            "points at least 100 and country is FR or DE",
        ),
        ('country not in ["FR", "DE"]', "country is neither FR nor DE"),
        ('country not in ["FR", "DE", "IT"]', "country is none of FR, DE and IT"),
        ('email != "a@b.co"', "email is not a@b.co"),
        ('email contains "acme"', "email contains acme"),
        ('not (email ends with ".com")', "email does not end with .com"),
        ('firstName starts with "an" ignoring case', "first name starts with an (ignoring case)"),
        ('city = "New York"', "city is \u201cNew York\u201d"),
        ('company = ""', "company is \u201c\u201d"),
        ("company is null", "company is not set"),
        ("company is not null", "company is set"),
        ("email is blank", "email is not set or empty"),
        ("email is not blank", "email is set and not empty"),
        ("isVerified = true", "is verified"),
        ("isVerified = false", "is not verified"),
        ("unsubscribed = true", "unsubscribed is true"),
        ("referrals > points", "referrals more than points"),
        ("referrals = points", "referrals is the same as points"),
        ("createdAt < 2025-01-01", "created at before 2025-01-01"),
        ("createdAt >= 2025-01-31T09:30:00Z", "created at on or after 2025-01-31 09:30 UTC"),
        ("createdAt >= 30 days ago", "created at is in the last 30 days"),
        ("createdAt within this month", "created at is in this month"),
        ("createdAt >= start of last week", "created at on or after start of last week"),
        ("birthday anniversary within this week", "birthday has its anniversary in this week"),
        ('data.plan = "pro"', "data.plan is pro"),
        ('tags has "vip"', "tags include vip"),
        ('tags has some ["a", "b"]', "tags include at least one of a or b"),
        ('tags has every ["a", "b"]', "tags include all of a and b"),
        ("tags is empty", "tags is empty"),
        ("tags is not empty", "tags is not empty"),
        ('actions some (name = "share")', "has at least one action named share"),
        ('actions none (name = "share")', "has no action named share"),
        ('not (actions some (name = "share"))', "has no action named share"),
        ("actions every (increase > 0)", "has only actions where increase more than 0, or none"),
        (
            'count(actions where name = "share" and createdAt >= 30 days ago) >= 3',
            "has at least 3 actions named share in the last 30 days",
        ),
        ("count(actions) = 1", "has exactly 1 action"),
        ("sum(actions.increase) >= 10", "the total increase of their actions is at least 10"),
        (
            "max(actions.createdAt) < 60 days ago",
            "the latest created at of their actions is before 60 days ago",
        ),
        ("not (points > 5)", "not (points more than 5)"),
        ("true", "every contact"),
        ("false", "no contact"),
    ],
)
def test_each_node_kind_reads_as_a_sentence(text: str, sentence: str) -> None:
    assert _say(text) == sentence


def test_nested_groups_are_unambiguous() -> None:
    assert _say('points >= 1 and (country = "FR" or city = "Paris")') == (
        "points at least 1 and (either country is FR or city is Paris)"
    )
    assert _say('(points >= 1 and country = "FR") or city = "Paris"') == (
        "(points at least 1 and country is FR) or city is Paris"
    )
    assert _say('not (points >= 1 or country = "FR")') == (
        "not (points at least 1 or country is FR)"
    )


def test_the_brief_example() -> None:
    flt = af.parse({"points": {"gte": 100}, "country": {"in": ["FR", "DE"]}})
    assert english.write(flt.root, flt.schema) == "points at least 100 and country is FR or DE"


@settings(max_examples=100)
@given(flt=filters(af.CONTACT, max_leaves=8))
def test_every_filter_has_a_sentence(flt: af.Filter) -> None:
    sentence = english.write(flt.root, af.CONTACT)
    assert sentence and "\n" not in sentence


@dataclass(frozen=True, slots=True)
class _Novel:
    kind: ClassVar[str] = "novel"


@pytest.mark.parametrize("writer", [english.write, react_querybuilder.write, sql_where.write])
def test_a_new_node_kind_fails_loudly(writer: Callable[[Any, af.Schema], object]) -> None:
    with pytest.raises(UnhandledNodeError, match="novel"):
        writer(_Novel(), SCHEMA)
