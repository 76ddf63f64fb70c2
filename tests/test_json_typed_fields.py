"""Typed fields kept inside JSON (docs/semantics-json.md, "Typed fields inside JSON"): the schema
declares the type, the value lives at a path of a JSON column. The conformance file
`json_typed_fields.json` holds the answers on every engine; here are the declarations and the
refusals."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

import audiencefilter as af

SCHEMA = af.CONTACT.with_fields(
    birthday=("date", ("data", "birthday")),
    tags=("string[]", ("data", "tags")),
    score=("number", ("data", "score")),
)


def test_a_date_and_a_list_may_live_inside_json() -> None:
    birthdays = af.parse_text(
        'birthday anniversary within this week in "Europe/Paris" and tags has "vip"', schema=SCHEMA
    )
    friday = datetime(2026, 11, 20, 12, tzinfo=UTC)
    assert birthdays.matches({"data": {"birthday": "1990-11-16", "tags": ["vip"]}}, now=friday)
    assert not birthdays.matches({"data": {"birthday": "1990-11-23", "tags": ["vip"]}}, now=friday)
    assert af.parse({"score": {"gte": 10}}, SCHEMA).matches({"data": {"score": 12}})


def test_a_date_time_inside_json_is_refused_with_the_reason() -> None:
    with pytest.raises(ValueError, match="a date-time inside JSON text has no order"):
        af.CONTACT.with_fields(signedUp=("datetime", ("data", "signedUp")))


def test_a_schema_from_json_takes_the_pair_as_a_list() -> None:
    schema = af.Schema.from_mapping({"birthday": ["date", ["data", "birthday"]], "data": "json"})
    assert schema["birthday"].source == ("data", "birthday")


@pytest.mark.parametrize(
    "where",
    [
        {"tags": {"equals": ["a"]}},
        {"tags": {"has": "a", "mode": "insensitive"}},
    ],
)
def test_list_tests_a_json_array_cannot_answer_alike_are_refused(where: dict[str, object]) -> None:
    with pytest.raises(af.FilterError, match="is not read on a list kept inside JSON"):
        af.parse(where, SCHEMA)


def test_the_sql_reads_the_path_and_compares_the_text() -> None:
    sql = af.parse({"birthday": {"lt": "2000-01-01"}}, SCHEMA).to_sql("postgresql")
    assert "'2000-01-01'" in sql and "birthday" in sql and "DATE" not in sql
