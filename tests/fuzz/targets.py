"""What the fuzzers check for each input: the readers return a Filter or raise FilterError,
and whatever they return survives every writer and back-end without an exception.

Shared by the atheris harness (`python -m tests.fuzz.run`) and the corpus replay test, so a
crash found by the fuzzer stays a regression test once its input is saved in the corpus.
"""

from __future__ import annotations

from datetime import UTC, datetime

import audiencefilter as af

SAMPLE_RECORDS = (
    {},
    {
        "email": "a@b.c",
        "points": 5,
        "createdAt": datetime(2025, 1, 1, tzinfo=UTC),
        "isVerified": True,
        "company": "",
        "country": "FR",
    },
)
DIALECTS = ("postgresql", "sqlite", "mysql", "duckdb")


def exercise(flt: af.Filter) -> None:
    """Every output of a valid filter must be produced without an exception."""
    assert af.parse(flt.to_json()) == flt
    assert af.parse_text(flt.to_text()) == flt
    for record in SAMPLE_RECORDS:
        assert flt.explain(record).matched == flt.matches(record)
    for dialect in DIALECTS:
        flt.to_sql(dialect)
        flt.to_sql_params(dialect)
    flt.simplify()


def check_json(data: bytes) -> None:
    try:
        flt = af.parse(data)
    except af.FilterError as error:
        assert error.errors
        return
    exercise(flt)


def check_text(data: bytes) -> None:
    text = data.decode("utf-8", "replace")
    try:
        flt = af.parse_text(text)
    except af.FilterError as error:
        assert error.errors
        af.render_error(error)
        return
    exercise(flt)
