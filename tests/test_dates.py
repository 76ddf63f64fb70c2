"""Calendar dates: a `date` field holds days without a time or a zone (docs/semantics-calendar.md,
"Dates"). The conformance file `tests/conformance/dates.json` holds the fixed cases on every
back-end; here are the cases the issue named, and properties against the oracle and the
real engines."""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import records, where_clauses
from tests.oracle import evaluate
from tests.wide_engines import Engines, agree

BIRTHDAYS = af.CONTACT.with_fields(birthday="date")
FRIDAY = datetime(2026, 11, 20, 12, tzinfo=UTC)  # the week of Monday 16 to Sunday 22 November
NOWS = (
    FRIDAY,
    datetime(2026, 11, 22, 20, tzinfo=UTC),  # Sunday evening in UTC, Monday in Kiritimati
    datetime(2027, 2, 28, 12, tzinfo=UTC),  # 28 February of a common year
    datetime(2026, 3, 29, 1, 30, tzinfo=UTC),  # Paris' clocks jump that night
)


def test_a_birthday_this_week_in_new_york_is_the_date_itself() -> None:
    """As a date-time, 1990-11-23 meant midnight UTC, the evening of 22 November in New York:
    it joined the week of 16 to 22 November and 1990-11-16 left it. A date never shifts."""
    flt = af.parse_text(
        'birthday anniversary within this week in "America/New_York"', schema=BIRTHDAYS
    )
    chosen = [
        day
        for day in ("1990-11-15", "1990-11-16", "1990-11-22", "1990-11-23")
        if flt.matches({"birthday": day}, now=FRIDAY)
    ]
    assert chosen == ["1990-11-16", "1990-11-22"]


def test_a_python_date_is_a_date_and_a_datetime_is_refused() -> None:
    flt = af.parse({"birthday": {"lt": "2000-01-01"}}, BIRTHDAYS)
    assert flt.matches({"birthday": date(1990, 11, 23)})
    assert not flt.matches({"birthday": date(2000, 1, 1)})
    with pytest.raises(af.RecordError, match='field "birthday" holds datetime'):
        flt.matches({"birthday": datetime(1990, 11, 23, tzinfo=UTC)})


def test_a_date_time_literal_is_refused_with_the_fix() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse({"birthday": {"gte": "1990-11-23T00:00:00Z"}}, BIRTHDAYS)
    text = str(caught.value)
    assert "birthday.gte" in text and "expected an ISO 8601 date" in text
    assert 'write the day alone, e.g. "1990-11-23"' in text


def test_dates_round_trip_through_json_and_text() -> None:
    for written in (
        "birthday >= 1990-11-23",
        "birthday in [1990-11-16, 2000-02-29]",
        "birthday within this month",
        "birthday >= 30 days ago",
        'birthday anniversary within this week in "Europe/Paris"',
    ):
        flt = af.parse_text(written, schema=BIRTHDAYS)
        assert af.parse(flt.to_json(), BIRTHDAYS) == flt
        assert af.parse_text(flt.to_text(), schema=BIRTHDAYS) == flt


def test_relative_values_are_the_local_date_in_the_schema_zone() -> None:
    """At 02:00 UTC on 1 December it is still 30 November in New York: `start of today` is
    that date there."""
    late = datetime(2026, 12, 1, 2, tzinfo=UTC)
    flt = af.parse({"birthday": {"gte": {"startOf": "day"}}}, BIRTHDAYS.in_zone("America/New_York"))
    assert flt.matches({"birthday": "2026-11-30"}, now=late)
    assert not flt.matches({"birthday": "2026-11-29"}, now=late)
    utc = af.parse({"birthday": {"gte": {"startOf": "day"}}}, BIRTHDAYS)
    assert not utc.matches({"birthday": "2026-11-30"}, now=late)


