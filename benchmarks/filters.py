"""The benchmark filters, each with the translations a user of another tool would write by hand.

F1-F5 are the filters of the specification's examples, from one index lookup to a nested
AND/OR over five fields. F6 is not about speed: a negation over a field with nulls, the place
where rule engines that lack three-valued logic answer differently. The stress cases probe
size rather than shape: a 5,000-value `in`, a 200-branch OR and 30 levels of nesting.

Translations are written as their users would write them, with the same meaning where the tool
can express it: the hand-written lambda uses `.get` and `is not None` checks, so it is the
pure-Python limit for these semantics; MongoDB queries use `$regex` with the `i` flag for a
case-insensitive contains; JSON Logic has no case folding and no null-aware comparison, so
its answers differ where the data has capitals or nulls (the report counts by how much).
Translations that would import a library are functions, called only when that engine runs.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

Record = dict[str, Any]
SINCE = datetime(2025, 1, 1, tzinfo=UTC)
EU3 = frozenset({"FR", "DE", "ES"})


@dataclass(frozen=True)
class BenchFilter:
    """One filter and its hand translations; a missing translation means "not compared"."""

    name: str
    title: str
    where: dict[str, Any]
    lambda_: Callable[[Record], bool] | None = None
    mongo: dict[str, Any] | None = None
    jsonlogic: dict[str, Any] | None = None
    polars: Callable[[], Any] | None = None
    sql: str | None = None
    stress: bool = False
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def json(self) -> str:
        return json.dumps(self.where, ensure_ascii=False)


def _col(name: str) -> Any:
    import polars as pl

    return pl.col(name)


def _f2_polars() -> Any:
    # The idiom of polars' documentation for a case-insensitive search.
    return _col("email").str.contains("(?i)gmail")


def _f4_polars() -> Any:
    import polars as pl

    eu3 = pl.Series(sorted(EU3)).implode()
    return _col("country").is_in(eu3) | _col("city").str.starts_with("San")


def _f5_polars() -> Any:
    recent = _col("createdAt") >= SINCE
    engaged = (_col("points") > 500) | (_col("referrals") >= 3) | _col("company").is_not_null()
    return ~_col("unsubscribed") & recent & engaged


def _f6_polars() -> Any:
    import polars as pl

    return ~_col("country").is_in(pl.Series(sorted(EU3)).implode())


def _f3_lambda(r: Record) -> bool:
    return (p := r.get("points")) is not None and 100 <= p < 1000


def _f5_lambda(r: Record) -> bool:
    return (
        r.get("unsubscribed") is False
        and (c := r.get("createdAt")) is not None
        and c >= SINCE
        and (
            ((p := r.get("points")) is not None and p > 500)
            or ((n := r.get("referrals")) is not None and n >= 3)
            or r.get("company") is not None
        )
    )


MAIN = (
    BenchFilter(
        "F1",
        "isVerified is true",
        {"isVerified": True},
        lambda_=lambda r: r.get("isVerified") is True,
        mongo={"isVerified": True},
        jsonlogic={"==": [{"var": "isVerified"}, True]},
        polars=lambda: _col("isVerified"),
        sql='"isVerified"',
    ),
    BenchFilter(
        "F2",
        "email contains gmail (any case)",
        {"email": {"contains": "gmail"}},
        lambda_=lambda r: (e := r.get("email")) is not None and "gmail" in e.lower(),
        mongo={"email": {"$regex": re.compile("gmail", re.IGNORECASE)}},
        jsonlogic={"in": ["gmail", {"var": "email"}]},
        polars=_f2_polars,
        sql="contains(lower(email), 'gmail')",
    ),
    BenchFilter(
        "F3",
        "100 <= points < 1000",
        {"points": {"gte": 100, "lt": 1000}},
        lambda_=_f3_lambda,
        mongo={"points": {"$gte": 100, "$lt": 1000}},
        jsonlogic={"and": [{">=": [{"var": "points"}, 100]}, {"<": [{"var": "points"}, 1000]}]},
        polars=lambda: (_col("points") >= 100) & (_col("points") < 1000),
        sql="points >= 100 AND points < 1000",
    ),
    BenchFilter(
        "F4",
        "country in FR/DE/ES or city starts with San",
        {"OR": [{"country": {"in": ["FR", "DE", "ES"]}}, {"city": {"startsWith": "San"}}]},
        lambda_=lambda r: (
            r.get("country") in EU3 or ((c := r.get("city")) is not None and c.startswith("San"))
        ),
        mongo={"$or": [{"country": {"$in": ["FR", "DE", "ES"]}}, {"city": {"$regex": "^San"}}]},
        jsonlogic={
            "or": [
                {"in": [{"var": "country"}, ["FR", "DE", "ES"]]},
                # substr of a null city raises: the guard a JSON Logic user has to add.
                {"and": [{"var": "city"}, {"==": [{"substr": [{"var": "city"}, 0, 3]}, "San"]}]},
            ]
        },
        polars=_f4_polars,
        sql="country IN ('FR', 'DE', 'ES') OR starts_with(city, 'San')",
    ),
    BenchFilter(
        "F5",
        "subscribed, created since 2025, and engaged",
        {
            "AND": [
                {"unsubscribed": False},
                {"createdAt": {"gte": "2025-01-01T00:00:00Z"}},
                {
                    "OR": [
                        {"points": {"gt": 500}},
                        {"referrals": {"gte": 3}},
                        {"company": {"not": None}},
                    ]
                },
            ]
        },
        lambda_=_f5_lambda,
        mongo={
            "$and": [
                {"unsubscribed": False},
                {"createdAt": {"$gte": SINCE}},
                {
                    "$or": [
                        {"points": {"$gt": 500}},
                        {"referrals": {"$gte": 3}},
                        {"company": {"$ne": None}},
                    ]
                },
            ]
        },  # fmt: skip
        jsonlogic={
            "and": [
                {"==": [{"var": "unsubscribed"}, False]},
                {">=": [{"var": "createdAt"}, SINCE]},
                {
                    "or": [
                        {">": [{"var": "points"}, 500]},
                        {">=": [{"var": "referrals"}, 3]},
                        {"!=": [{"var": "company"}, None]},
                    ]
                },
            ]
        },  # fmt: skip
        polars=_f5_polars,
        sql=(
            "NOT unsubscribed AND \"createdAt\" >= TIMESTAMPTZ '2025-01-01 00:00:00+00' "
            "AND (points > 500 OR referrals >= 3 OR company IS NOT NULL)"
        ),
    ),
    BenchFilter(
        "F6",
        "country not in FR/DE/ES (nulls)",
        {"NOT": {"country": {"in": ["FR", "DE", "ES"]}}},
        lambda_=lambda r: (c := r.get("country")) is not None and c not in EU3,
        mongo={"country": {"$nin": ["FR", "DE", "ES"]}},
        jsonlogic={"!": {"in": [{"var": "country"}, ["FR", "DE", "ES"]]}},
        polars=_f6_polars,
        sql="NOT country IN ('FR', 'DE', 'ES')",
        note="extra, for the differences: a negation over a field that is null in 10% of rows",
    ),
)


def _deep(levels: int) -> dict[str, Any]:
    where: dict[str, Any] = {"points": {"gte": 100}}
    for level in range(levels):
        where = {"AND": [where, {"referrals": {"gte": -level}}]} if level % 2 else {"NOT": where}
    return where


def _stress() -> tuple[BenchFilter, ...]:
    emails = [f"user{i}@example.org" for i in range(4_999)] + ["ann.smith7@gmail.com"]
    big_in = {"email": {"in": emails}}
    wide_or = {"OR": [{"points": {"equals": i * 7}} for i in range(200)]}
    deep = _deep(30)
    return (
        BenchFilter(
            "S1",
            "email in 5,000 values",
            big_in,
            mongo={"email": {"$in": emails}},
            jsonlogic={"in": [{"var": "email"}, emails]},
            stress=True,
        ),
        BenchFilter(
            "S2",
            "OR of 200 equalities",
            wide_or,
            mongo={"$or": [{"points": i * 7} for i in range(200)]},
            jsonlogic={"or": [{"==": [{"var": "points"}, i * 7]} for i in range(200)]},
            stress=True,
        ),
        BenchFilter("S3", "30 levels of NOT/AND nesting", deep, stress=True),
    )


STRESS = _stress()
ALL = MAIN + STRESS
