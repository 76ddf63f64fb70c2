"""The public helpers the command line is built on: format and dialect names kept equal to the
writers' own lists, and the library's reading and writing of date-time and date values."""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest

import audiencefilter as af


def test_format_names_are_the_formats_filters_convert_to_and_from() -> None:
    flt = af.parse('{"country": {"equals": "FR"}}')
    written = af.format_names()
    assert "english" in written and "jsonlogic" in written
    for name in written:
        assert flt.to_format(name) is not None
    readable = af.format_names(readable=True)
    assert set(readable) == set(written) - {"english"}
    for name in readable:
        assert af.from_format(flt.to_format(name), name) == flt


def test_sql_dialects_are_the_names_to_sql_takes_aliases_included() -> None:
    names = af.sql_dialects()
    assert names == tuple(sorted(names))
    assert {"postgresql", "postgres", "sqlite", "mysql", "mariadb"} <= set(names)
    flt = af.parse('{"points": {"gte": 100}}')
    for name in names:
        assert "100" in flt.to_sql(name)
    with pytest.raises(ValueError):
        flt.to_sql("oracle")


def test_parse_datetime_reads_as_filters_do() -> None:
    assert af.parse_datetime("2025-01-31") == datetime(2025, 1, 31, tzinfo=UTC)
    assert af.parse_datetime("2025-01-31T10:00:00+01:00") == datetime(2025, 1, 31, 9, tzinfo=UTC)
    with pytest.raises(ValueError):
        af.parse_datetime("31/01/2025")


def test_parse_date_takes_the_extended_form_only() -> None:
    assert af.parse_date("1990-11-23") == date(1990, 11, 23)
    for text in ("19901123", "1990-11-23T00:00:00Z"):
        with pytest.raises(ValueError):
            af.parse_date(text)


def test_json_value_writes_values_as_the_where_clause_does() -> None:
    instant = datetime(2025, 1, 31, 9, 30, tzinfo=UTC)
    assert af.json_value(instant) == "2025-01-31T09:30:00Z"
    assert af.json_value(date(1990, 11, 23)) == "1990-11-23"
    assert af.json_value((instant, 3)) == ["2025-01-31T09:30:00Z", 3]
    assert af.json_value("FR") == "FR"
    flt = af.parse('{"createdAt": {"gte": "2025-01-31T09:30:00Z"}}')
    assert '"2025-01-31T09:30:00Z"' in flt.to_json()


def test_month_days_is_what_an_anniversary_resolves_to() -> None:
    flt = af.parse_text("createdAt anniversary within this week")
    (instant,) = flt.clock.instants(datetime(2025, 1, 31, tzinfo=UTC))
    assert isinstance(instant, af.MonthDays)
    assert instant.words