def test_polars_and_sql_read_date_columns() -> None:
    import polars as pl

    frame = pl.DataFrame(
        {"id": ["a", "b"], "birthday": [date(1990, 11, 16), date(1990, 11, 23)]},
        schema={"id": pl.String, "birthday": pl.Date},
    )
    flt = af.parse_text(
        'birthday anniversary within this week in "America/New_York"', schema=BIRTHDAYS
    )
    assert flt.select_frame(frame, now=FRIDAY)["id"].to_list() == ["a"]
    wrong = frame.with_columns(pl.col("birthday").cast(pl.Datetime("us", "UTC")))
    with pytest.raises(af.RecordError, match="a date field holds days"):
        flt.select_frame(wrong, now=FRIDAY)
    assert flt.to_sql("postgresql", now=FRIDAY) == (
        "CAST(to_char(\"birthday\", 'MMDD') AS INTEGER) BETWEEN 1116 AND 1122"
    )


DATED = af.Schema.of("dated", birthday="date", signup="date", email="string")
"""Two date fields (so references between them are drawn) and a string."""
_dated = where_clauses(DATED, max_leaves=4)
_rows = st.lists(records(DATED), max_size=6)


@settings(max_examples=max(10, settings().max_examples // 4))
@given(_dated, _rows, st.sampled_from(NOWS))
def test_dates_in_memory_agree_with_the_oracle(
    where: dict[str, Any], rows: list[dict[str, Any]], now: datetime
) -> None:
    flt = af.parse(where, DATED)
    for row in rows:
        assert flt.matches(row, now=now) is (evaluate(flt, row, now) is True), row


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Engines:
    return Engines.open(request)


@settings(max_examples=max(10, settings().max_examples // 8))
@given(st.lists(_dated, min_size=1, max_size=3), _rows, st.sampled_from(NOWS))
def test_every_engine_selects_the_dates_memory_selects(
    engines: Engines, wheres: list[dict[str, Any]], rows: list[dict[str, Any]], now: datetime
) -> None:
    rows = [{"id": f"r{index}", **row} for index, row in enumerate(rows)]
    agree(engines, wheres, rows, schema=DATED, now=now)


def test_resolve_writes_a_date_field_as_dates() -> None:
    """`resolve` gives date fields the local dates lowering gives them, so the resolved filter
    reads back (a date-time literal on a date field would be refused)."""
    flt = af.parse_text(
        'birthday within this month and birthday >= start of this week in "Pacific/Kiritimati"'
        " and createdAt >= 30 days ago",
        schema=BIRTHDAYS,
    )
    resolved = flt.clock.resolve(datetime(2026, 10, 31, 12, tzinfo=UTC))
    assert resolved.to_text() == (
        "(birthday >= 2026-10-01 and birthday < 2026-11-01) and birthday >= 2026-10-26 and "
        "createdAt >= 2026-10-01T12:00:00Z"
    )
    assert af.parse(resolved.to_json(), BIRTHDAYS) == resolved


_ROW_FIELDS = {
    "day": "date",
    "at": "datetime",
    "data": "json",
    "jday": ("date", ("data", "jday")),
}
_ROWS = af.Schema.from_mapping(_ROW_FIELDS, name="visit")
PLACED = af.CONTACT.with_fields(**{k: v for k, v in _ROW_FIELDS.items() if k != "data"})
PLACED = PLACED.with_relations(af.Relation("visits", _ROWS))
_RELATIVE = [
    {"gte": {"ago": "P3D"}},
    {"lt": {"startOf": "week", "offset": -1}},
    {"gte": {"startOf": "day", "timeZone": "Asia/Tokyo"}},
    {"within": {"this": "month"}},
    {"within": {"last": 7, "unit": "day"}},
    {"not": {"within": {"next": 1, "unit": "day"}}},
]
_NESTS = {
    "contact": lambda c: c,
    "some": lambda c: {"visits": {"some": c}},
    "every": lambda c: {"visits": {"every": c}},
    "count where": lambda c: {"visits": {"where": c, "count": {"gte": 1}}},
    "NOT none": lambda c: {"NOT": {"visits": {"none": c}}},
}


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "America/Los_Angeles"])
@pytest.mark.parametrize("nest", list(_NESTS))
@pytest.mark.parametrize("field", ["day", "jday", "at"])
def test_resolve_writes_dates_as_dates_inside_relations_too(
    zone: str, nest: str, field: str
) -> None:
    """Inside `some`/`every`/`none`/`count where`, `resolve` wrote a date field's relative
    values as instants, which `parse` refuses. A date (a column, declared inside JSON) or a
    date-time (a column: JSON holds none), at contact level and in related rows, reads back
    and selects what the relative filter selects at that `now`."""
    schema = PLACED.in_zone(zone)
    now = datetime(2026, 11, 22, 23, 30, tzinfo=UTC)  # Monday in Kiritimati, Sunday elsewhere
    days = [date(2026, 10, 20 + n).isoformat() for n in range(0, 12, 3)]
    days += [date(2026, 11, n).isoformat() for n in (1, 2, 9, 15, 16, 21, 22, 23, 24, 30)]
    for test in _RELATIVE:
        flt = af.parse(_NESTS[nest]({field: test}), schema)
        resolved = flt.clock.resolve(now)
        assert not resolved.clock.is_relative
        assert af.parse(resolved.to_json(), schema) == resolved
        for day in days:
            value: Any = day if field in ("day", "jday") else f"{day}T10:00:00Z"
            row = {"data": {field: value}} if field.startswith("j") else {field: value}
            record = {**row, "visits": [row]}
            assert resolved.matches(record) == flt.matches(record, now=now), (test, day)


def test_resolve_takes_an_aggregate_of_dates_as_a_date() -> None:
    """`min(visits.day) >= 3 days ago` compares a date: the resolved value is one."""
    flt = af.parse({"visits": {"min": {"day": {"gte": {"ago": "P3D"}}}}}, PLACED)
    resolved = flt.clock.resolve(datetime(2026, 11, 22, 23, 30, tzinfo=UTC))
    assert resolved.to_dict() == {"visits": {"min": {"day": {"gte": "2026-11-19"}}}}
    assert af.parse(resolved.to_json(), PLACED) == resolved


@pytest.mark.parametrize("zone", ["UTC", "Pacific/Kiritimati", "America/Los_Angeles"])
@pytest.mark.parametrize("function", ["min", "max"])
@pytest.mark.parametrize("field", ["day", "at"])
def test_resolve_of_an_aggregate_reads_back_under_any_negation(
    zone: str, function: str, field: str
) -> None:
    """`min(rows.at) not within this day` resolved to a range left inside the aggregate's
    `not`, which neither writer could spell (`KeyError` in `to_json`). The range is moved
    outside the aggregate, as the readers build it: it reads back from JSON and from text,
    and selects what the relative filter selects at that `now`."""
    schema = PLACED.in_zone(zone)
    now = datetime(2026, 11, 22, 23, 30, tzinfo=UTC)
    days = [date(2026, 11, n).isoformat() for n in (1, 16, 21, 22, 23, 24)]
    for test in _RELATIVE:
        for negate in (False, True):
            body = {"not": test} if negate else test
            flt = af.parse({"visits": {function: {field: body}}}, schema)
            resolved = flt.clock.resolve(now)
            assert af.parse(resolved.to_json(), schema) == resolved, (test, negate)
            assert af.parse_text(resolved.to_text(), schema=schema) == resolved, (test, negate)
            for first, second in zip(days, days[1:], strict=False):
                rows = []
                for day in (first, second):
                    rows.append({field: day if field == "day" else f"{day}T10:00:00Z"})
                record = {"visits": rows}
                assert resolved.matches(record) == flt.matches(record, now=now), (test, first)


def test_a_hand_built_negated_aggregate_of_a_group_is_written_in_the_readers_form() -> None:
    """A `Not` around an aggregate whose test is a group (a tree built by hand) is written as
    the readers' form, the group moved outside the aggregate, by both writers."""
    from audiencefilter.language.nodes import Aggregated, And, Comparison, Const, Not, Op

    test = And(
        (Comparison("day", Op.GTE, date(2026, 1, 1)), Comparison("day", Op.LT, date(2026, 2, 1)))
    )
    hand = af.Filter(Not(Aggregated("visits", af.Aggregate.MIN, "day", test, Const(True))), PLACED)
    expected = {
        "NOT": {
            "AND": [
                {"visits": {"min": {"day": {"gte": "2026-01-01"}}}},
                {"visits": {"min": {"day": {"lt": "2026-02-01"}}}},
            ]
        }
    }
    assert hand.to_dict() == expected
    assert af.parse_text(hand.to_text(), schema=PLACED).to_dict() == expected


EDGE_INSTANTS = [
    (datetime(1, 1, 1, tzinfo=UTC), "Pacific/Kiritimati"),  # LMT -10:29:20: 31 December, year 0
    (datetime(1, 1, 1, tzinfo=UTC), "America/Los_Angeles"),
    (datetime(9999, 12, 31, 12, tzinfo=UTC), "Pacific/Kiritimati"),  # 1 January, year 10000
    (datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC), "Pacific/Kiritimati"),
]


@pytest.mark.parametrize("unit", ["day", "week", "month", "year"])
@pytest.mark.parametrize(("moment", "zone"), EDGE_INSTANTS, ids=lambda v: str(v))
def test_the_oracle_and_memory_read_an_edge_instants_local_month_day_alike(
    moment: datetime, zone: str, unit: str
) -> None:
    """An instant whose local date is in year 0 or 10000 has its anniversary on the proleptic
    calendar's month-day (docs/semantics-calendar.md): the oracle read it as 1 January of year 1
    or 31 December 9999 (the representable edge), and disagreed with every back-end."""
    schema = af.Schema.of("edge", when="datetime")
    for now in (datetime(2026, 1, 1, 10, 30, tzinfo=UTC), datetime(2025, 12, 31, 12, tzinfo=UTC)):
        for where in (
            {"when": {"anniversary": {"this": unit, "timeZone": zone}}},
            {"when": {"not": {"anniversary": {"this": unit, "timeZone": zone}}}},
        ):
            record = {"when": moment}
            flt = af.parse(where, schema)
            assert evaluate(flt, record, now) is flt.matches(record, now=now), (where, now)


WHOLE_YEAR_NOWS = [
    datetime(2024, 2, 29, 12, tzinfo=UTC),  # a leap year: "this year" covers 366 days
    datetime(2024, 12, 31, 23, 30, tzinfo=UTC),  # 1 January 2025 in Paris
    datetime(2025, 6, 1, tzinfo=UTC),
]
WHOLE_YEAR_PERIODS = [
    {"this": "year", "timeZone": "Europe/Paris"},
    {"this": "year"},
    {"last": 2, "unit": "year"},
    {"next": 1, "unit": "year"},
    {"last": 400, "unit": "day", "timeZone": "Pacific/Kiritimati"},
    {"this": "month"},
]
TEXTS_AT_A_DATE_PATH = ["ß", "", "x", "12-25", "x-12-25", "2024-02-30", "1990-02-29", "2001-07-04"]


@pytest.mark.parametrize("text", TEXTS_AT_A_DATE_PATH)
def test_a_texts_anniversary_over_every_month_day_still_reads_how_it_ends(text: str) -> None:
    """A date declared inside JSON has its anniversary by how its text ends
    (docs/semantics-json.md), also over a period that covers every month-day: the oracle took
    such a period (a leap year's "this year") as TRUE for any text, `"ß"` included, and
    disagreed with every back-end."""
    schema = af.CONTACT.with_fields(birthday=("date", ("data", "birthday")))
    record = {"data": {"birthday": text}}
    for now in WHOLE_YEAR_NOWS:
        for period in WHOLE_YEAR_PERIODS:
            for where in (
                {"birthday": {"anniversary": period}},
                {"birthday": {"not": {"anniversary": period}}},
            ):
                flt = af.parse(where, schema)
                expected = evaluate(flt, record, now)
                assert expected is flt.matches(record, now=now), (where, now)
                assert expected is af.compile(flt, clock=lambda now=now: now)(record)
