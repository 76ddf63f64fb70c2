"""The fast reader of import rows answers exactly as pydantic alone.

`domain/fast_rows.fast_fields` reads rows of the ordinary shapes without pydantic and leaves
any other row to it: every row, ordinary or odd, must come out of `import_rows.read` the same
(its fields with their types, its actions, or its errors word for word) with the fast reader on
and off.
"""

from __future__ import annotations

import os
from datetime import datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiencefilter.service.db.models import List
from audiencefilter.service.domain import fast_rows, import_rows
from audiencefilter.service.domain.contact_import import ImportRow, InvalidRow

LIST_ID = "lst_fast"
PLAIN = List(id=LIST_ID, customFields=[])
TYPED = List(id=LIST_ID, customFields=[{"key": "birthday", "type": "date"}])

texts = st.one_of(
    st.text(max_size=20),
    st.text(max_size=5).map(lambda text: text + "\n"),
    st.sampled_from(["", " ", "a\n", "a\x00b", "\ud800", "Zoë", "x" * 256, "é\u0085", "a\t"]),
)
emails = st.one_of(
    st.sampled_from(
        ["ada@example.com", "ADA@Example.COM", " ada@example.com", "a b@c.d", "a@b", "@b.c"]
    ),
    st.sampled_from(
        ["a@b\n", "e\u0301@x.fr", "\u00e9@x.fr", "a@\ud800", "a@b@c", "x" * 250 + "@b.c"]
    ),
    st.builds(lambda a, b: f"{a}@{b}", texts, texts),
    st.integers(),
    st.none(),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.integers(min_value=2**53 - 2, max_value=2**64),
    st.integers(min_value=-(2**64), max_value=-(2**53) + 2),
    st.floats(),
    texts,
)
json_values = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=3) | st.dictionaries(texts, inner, max_size=3)
)
instants = st.one_of(
    st.sampled_from(
        [
            "2019-05-01T09:30:00+02:00",
            "2019-05-01T09:30:00Z",
            "2019-05-01t09:30:00z",
            "2019-05-01T09:30:00",
            "2019-05-01",
            "1969-12-31T23:59:59Z",
            "2999-01-01T00:00:00Z",
            "not a date",
            "",
        ]
    ),
    st.datetimes().map(lambda moment: moment.isoformat()),
    scalars,
)
FIELDS: dict[str, Any] = {
    **dict.fromkeys(
        [
            "firstName",
            "lastName",
            "name",
            "company",
            "country",
            "city",
            "socialOne",
            "socialTwo",
            "phoneNumber",
            "address",
            "website",
        ],
        st.one_of(st.none(), texts, scalars),
    ),
    "email": emails,
    "points": scalars,
    "referrals": scalars,
    "isVerified": scalars,
    "unsubscribed": scalars,
    "isGDPR": scalars,
    "data": st.one_of(st.dictionaries(texts, json_values, max_size=3), json_values),
    "createdAt": instants,
    "listId": st.sampled_from([LIST_ID, "lst_other", "", None, 5]),
    "actions": st.one_of(
        st.none(),
        st.lists(
            st.fixed_dictionaries({"name": texts, "increase": scalars, "createdAt": instants}),
            max_size=2,
        ),
    ),
    "birthday": st.one_of(st.sampled_from(["1990-11-23", "1990-02-30"]), scalars),
    "id": texts,
    "referralCode": texts,
    "surname": texts,
    "": scalars,
}
ordinary = st.fixed_dictionaries(
    {"email": st.sampled_from(["ada@example.com", "Grace@Example.com", "zoë@example.fr"])},
    optional={
        "firstName": st.one_of(st.none(), st.text(max_size=10)),
        "company": st.one_of(st.none(), st.text(max_size=10)),
        "points": st.integers(-(2**54), 2**54),
        "referrals": st.integers(-1, 10),
        "isVerified": st.booleans(),
        "data": st.dictionaries(st.text(max_size=5), json_values, max_size=3),
        "createdAt": instants,
        "listId": st.just(LIST_ID),
    },
)
odd = st.fixed_dictionaries({}, optional=FIELDS)
one_odd_field = st.sampled_from(sorted(FIELDS)).flatmap(
    lambda key: FIELDS[key].map(lambda value: {key: value})
)
changed = st.builds(
    lambda base, changes: {**base, **{k: v for change in changes for k, v in change.items()}},
    ordinary,
    st.lists(one_odd_field, min_size=1, max_size=2),
)
"""An ordinary row with one or two fields of any value: the rows the fast reader nearly takes."""
rows = st.one_of(ordinary, changed, odd, json_values)


def _exact(value: Any) -> Any:
    """A value with the type of every part spelled out: `True` is not `1`, nor `1.0`."""
    if isinstance(value, dict):
        return ("dict", [(_exact(key), _exact(item)) for key, item in value.items()])
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_exact(item) for item in value])
    if isinstance(value, datetime):
        return ("datetime", value.isoformat(), repr(value.tzinfo))
    return (type(value).__name__, repr(value))


def _read(value: Any, lst: List, fast: bool, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.setattr(import_rows, "FAST_ROWS", fast)
    row = import_rows.read(7, value, lst)
    if isinstance(row, InvalidRow):
        return ("invalid", row.number, row.errors)
    assert isinstance(row, ImportRow)
    return ("valid", row.number, _exact(row.fields), row.actions)


CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this run is the `ci` size, where the property below draws 400 examples; the
`thorough`, `deep` and `search` profiles draw 1,500. Drawing them is most of its time: 27 to
38 s of a `make test` worker at the full count."""


@settings(
    max_examples=400 if CI else 1500,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture],
)
@given(value=rows, typed=st.booleans())
def test_the_fast_reader_answers_as_pydantic(
    value: Any, typed: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    lst = TYPED if typed else PLAIN
    assert _read(value, lst, True, monkeypatch) == _read(value, lst, False, monkeypatch)


def test_ordinary_rows_are_read_without_pydantic(monkeypatch: pytest.MonkeyPatch) -> None:
    """The shapes an export gives are all taken by the fast reader (not left to pydantic)."""
    row = {
        "email": "Ada@Example.com",
        "firstName": "Ada",
        "lastName": None,
        "company": "Analytical",
        "country": "UK",
        "city": "London",
        "points": 120,
        "referrals": 3,
        "isVerified": True,
        "data": {"plan": "pro", "seats": [1, 2.5, None]},
        "createdAt": "2019-05-01T09:30:00+02:00",
        "listId": LIST_ID,
    }
    fields = fast_rows.fast_fields(row, LIST_ID)
    assert fields is not None
    assert list(fields) == [key for key in fast_rows._ORDER if key in row and key != "listId"]
    assert fields["createdAt"] == datetime.fromisoformat("2019-05-01T07:30:00+00:00")
    for odd_row in ({**row, "points": 1.0}, {**row, "actions": []}, {**row, "extra": 1}):
        assert fast_rows.fast_fields(odd_row, LIST_ID) is None
