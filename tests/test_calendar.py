"""Calendar-relative date-times (language/calendar.py): the start of a unit in a zone, periods
with `within`, the schema's default zone, and both readers and writers.

The conformance file tests/conformance/calendar.json pins the answers on every engine; here
the rule itself is checked against a brute-force definition on random zones and instants.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.calendar import Units, start_of, start_of_day
from audiencefilter.language.zones import zone_names
from audiencefilter.testing.strategies import CALENDAR_ZONES

ZONES = sorted(zone_names())
NOW = datetime(2025, 3, 15, 12, tzinfo=UTC)


def _first_instant_by_search(day: date, zone: ZoneInfo) -> datetime:
    """The definition, the slow way: step through the hours around the day in UTC and find,
    to the second, the first instant whose local date is `day` or later."""
    guess = datetime(day.year, day.month, day.day, tzinfo=UTC) - timedelta(hours=16)
    step = timedelta(minutes=15)
    while guess.astimezone(zone).date() < day:
        guess += step
    low = guess - step
    while guess - low > timedelta(seconds=1):
        middle = low + (guess - low) / 2
        if middle.astimezone(zone).date() < day:
            low = middle
        else:
            guess = middle
    return guess.replace(microsecond=0) if guess.microsecond else guess


@given(
    st.sampled_from(ZONES),
    st.dates(min_value=date(1970, 1, 2), max_value=date(2037, 12, 30)),
)
def test_start_of_day_is_the_first_instant_of_the_local_date(name: str, day: date) -> None:
    zone = ZoneInfo(name)
    start = start_of_day(day, zone)
    assert start.astimezone(zone).date() == day
    assert (start - timedelta(microseconds=1)).astimezone(zone).date() < day
    assert start == _first_instant_by_search(day, zone)


@pytest.mark.parametrize(
    ("zone", "day", "expected"),
    [
        # Midnight skipped: the day starts when the clocks jump to 01:00.
        ("America/Santiago", date(2022, 9, 11), "2022-09-11T04:00:00Z"),
        # 23:00-00:00 of the day before repeats; midnight itself occurs once.
        ("Asia/Beirut", date(2023, 10, 29), "2023-10-28T22:00:00Z"),
        ("Asia/Beirut", date(2024, 3, 31), "2024-03-30T22:00:00Z"),
        # Clocks back from 00:00 to 23:00 in Cuba (2023-11-05 01:00 -> 00:00, fold at midnight).
        ("America/Havana", date(2023, 11, 5), "2023-11-05T04:00:00Z"),
        ("Pacific/Chatham", date(2025, 1, 1), "2024-12-31T10:15:00Z"),
    ],
)
def test_start_of_day_on_transition_days(zone: str, day: date, expected: str) -> None:
    root = af.parse({"createdAt": {"equals": expected}}).root
    assert isinstance(root, af.Comparison)
    assert start_of_day(day, ZoneInfo(zone)) == root.value


@given(
    st.sampled_from(CALENDAR_ZONES + ("Pacific/Kiritimati", "America/St_Johns")),
    st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2036, 12, 1), timezones=st.just(UTC)
    ),
    st.sampled_from(("day", "week", "month", "year")),
    st.integers(-3, 3),
)
def test_units_start_on_their_first_day(zone: str, now: datetime, unit: str, n: int) -> None:
    tz = ZoneInfo(zone)
    start = start_of(unit, n, zone, now)
    local = start.astimezone(tz)
    today = now.astimezone(tz).date()
    assert start == start_of_day(local.date(), tz)
    if unit == "day":
        assert local.date() == today + timedelta(days=n)
    elif unit == "week":
        assert local.weekday() == 0  # ISO weeks start on Monday
        monday = today - timedelta(days=today.weekday())
        assert local.date() == monday + timedelta(weeks=n)
    elif unit == "month":
        assert local.day == 1
        assert local.year * 12 + local.month == today.year * 12 + today.month + n
    else:
        assert (local.month, local.day, local.year) == (1, 1, today.year + n)


@given(
    st.sampled_from(CALENDAR_ZONES),
    st.sampled_from(("day", "week", "month", "year")),
    st.lists(
        st.datetimes(
            min_value=datetime(2030, 1, 1), max_value=datetime(2032, 1, 1), timezones=st.just(UTC)
        ),
        min_size=1,
        max_size=40,
    ),
)
def test_the_units_remembered_are_those_start_of_finds(
    zone: str, unit: str, instants: list[datetime]
) -> None:
    """The bounds `Units` looks up (the remembered units, in any order, transitions included)
    are those `start_of` works out for each instant: the cache and the plain code agree."""
    units = Units(unit, zone)
    for now in instants + instants[::-1]:
        assert units.bounds(now) == (start_of(unit, 0, zone, now), start_of(unit, 1, zone, now))


def test_the_edges_of_the_calendar_are_clamped() -> None:
    assert start_of("year", -5000, "UTC", NOW) == datetime.min.replace(tzinfo=UTC)
    assert start_of("year", 9000, "UTC", NOW) == datetime.max.replace(tzinfo=UTC)
    flt = af.parse({"createdAt": {"gte": {"startOf": "day", "offset": -1_000_000}}})
    assert flt.matches({"createdAt": datetime(1, 1, 1, tzinfo=UTC)}, now=NOW)


TEXT_AND_JSON = [
    ("createdAt >= start of today", {"gte": {"startOf": "day"}}),
    ("createdAt < start of yesterday", {"lt": {"startOf": "day", "offset": -1}}),
    ("createdAt > start of tomorrow", {"gt": {"startOf": "day", "offset": 1}}),
    ("createdAt >= start of last month", {"gte": {"startOf": "month", "offset": -1}}),
    ("createdAt <= start of next year", {"lte": {"startOf": "year", "offset": 1}}),
    ("createdAt >= start of this week", {"gte": {"startOf": "week"}}),
    ("createdAt >= start of month -3", {"gte": {"startOf": "month", "offset": -3}}),
    (
        'createdAt >= start of week +2 in "Asia/Tokyo"',
        {"gte": {"startOf": "week", "offset": 2, "timeZone": "Asia/Tokyo"}},
    ),
    ("createdAt within today", {"within": {"this": "day"}}),
    ("createdAt within this month", {"within": {"this": "month"}}),
    ("createdAt within last 7 days", {"within": {"last": 7, "unit": "day"}}),
    ("createdAt within next week", {"within": {"next": 1, "unit": "week"}}),
    (
        'createdAt within last 2 years in "America/New_York"',
        {"within": {"last": 2, "unit": "year", "timeZone": "America/New_York"}},
    ),
]


@pytest.mark.parametrize(("text", "where"), TEXT_AND_JSON)
def test_text_and_json_forms_are_one_filter(text: str, where: dict[str, object]) -> None:
    from_json = af.parse({"createdAt": where})
    assert af.parse_text(text) == from_json
    assert from_json.to_text() == text
    assert from_json.to_dict() == {"createdAt": where}


@pytest.mark.parametrize(
    ("spelling", "canonical"),
    [
        ("createdAt >= START  OF\n This Month", "createdAt >= start of this month"),
        ("createdAt >= start of day +0", "createdAt >= start of today"),
        ("createdAt >= start of month - 1", "createdAt >= start of last month"),
        ("createdAt within last 1 day", "createdAt within last day"),
        ("createdAt within this day", "createdAt within today"),
        ("createdAt within next 1 weeks", "createdAt within next week"),
    ],
)
def test_other_text_spellings_read_to_the_canonical_one(spelling: str, canonical: str) -> None:
    assert af.parse_text(spelling).to_text() == canonical


@pytest.mark.parametrize(
    ("text", "column", "message", "suggestion"),
    [
        (
            'createdAt >= start of today in "Europe/Pariss"',
            14,
            "unknown time zone 'Europe/Pariss'",
            'did you mean "Europe/Paris" or "Europe/Warsaw" or "Europe/Madrid"?',
        ),
        (
            "createdAt >= start of last fortnight",
            14,
            "unknown calendar unit 'fortnight'",
            'write one of "day", "week", "month", "year"',
        ),
        (
            "createdAt within next 0 days",
            11,
            "next must be between 1 and 1,000,000, found 0",
            None,
        ),
        (
            "points within this month",
            8,
            '"within" applies to date-time fields; "points" is a number field',
            None,
        ),
        (
            "createdAt in [start of today]",
            15,
            'a relative date-time is not allowed inside "in"',
            None,
        ),
        (
            "data.signup within today",
            13,
            '"within" applies to date-time fields; a value inside JSON',
            None,
        ),
    ],
)
def test_text_errors_are_located(
    text: str, column: int, message: str, suggestion: str | None
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse_text(text)
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (1, column)
    assert issue.message.startswith(message)
    if suggestion is not None:
        assert issue.suggestion == suggestion


def test_a_field_may_still_be_named_like_the_words() -> None:
    schema = af.Schema.of(start="number", within="number", today="number", last="string")
    flt = af.parse_text('start > 1 and within < 2 and today = 3 and last = "x"', schema)
    assert af.parse_text(flt.to_text(), schema) == flt


def test_the_schema_zone_is_the_default() -> None:
    paris = af.CONTACT.in_zone("Europe/Paris")
    where = {"createdAt": {"within": {"this": "day"}}}
    late = {"createdAt": datetime(2025, 3, 14, 23, 30, tzinfo=UTC)}  # 00:30 on the 15th in Paris
    assert af.parse(where, paris).matches(late, now=NOW)
    assert not af.parse(where).matches(late, now=NOW)
    named = {"createdAt": {"within": {"this": "day", "timeZone": "UTC"}}}
    assert not af.parse(named, paris).matches(late, now=NOW)
    sql = af.parse(where, paris).to_sql("postgresql", now=NOW)
    assert "2025-03-14 23:00:00" in sql and "2025-03-15 23:00:00" in sql
    assert af.parse(where, paris).clock.resolve(NOW) == af.parse(
        {"createdAt": {"gte": "2025-03-14T23:00:00Z", "lt": "2025-03-15T23:00:00Z"}}, paris
    )
    assert paris.with_fields(plan="string").time_zone == "Europe/Paris"


def test_an_unknown_schema_zone_is_refused() -> None:
    with pytest.raises(ValueError, match="Europe/Paris"):
        af.CONTACT.in_zone("Europe/Pariss")


def test_the_predicate_reads_its_clock_per_call() -> None:
    flt = af.parse({"createdAt": {"within": {"this": "month", "timeZone": "Asia/Tokyo"}}})
    assert flt.clock.is_relative
    moments = iter([datetime(2025, 2, 28, 14, tzinfo=UTC), datetime(2025, 2, 28, 16, tzinfo=UTC)])
    predicate = af.compile(flt, clock=lambda: next(moments))
    record = {"createdAt": datetime(2025, 2, 10, tzinfo=UTC)}
    assert predicate(record)  # still February in Tokyo
    assert not predicate(record)  # March 1st, 01:00 in Tokyo


def test_simplify_keeps_calendar_values() -> None:
    flt = af.parse(
        {
            "createdAt": {
                "gte": {"startOf": "month"},
                "lt": {"startOf": "month", "offset": 1},
                "within": {"last": 3, "unit": "day"},
            }
        }
    )
    simpler = flt.simplify()
    for moment in (NOW, datetime(2025, 3, 1, tzinfo=UTC), datetime(2025, 4, 1, tzinfo=UTC)):
        for day in range(-40, 40):
            record = {"createdAt": moment + timedelta(days=day, hours=7)}
            assert simpler.matches(record, now=moment) == flt.matches(record, now=moment)


def test_explain_names_the_instants_and_the_zone() -> None:
    flt = af.parse(
        {"createdAt": {"within": {"this": "month"}, "gte": {"startOf": "week", "offset": -1}}},
        af.CONTACT.in_zone("Europe/Paris"),
    )
    text = flt.explain({"createdAt": datetime(2025, 3, 3, tzinfo=UTC)}, now=NOW).render()
    assert (
        "createdAt within this month [2025-02-28T23:00:00Z, 2025-03-31T22:00:00Z) "
        "in Europe/Paris" in text
    )
    assert "createdAt >= start of last week [2025-03-02T23:00:00Z] in Europe/Paris" in text


def test_json_schema_accepts_the_calendar_forms() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    validator = jsonschema.Draft202012Validator(af.json_schema())
    for _, where in TEXT_AND_JSON:
        assert validator.is_valid({"createdAt": where}), where
    assert not validator.is_valid({"createdAt": {"within": {"this": "days"}}})
    assert not validator.is_valid({"createdAt": {"gte": {"this": "month"}}})
    assert not validator.is_valid({"points": {"within": {"this": "month"}}})


# ---- anniversaries -------------------------------------------------------------------------


def _anniversary_by_definition(record: datetime, zone: str, first: date, end: date) -> bool:
    """Some day of the window is the record's local month and day in that day's year, with
    29 February on 28 February in a common year."""
    local = record.astimezone(ZoneInfo(zone)).date()
    day = first
    while day < end:
        try:
            this_year = local.replace(year=day.year)
        except ValueError:  # 29 February in a common year
            this_year = date(day.year, 2, 28)
        if this_year == day:
            return True
        day += timedelta(days=1)
    return False


@given(
    st.sampled_from(ZONES),
    st.datetimes(
        min_value=datetime(1971, 1, 1), max_value=datetime(2036, 12, 1), timezones=st.just(UTC)
    ),
    st.datetimes(
        min_value=datetime(1900, 1, 2), max_value=datetime(2099, 12, 30), timezones=st.just(UTC)
    ),
    st.sampled_from(("day", "week", "month", "year")),
    st.sampled_from(("this", "last", "next")),
    st.integers(1, 40),
)
def test_anniversaries_follow_their_definition(
    zone: str, now: datetime, record: datetime, unit: str, kind: str, count: int
) -> None:
    period = {"this": unit} if kind == "this" else {kind: count, "unit": unit}
    flt = af.parse({"createdAt": {"anniversary": {**period, "timeZone": zone}}})
    tz = ZoneInfo(zone)
    start, end = (0, 1) if kind == "this" else (-count, 0) if kind == "last" else (1, count + 1)
    first = start_of(unit, start, zone, now).astimezone(tz).date()
    last = start_of(unit, end, zone, now).astimezone(tz).date()
    expected = _anniversary_by_definition(record, zone, first, last)
    assert flt.matches({"createdAt": record}, now=now) is expected
    assert flt.explain({"createdAt": record}, now=now).matched is expected


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ("createdAt anniversary within today", {"this": "day"}),
        ("createdAt anniversary within this month", {"this": "month"}),
        ("createdAt anniversary within next 7 days", {"next": 7, "unit": "day"}),
        (
            'createdAt anniversary within last week in "Europe/Paris"',
            {"last": 1, "unit": "week", "timeZone": "Europe/Paris"},
        ),
    ],
)
def test_anniversary_text_and_json(text: str, where: dict[str, object]) -> None:
    from_json = af.parse({"createdAt": {"anniversary": where}})
    assert af.parse_text(text) == from_json
    assert from_json.to_text() == text
    assert from_json.to_dict() == {"createdAt": {"anniversary": where}}


def test_anniversary_explain_shows_the_month_days() -> None:
    flt = af.parse({"createdAt": {"anniversary": {"next": 7, "unit": "day"}}})
    now = datetime(2025, 12, 28, 12, tzinfo=UTC)
    text = flt.explain({"createdAt": "1999-12-31"}, now=now).render()
    assert "createdAt anniversary within next 7 days [01-01..01-04, 12-29..12-31] in UTC" in text


def test_anniversary_on_mysql_outside_utc_is_refused() -> None:
    now = datetime(2025, 12, 28, 12, tzinfo=UTC)
    utc = af.parse({"createdAt": {"anniversary": {"this": "day"}}})
    assert "DAYOFMONTH" in utc.to_sql("mysql", now=now)
    paris = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": "Europe/Paris"}}})
    with pytest.raises(af.FilterError) as caught:
        paris.to_sql("mysql", now=now)
    issue = caught.value.errors[0]
    assert issue.path == "createdAt.anniversary"
    assert "time zone tables" in issue.message
    # Not a parse error: every other engine answers it.
    for dialect in ("postgresql", "sqlite", "duckdb", "spark"):
        assert "BETWEEN 1228 AND 1228" in paris.to_sql(dialect, now=now)


def test_anniversary_on_plain_sqlite_outside_utc_stops_rather_than_answers() -> None:
    import sqlite3

    now = datetime(2025, 6, 14, 23, tzinfo=UTC)
    flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": "Europe/Paris"}}})
    sql = f"SELECT id FROM t WHERE {flt.to_sql('sqlite', now=now)}"
    connection = sqlite3.connect(":memory:")
    connection.execute('CREATE TABLE t (id TEXT, "createdAt" TEXT)')
    connection.execute("INSERT INTO t VALUES ('a', '1995-06-14 23:30:00.000000')")
    with pytest.raises(sqlite3.OperationalError, match="no such function"):
        connection.execute(sql).fetchall()
    af.register_sqlite_functions(connection)
    assert connection.execute(sql).fetchall() == [("a",)]


def test_a_calendar_key_in_the_operators_is_explained() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse({"createdAt": {"startOf": "month"}})
    issue = caught.value.errors[0]
    assert issue.path == "createdAt.startOf"
    assert issue.suggestion is not None and '{"gte": {"startOf": "month"}}' in issue.suggestion


def test_resolve_keeps_anniversaries_relative() -> None:
    flt = af.parse(
        {"createdAt": {"anniversary": {"this": "day"}, "within": {"this": "year"}}},
    )
    resolved = flt.clock.resolve(NOW)
    assert resolved.to_dict() == {
        "AND": [
            {"createdAt": {"anniversary": {"this": "day"}}},
            {"createdAt": {"gte": "2025-01-01T00:00:00Z", "lt": "2026-01-01T00:00:00Z"}},
        ]
    }
    assert resolved.clock.is_relative


@pytest.mark.parametrize("column", ["naive", "zoned", "date"])
def test_polars_anniversaries_on_every_date_time_dtype(column: str) -> None:
    pl = pytest.importorskip("polars")
    values = [datetime(1995, 6, 14, 23, 30), datetime(1995, 6, 15, 12), None]
    series = pl.Series("createdAt", values, dtype=pl.Datetime("us"))
    if column == "zoned":
        series = series.dt.replace_time_zone("UTC").dt.convert_time_zone("America/New_York")
    elif column == "date":
        series = series.cast(pl.Date)
    frame = pl.DataFrame({"id": ["late", "noon", "null"], "createdAt": series})
    records = [
        {"id": i, "createdAt": None if v is None else v.replace(tzinfo=UTC)}
        for i, v in zip(["late", "noon", "null"], values, strict=True)
    ]
    if column == "date":
        records[0]["createdAt"] = datetime(1995, 6, 14, tzinfo=UTC)
        records[1]["createdAt"] = datetime(1995, 6, 15, tzinfo=UTC)
    now = datetime(2025, 6, 15, 8, tzinfo=UTC)
    for zone in ("UTC", "Europe/Paris", "America/Los_Angeles", "Asia/Tokyo"):
        flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": zone}}})
        expected = {r["id"] for r in records if flt.matches(r, now=now)}
        assert set(flt.select_frame(frame, now=now)["id"].to_list()) == expected, zone


def test_anniversary_predicate_moves_at_local_midnight() -> None:
    flt = af.parse({"createdAt": {"anniversary": {"this": "day", "timeZone": "Asia/Kolkata"}}})
    moments = iter(
        [
            datetime(2025, 6, 14, 18, 29, 59, 999999, tzinfo=UTC),  # 23:59:59.999999 in Kolkata
            datetime(2025, 6, 14, 18, 30, tzinfo=UTC),  # midnight: 15 June
            datetime(2025, 6, 14, 12, tzinfo=UTC),  # a clock set back: 14 June again
        ]
    )
    predicate = af.compile(flt, clock=lambda: next(moments))
    record = {"createdAt": datetime(1990, 6, 14, 12, tzinfo=UTC)}
    assert [predicate(record), predicate(record), predicate(record)] == [True, False, True]
