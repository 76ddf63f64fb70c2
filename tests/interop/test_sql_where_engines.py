"""Our reading of a SQL WHERE condition means what SQLite and DuckDB make of the same text:
generated conditions (typed columns, nulls, relations) run on both engines, and our reading
runs in memory; the answers are equal (docs/interop.md)."""

from __future__ import annotations

from typing import Any

import pytest
import sqlglot
from hypothesis import example, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import sql_where
from tests.interop.contacts_db import (
    ACTION_NAMES,
    NUMBER_FIELDS,
    TEXT_FIELDS,
    contacts,
    duckdb_with,
    selected,
    sqlite_with,
)

SAFE = ("a", "A", "ab", "B", "ba", "abc", "a b", "o'k", "1", "-")
CASELESS = ("1", "-", "' '")


def _quote(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


@st.composite
def comparisons(draw: st.DrawFn) -> str:
    kind = draw(st.sampled_from(("text", "number", "boolean", "pattern", "null", "relation")))
    return draw(_BUILDERS[kind]())


def _text() -> st.SearchStrategy[str]:
    field = st.sampled_from(TEXT_FIELDS)
    value = st.sampled_from(("", *SAFE)).map(_quote)
    other = st.sampled_from(TEXT_FIELDS)
    return _compared(field, value, other)


def _number() -> st.SearchStrategy[str]:
    field = st.sampled_from(NUMBER_FIELDS)
    value = st.integers(-3, 3).map(str)
    return _compared(field, value, st.sampled_from(NUMBER_FIELDS))


def _compared(
    field: st.SearchStrategy[str], value: st.SearchStrategy[str], other: st.SearchStrategy[str]
) -> st.SearchStrategy[str]:
    op = st.sampled_from(("=", "<>", "!=", "<", ">", "<=", ">="))
    simple = st.builds(lambda f, o, v: f"{f} {o} {v}", field, op, value)
    flipped = st.builds(lambda f, o, v: f"{v} {o} {f}", field, op, value)
    columns = st.builds(lambda f, o, g: f"{f} {o} {g}", field, op, other)
    listed = st.builds(
        lambda f, n, vs: f"{f} {n}IN ({', '.join(vs)})",
        field,
        st.sampled_from(("", "NOT ")),
        st.lists(value, min_size=1, max_size=3),
    )
    between = st.builds(
        lambda f, n, a, b: f"{f} {n}BETWEEN {a} AND {b}",
        field,
        st.sampled_from(("", "NOT ")),
        value,
        value,
    )
    return simple | flipped | columns | listed | between


def _boolean() -> st.SearchStrategy[str]:
    return st.sampled_from(
        (
            '"isVerified" = TRUE',
            '"isVerified" = FALSE',
            '"isVerified"',
            'NOT "isVerified"',
            '"isVerified" <> TRUE',
            "TRUE",
            "FALSE",
        )
    )


def _pattern() -> st.SearchStrategy[str]:
    shapes = st.sampled_from(("{}%", "%{}", "%{}%", "{}"))
    like = st.builds(
        lambda f, n, s, v: f"{f} {n}LIKE {_quote(s.format(v))}",
        st.sampled_from(TEXT_FIELDS),
        st.sampled_from(("", "NOT ")),
        shapes,
        st.sampled_from(SAFE),
    )
    caseless = st.builds(
        lambda f, v: f"{f} LIKE {_quote('%' + v + '%')}",
        st.sampled_from(TEXT_FIELDS),
        st.sampled_from(("1", "-", " ")),
    )
    ilike = st.builds(
        lambda f, n, s, v: f"{f} {n}ILIKE {_quote(s.format(v))}",
        st.sampled_from(TEXT_FIELDS),
        st.sampled_from(("", "NOT ")),
        shapes,
        st.sampled_from(SAFE),
    )
    return like.filter(lambda t: "LIKE '%" not in t or not t.endswith("%'")) | caseless | ilike


def _null() -> st.SearchStrategy[str]:
    return st.builds(
        lambda f, n: f"{f} IS {n}NULL",
        st.sampled_from((*TEXT_FIELDS, *NUMBER_FIELDS, '"isVerified"')),
        st.sampled_from(("", "NOT ")),
    )


def _relation() -> st.SearchStrategy[str]:
    inner = st.sampled_from(
        [f"a.name = {_quote(n)}" for n in ACTION_NAMES]
        + ["a.increase > 0", "a.increase <= 0", "a.name IS NULL", "a.name LIKE 'sh%'"]
    )
    return st.builds(
        lambda n, w, every: (
            f"NOT EXISTS (SELECT 1 FROM actions AS a WHERE a.sub_id = contacts.id AND ({w}) "
            "IS NOT TRUE)"
            if every
            else f"{n}EXISTS (SELECT 1 FROM actions AS a WHERE a.sub_id = contacts.id AND {w})"
        ),
        st.sampled_from(("", "NOT ")),
        inner,
        st.booleans(),
    )


_BUILDERS = {
    "text": _text,
    "number": _number,
    "boolean": _boolean,
    "pattern": _pattern,
    "null": _null,
    "relation": _relation,
}


def _combined(children: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    joined = st.builds(
        lambda items, word: f" {word} ".join(items),
        st.lists(children, min_size=2, max_size=3),
        st.sampled_from(("AND", "OR")),
    )
    return joined.map(lambda t: f"({t})") | children.map(lambda t: f"NOT ({t})")


CONDITIONS = st.recursive(comparisons(), _combined, max_leaves=6)


def _ours(text: str, rows: list[dict[str, Any]]) -> set[int]:
    flt = Filter(sql_where.read(text, af.CONTACT))
    return {row["id"] for row in rows if flt.matches(row)}


@pytest.mark.slow
@settings(max_examples=60)
@given(text=CONDITIONS, rows=contacts())
@example(
    text="NOT (TRUE)",
    rows=[
        {
            "id": 1,
            "email": None,
            "country": None,
            "city": None,
            "points": None,
            "referrals": None,
            "isVerified": None,
            "actions": [],
        }
    ],
)
@example(
    text="country <> 'a' OR NOT (points BETWEEN 3 AND 1)",
    rows=[
        {
            "id": 1,
            "email": None,
            "country": None,
            "city": None,
            "points": None,
            "referrals": None,
            "isVerified": None,
            "actions": [],
        }
    ],
)
@example(
    text="NOT EXISTS (SELECT 1 FROM actions AS a WHERE a.sub_id = contacts.id AND "
    "(a.increase > 0) IS NOT TRUE)",
    rows=[
        {
            "id": 1,
            "email": None,
            "country": None,
            "city": None,
            "points": None,
            "referrals": None,
            "isVerified": None,
            "actions": [{"name": "open", "increase": None}],
        }
    ],
)
def test_reading_means_what_sqlite_and_duckdb_answer(text: str, rows: list[dict[str, Any]]) -> None:
    ours = _ours(text, rows)
    # SQLite has no ILIKE: sqlglot writes LOWER(x) LIKE LOWER(p); its LIKE then minds case.
    lite = sqlite_with(rows, case_sensitive_like=True)
    duck = duckdb_with(rows)
    try:
        assert ours == selected(lite, sqlglot.transpile(text, write="sqlite")[0]), text
        assert ours == selected(duck, text), text
    finally:
        lite.close()
        duck.close()
