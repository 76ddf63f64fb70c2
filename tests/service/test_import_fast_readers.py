"""The import's readers answer the same with their fast paths on and off.

`domain/fast_rows.FAST_READERS` judges ASCII text by a string method instead of the pattern and
`check_text`, takes an ASCII email as it is, and finds a row's readers by the order of its keys.
Every row, ordinary or hostile, must come out of `import_rows.read` the same either way; and
for every ASCII character the method agrees with the pattern it replaces.
"""

from __future__ import annotations

import os
import re
from datetime import UTC, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiencefilter.service.db.models import List
from audiencefilter.service.domain import fast_rows, import_rows
from audiencefilter.service.domain.contact_import import InvalidRow
from audiencefilter.service.ground import clock, fields

from .test_import_fast_rows import PLAIN, TYPED, _exact, rows

hostile = st.one_of(
    st.text(max_size=12),
    st.text(st.characters(max_codepoint=127), max_size=12),
    st.sampled_from(["", "a\x00b", "\x00", "\ud800", "a\udfff", "e\u0301", "a\n", "a\x7f", "\t"]),
    st.sampled_from(["a\x9f", "\u00a0", "x" * 255, "x" * 256, "y" * 2049, "a@b", "a@@b"]),
)
emails = st.one_of(
    st.builds(lambda a, b: f"{a}@{b}", hostile, hostile),
    st.sampled_from(["ADA@EXAMPLE.COM", "e\u0301@x.fr", "a b@c.d", "@b.c", "a@", "a@b\x00"]),
    hostile,
)
instants = st.one_of(
    st.sampled_from(
        [
            "2019-05-01t09:30:00z",
            "2019-05-01T09:30:00Z",
            "2019-05-01T09:30:00+00:00",
            "2019-05-01T09:30:00-00:00",
            "2019-05-01T09:30:00+14:00",
            "0001-01-01T00:00:00+01:00",
            "9999-12-31T23:59:59-01:00",
            "2019-05-01T09:30:00",
        ]
    ),
    st.datetimes(timezones=st.timezones()).map(datetime.isoformat),
)


def _read(value: Any, lst: List, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(fast_rows, "FAST_READERS", fast)
    row = import_rows.read(7, value, lst)
    if isinstance(row, InvalidRow):
        return ("invalid", row.number, row.errors)
    return ("valid", row.number, _exact(row.fields), row.actions)


def _same(value: Any, lst: List, monkeypatch: pytest.MonkeyPatch) -> None:
    assert _read(value, lst, True, monkeypatch) == _read(value, lst, False, monkeypatch)


CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this run is the `ci` size, where the property below draws 300 examples; the
`thorough`, `deep` and `search` profiles draw 800. Drawing them is most of its time: 11 to
16 s of a `make test` worker at the full count."""


@settings(
    max_examples=300 if CI else 800, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(value=rows, typed=st.booleans())
def test_rows_read_alike(value: Any, typed: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    _same(value, TYPED if typed else PLAIN, monkeypatch)


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    texts=st.fixed_dictionaries({key: hostile for key in fast_rows._TEXTS}),
    email=emails,
    created=instants,
)
def test_hostile_fields_read_alike(
    texts: dict[str, str], email: str, created: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    for key, text in texts.items():
        _same({"email": "ada@example.com", key: text}, PLAIN, monkeypatch)
    _same({"email": email, "firstName": "Ada"}, PLAIN, monkeypatch)
    _same({"email": "ada@example.com", "createdAt": created}, PLAIN, monkeypatch)


@pytest.mark.parametrize("pattern", sorted(fast_rows._ASCII_RULES))
def test_each_ascii_rule_is_its_pattern(pattern: str) -> None:
    """A pattern of one character class matches a text whole when it matches each character:
    every ASCII character, and a few texts, are judged alike."""
    rule, compiled = fast_rows._ASCII_RULES[pattern], re.compile(pattern)
    for code in range(128):
        text = chr(code)
        assert rule(text) == (compiled.fullmatch(text) is not None), repr(text)
    for text in ("", "Ada Lovelace", "a\nb", "a\x00", "tab\there", "~\x7f"):
        assert rule(text) == (compiled.fullmatch(text) is not None), repr(text)


def test_rows_of_many_key_orders_are_read_alike(monkeypatch: pytest.MonkeyPatch) -> None:
    """Past `MOST_SHAPES` orders the readers are found afresh, and still read the same."""
    keys = ["email", "firstName", "points", "city"]
    values = {"email": "a@b.c", "firstName": "Ada", "points": 3, "city": "Zürich"}
    for number in range(fast_rows.MOST_SHAPES + 30):
        order = keys[number % 4 :] + keys[: number % 4]
        extra = {f"x{number}": 1} if number % 3 == 0 else {}
        _same({**{key: values[key] for key in order}, **extra}, PLAIN, monkeypatch)
    assert len(fast_rows._SHAPES) <= fast_rows.MOST_SHAPES


@pytest.mark.parametrize(
    "moment",
    [
        datetime(2020, 1, 1, tzinfo=UTC),
        datetime(2020, 1, 1, tzinfo=timezone(timedelta(hours=2))),
        datetime(2020, 1, 1, tzinfo=timezone(timedelta(0), "GMT")),
        datetime(2020, 1, 1),
    ],
)
def test_the_clock_reads_in_utc(moment: datetime) -> None:
    """`clock.now` hands a UTC reading back as it is and converts any other."""
    with clock.using(lambda: moment):
        now = clock.now()
    assert now.tzinfo is UTC and now.replace(tzinfo=None) == fields.as_utc(moment).replace(
        tzinfo=None
    )
