"""Relative date-times (`{"ago": "P30D"}`): durations, calendar arithmetic, clocks, and every
output a filter has. The conformance file `relative_dates.json` runs the semantics on every
engine; this file covers the API around them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import jsonschema
import pytest
from hypothesis import given
from hypothesis import strategies as st
from sqlalchemy import Column, DateTime, MetaData, String, Table
from sqlalchemy.dialects import postgresql

import audiencefilter as af
from audiencefilter.language.relative import EARLIEST, Ago, DurationError

NOW = datetime(2025, 3, 31, 12, tzinfo=UTC)
LAST_30_DAYS = af.parse({"createdAt": {"gte": {"ago": "P30D"}}})


class FakeClock:
    """A clock a test moves by hand; counts how often it is read."""

    def __init__(self, now: datetime) -> None:
        self.now = now
        self.reads = 0

    def __call__(self) -> datetime:
        self.reads += 1
        return self.now


def test_membership_changes_with_time_alone() -> None:
    record = {"createdAt": "2025-03-10T00:00:00Z"}
    clock = FakeClock(NOW)
    is_member = af.compile(LAST_30_DAYS, clock=clock)  # built once, held for long
    assert is_member(record)
    clock.now = NOW + timedelta(days=30)
    assert not is_member(record)  # same filter, same record, same predicate: later
    assert LAST_30_DAYS.matches(record, now=NOW)
    assert not LAST_30_DAYS.matches(record, now=NOW + timedelta(days=30))


def test_the_default_predicate_follows_the_system_clock() -> None:
    recent = {"createdAt": datetime.now(UTC) - timedelta(days=1)}
    old = {"createdAt": datetime.now(UTC) - timedelta(days=31)}
    assert LAST_30_DAYS.matches(recent) and not LAST_30_DAYS.matches(old)
    assert af.compile(LAST_30_DAYS)(recent)


def test_an_absolute_filter_never_reads_the_clock() -> None:
    flt = af.parse({"createdAt": {"gte": "2025-01-01"}})
    clock = FakeClock(NOW)
    predicate = af.compile(flt, clock=clock)
    assert predicate is flt.predicate is flt.evaluator
    assert predicate({"createdAt": "2025-02-01"})
    assert clock.reads == 0
    assert not flt.clock.is_relative and flt.clock.resolve(NOW) is flt


def test_the_clock_is_read_once_per_call() -> None:
    flt = af.parse({"createdAt": {"gte": {"ago": "P1Y"}, "lt": {"ago": "P1D"}}})
    clock = FakeClock(NOW)
    predicate = af.compile(flt, clock=clock)
    assert predicate({"createdAt": "2025-01-01"}) and clock.reads == 1
    assert not predicate({"createdAt": None}) and clock.reads == 2


@pytest.mark.parametrize(
    "now",
    [
        datetime(2025, 3, 31, 12),  # naive: UTC
        datetime(2025, 3, 31, 14, tzinfo=timezone(timedelta(hours=2))),
    ],
)
def test_a_clock_in_another_zone_is_taken_in_utc(now: datetime) -> None:
    flt = af.parse({"createdAt": {"equals": {"ago": "P1M"}}})
    record = {"createdAt": "2025-02-28T12:00:00Z"}
    assert af.compile(flt, clock=lambda: now)(record)
    assert flt.matches(record, now=now)
    assert flt.clock.resolve(now).to_json() == '{"createdAt":{"equals":"2025-02-28T12:00:00Z"}}'


def test_select_takes_one_batch_at_one_instant() -> None:
    rows = [{"id": i, "createdAt": NOW - timedelta(days=i)} for i in (1, 29, 31)]
    assert [r["id"] for r in LAST_30_DAYS.select(rows, now=NOW)] == [1, 29]
    assert [r["id"] for r in af.select(LAST_30_DAYS, rows, now=NOW)] == [1, 29]
    later = NOW + timedelta(days=2)
    assert [r["id"] for r in LAST_30_DAYS.select(rows, now=later)] == [1]


def test_resolve_gives_the_absolute_filter() -> None:
    flt = af.parse({"createdAt": {"gte": {"ago": "P30D"}, "not": {"equals": {"ago": "P1D"}}}})
    assert flt.clock.is_relative
    resolved = flt.clock.resolve(NOW)
    assert not resolved.clock.is_relative
    assert resolved.to_json() == (
        '{"createdAt":{"gte":"2025-03-01T12:00:00Z","not":"2025-03-30T12:00:00Z"}}'
    )
    assert resolved == af.parse(resolved.to_json())


@pytest.mark.parametrize(
    ("written", "canonical", "words"),
    [
        ("P30D", "P30D", "30 days ago"),
        ("P1W", "P7D", "7 days ago"),
        ("P4W2D", "P30D", "30 days ago"),
        ("PT90M", "PT1H30M", "1 hour 30 minutes ago"),
        ("PT36H", "P1DT12H", "1 day 12 hours ago"),
        ("P1Y12M", "P2Y", "2 years ago"),
        ("P0D", "PT0S", "0 seconds ago"),
        ("PT0.5S", "PT0.5S", "0.5 seconds ago"),
        ("PT1,25S", "PT1.25S", "1.25 seconds ago"),
        (
            "p1y2m3dt4h5m6.000007s",
            "P1Y2M3DT4H5M6.000007S",
            "1 year 2 months 3 days 4 hours 5 minutes 6.000007 seconds ago",
        ),
    ],
)
def test_durations_are_normalized(written: str, canonical: str, words: str) -> None:
    ago = Ago.parse(written)
    assert ago.iso == canonical and ago.words == words
    assert Ago.parse(canonical) == ago == Ago.from_words(words.removesuffix(" ago"))


@pytest.mark.parametrize(
    ("now", "duration", "instant"),
    [
        (datetime(2025, 3, 31, 12, tzinfo=UTC), "P1M", datetime(2025, 2, 28, 12, tzinfo=UTC)),
        (datetime(2024, 3, 31, tzinfo=UTC), "P1M", datetime(2024, 2, 29, tzinfo=UTC)),
        (datetime(2024, 2, 29, tzinfo=UTC), "P1Y", datetime(2023, 2, 28, tzinfo=UTC)),
        # months first, then the exact part
        (datetime(2025, 3, 31, tzinfo=UTC), "P1M1D", datetime(2025, 2, 27, tzinfo=UTC)),
        (datetime(2025, 1, 15, tzinfo=UTC), "P1M", datetime(2024, 12, 15, tzinfo=UTC)),
        (datetime(2025, 3, 30, 1, tzinfo=UTC), "PT2H", datetime(2025, 3, 29, 23, tzinfo=UTC)),
        (
            datetime(2025, 1, 1, tzinfo=UTC),
            "PT0.000001S",
            datetime(2024, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
        ),
        (datetime(2025, 1, 1, tzinfo=UTC), "P3000Y", EARLIEST),
        (datetime(2025, 1, 1, tzinfo=UTC), "P739252D", EARLIEST),
    ],
)
def test_now_minus_a_duration(now: datetime, duration: str, instant: datetime) -> None:
    assert Ago.parse(duration).before(now) == instant


@given(
    st.sampled_from(["P1M", "P1Y1M", "P13M1DT5H", "P30D", "PT0.5S", "P2024Y", "P2025Y1D"]),
    st.lists(
        st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
        min_size=1,
        max_size=6,
    ),
)
def test_the_per_call_resolver_agrees_with_before(duration: str, moments: list[datetime]) -> None:
    ago = Ago.parse(duration)
    resolve = ago.resolver()  # one resolver over many instants, as a predicate uses it
    for moment in moments:
        now = moment.replace(tzinfo=UTC)
        assert resolve(now) == ago.before(now)
        later = now.replace(hour=23, minute=59) if now.hour < 23 else now
        assert resolve(later) == ago.before(later)  # the same day, from its cache


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("-P1D", "negative"),
        ("P1.5D", "only seconds take a fraction"),
        ("P0.5Y", "only seconds take a fraction"),
        ("P", "not an ISO 8601 duration"),
        ("PT", "not an ISO 8601 duration"),
        ("P1DT", "not an ISO 8601 duration"),
        ("P1D2M", "not an ISO 8601 duration"),
        ("30 days", "not an ISO 8601 duration"),
        ("PT0.0000001S", "more than six decimals"),
        ("P10001Y", "longer than 10,000 years"),
        ("P" + "9" * 40 + "D", "longer than 10,000 years"),
    ],
)
def test_bad_durations(text: str, message: str) -> None:
    with pytest.raises(DurationError, match=message):
        Ago.parse(text)


def test_negative_parts_cannot_be_built() -> None:
    with pytest.raises(ValueError, match="negative"):
        Ago(-1, 0)


# The text syntax


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("createdAt >= 30 days ago", {"createdAt": {"gte": {"ago": "P30D"}}}),
        ("createdAt >= 30 DAYS AGO", {"createdAt": {"gte": {"ago": "P30D"}}}),
        ("createdAt < 1 year 6 months ago", {"createdAt": {"lt": {"ago": "P1Y6M"}}}),
        ("createdAt > 2 weeks\n  ago", {"createdAt": {"gt": {"ago": "P14D"}}}),
        ("createdAt = 1 day ago", {"createdAt": {"equals": {"ago": "P1D"}}}),
        ("createdAt != 0 seconds ago", {"createdAt": {"not": {"equals": {"ago": "PT0S"}}}}),
        ("createdAt <= 0.25 seconds ago", {"createdAt": {"lte": {"ago": "PT0.25S"}}}),
        ("createdAt >= 1 hour 1 minute 1 second ago", {"createdAt": {"gte": {"ago": "PT1H1M1S"}}}),
    ],
)
def test_text_syntax(text: str, where: dict[str, Any]) -> None:
    flt = af.parse_text(text)
    assert flt == af.parse(where)
    assert af.parse_text(flt.to_text()) == flt


def test_a_field_may_be_named_like_a_unit() -> None:
    schema = af.Schema.of(days="number", ago="datetime")
    flt = af.parse_text("days > 3 and ago >= 3 days ago", schema)
    assert flt == af.parse({"days": {"gt": 3}, "ago": {"gte": {"ago": "P3D"}}}, schema)
    assert flt.to_text() == "days > 3 and ago >= 3 days ago"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("createdAt >= 1.5 days ago", "only seconds take a fraction"),
        ("createdAt >= 1 day 2 days ago", '"day" is given twice'),
        ("createdAt in [30 days ago]", "not allowed inside"),
        ("points > 30 days ago", "found the relative date-time 30 days ago"),
        ("email = 1 day ago", "found the relative date-time 1 day ago"),
        ("createdAt >= 10001 years ago", "longer than 10,000 years"),
    ],
)
def test_text_errors(text: str, message: str) -> None:
    with pytest.raises(af.FilterError, match=message):
        af.parse_text(text)


# Outputs


def test_sql_holds_the_instant_at_now() -> None:
    assert LAST_30_DAYS.to_sql("postgresql", now=NOW) == (
        "\"createdAt\" >= TIMESTAMP WITH TIME ZONE '2025-03-01 12:00:00.000000+00:00'"
    )
    sql, params = LAST_30_DAYS.to_sql_params("sqlite", now=NOW)
    assert (sql, params) == ('"createdAt" >= ?', ["2025-03-01 12:00:00.000000"])


def test_sql_defaults_to_the_clock_when_built() -> None:
    before = datetime.now(UTC)
    _, params = LAST_30_DAYS.to_sql_params("postgresql")
    after = datetime.now(UTC)
    assert before - timedelta(days=30) <= params[0] <= after - timedelta(days=30)


def test_sqlalchemy_binds_the_instant() -> None:
    table = Table(
        "contacts", MetaData(), Column("id", String), Column("createdAt", DateTime(timezone=True))
    )
    compiled = LAST_30_DAYS.to_sqlalchemy(table, now=NOW).compile(dialect=postgresql.dialect())
    assert list(compiled.params.values()) == [datetime(2025, 3, 1, 12, tzinfo=UTC)]


def test_explanation_shows_the_instant() -> None:
    explanation = LAST_30_DAYS.explain({"createdAt": "2025-03-10T00:00:00Z"}, now=NOW)
    assert explanation.matched
    assert explanation.instant == datetime(2025, 3, 1, 12, tzinfo=UTC)
    assert explanation.render() == (
        "✓ TRUE     createdAt >= 30 days ago [2025-03-01T12:00:00Z]"
        '   (createdAt = "2025-03-10T00:00:00Z")'
    )
    negated = af.parse_text("createdAt != 1 day ago").explain({"createdAt": NOW}, now=NOW)
    assert negated.label == "createdAt != 1 day ago [2025-03-30T12:00:00Z]"


def test_simplify_leaves_relative_ranges_and_memberships_alone() -> None:
    ranged = af.parse({"createdAt": {"gte": {"ago": "P1D"}, "lt": {"ago": "P2D"}}})
    assert ranged.simplify() == ranged and not ranged.is_unsatisfiable()
    mixed = af.parse({"createdAt": {"gte": {"ago": "P1D"}, "gt": "2025-01-01"}})
    assert mixed.simplify() == mixed
    either = af.parse_text("createdAt = 1 day ago or createdAt = 2 days ago")
    assert either.simplify() == either
    twice = af.parse_text("createdAt >= 1 day ago and createdAt >= 24 hours ago")
    assert twice.simplify().to_text() == "createdAt >= 1 day ago"


def test_json_schema_takes_the_relative_form() -> None:
    validator = jsonschema.Draft202012Validator(af.json_schema())
    assert validator.is_valid(
        {"createdAt": {"gte": {"ago": "P30D"}, "not": {"lt": {"ago": "PT1H"}}}}
    )
    assert validator.is_valid({"createdAt": {"equals": {"ago": "PT0.5S"}}})
    for invalid in (
        {"createdAt": {"ago": "P30D"}},
        {"createdAt": {"in": [{"ago": "P30D"}]}},
        {"createdAt": {"gte": {"ago": "-P30D"}}},
        {"createdAt": {"gte": {"ago": "P1.5D"}}},
        {"points": {"gte": {"ago": "P1D"}}},
    ):
        assert not validator.is_valid(invalid), invalid
