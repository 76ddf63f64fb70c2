"""CEL: filters written as CEL agree with the reference evaluator (`celpy`, cel-python) on
generated records, read back as they were written, and hostile text ends in a `FilterError`.

The filters are drawn from the space's generators (`audiencefilter.testing.space`) over the
part of the space CEL reads (string, number, boolean, date-time and date columns, lists of
each, a to-many relation of rows with the same, and a to-one relation to such a row, with
counts of rows), so every operator, mode and relative
value the library has on those types is tried; what the writer refuses is counted, not
skipped silently.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from datetime import datetime
from functools import cache
from typing import Any

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.formats.cel import reader as cel
from audiencefilter.testing.space import NOWS, SPACE, json_encoded, records, where_clauses
from tests.cel_reference import cel_matches, exact_doubles

_COLUMNS: dict[str, Any] = {
    name: kind
    for kind in ("string", "number", "boolean", "datetime", "date")
    for name in (f"c_{kind}", f"c_{kind}_2")
} | {f"c_{kind}_list": f"{kind}[]" for kind in ("string", "number", "boolean", "datetime", "date")}
_COLUMNS |= (
    {"data": "json"}
    | {
        f"j_{kind}": (kind, ("data", f"j_{kind}"))
        for kind in ("string", "number", "boolean", "date")
    }
    | {
        f"j_{kind}_list": (f"{kind}[]", ("data", f"j_{kind}_list"))
        for kind in ("string", "number", "boolean")
    }
)
_ROW = af.Schema.from_mapping({"id": "string", **_COLUMNS}, name="row")
CEL_SPACE = af.Schema.from_mapping(_COLUMNS, name="cel").with_relations(
    af.Relation("rows", _ROW, table="cel_rows"),
    af.Relation("owner", _ROW, many=False, table="cel_owner"),
)
"""The space's columns of the types CEL reads, a to-many relation of such rows and a to-one
relation to such a row."""

CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this run is the `ci` size, where the text fuzzing below draws half its examples
(every `@example` kept); `thorough`, `deep` and `search` draw them all."""

TALLY: Counter[str] = Counter()
"""Figures of the run: expressions written and refused, answers compared, round trips."""


@cache
def _strategies(
    now: datetime,
) -> tuple[st.SearchStrategy[dict[str, Any]], st.SearchStrategy[list[dict[str, Any]]]]:
    """The where clauses and the six records at `now`, built once: hypothesis validates a
    strategy the first time it draws it, and the where clauses' recursion is costly to check."""
    return where_clauses(CEL_SPACE, now), st.lists(records(CEL_SPACE, now), min_size=6, max_size=6)


@st.composite
def cases(draw: st.DrawFn) -> tuple[dict[str, Any], list[dict[str, Any]], datetime]:
    now = draw(st.sampled_from(NOWS))
    clauses, rows_of = _strategies(now)
    where = draw(clauses)
    rows = draw(rows_of)
    if draw(st.booleans()):
        rows = [json_encoded(row) for row in rows]
    return where, rows, now


def _written(flt: af.Filter) -> str | None:
    try:
        text = flt.to_format("cel")
    except af.FilterError:
        TALLY["refused by the writer"] += 1
        return None
    assert isinstance(text, str)
    TALLY["written"] += 1
    return text


@settings(max_examples=120)
@given(cases())
@example(({"c_number": {"not": 1}}, [{"c_number": None}, {"c_number": 2}], NOWS[0]))
@example(({"rows": {"none": {"c_number": 1.5}}}, [{"rows": [{"c_number": None}]}], NOWS[0]))
@example(({"NOT": {"c_string": {"startsWith": "a"}}}, [{}, {"c_string": "b"}], NOWS[0]))
@example(({"NOT": {"c_string": {"blank": True}}}, [{}, {"c_string": ""}], NOWS[0]))
@example(
    (
        {"rows": {"some": {"c_string_list": {"not": {"hasSome": ["a"]}}}}},
        [{"rows": [{"c_string_list": None}, {"c_string_list": [None]}]}],
        NOWS[0],
    )
)
@example(
    (
        {"OR": [{"c_number_list": {"not": {"has": 1}}}, {"c_string": "x"}]},
        [{"c_number_list": [None, 2.0]}, {"c_number_list": None, "c_string": "x"}, {}],
        NOWS[0],
    )
)
@example(
    (
        {"rows": {"none": {"c_number_list": {"hasEvery": [1, 2]}}}},
        [{"rows": [{"c_number_list": [2, None, 1]}]}, {"rows": [{"c_number_list": None}]}],
        NOWS[0],
    )
)
@example(({"c_date": {"gt": "2025-01-01"}}, [{"c_date": "2025-01-02"}, {}], NOWS[0]))
@example(
    (
        {"NOT": {"owner": {"is": {"c_number": {"lt": 3}}}}},
        [{"owner": None}, {"owner": {}}, {"owner": {"c_number": 1}}, {"owner": {"c_number": 4}}],
        NOWS[0],
    )
)
@example(
    (
        {"OR": [{"rows": {"where": {"c_string": "x"}, "count": 1}}, {"c_boolean": True}]},
        [{"rows": [{"c_string": "x"}, {"c_string": None}]}, {"rows": [{}, {}]}, {}],
        NOWS[0],
    )
)
def test_written_expressions_agree_with_celpy_and_read_back(
    case: tuple[dict[str, Any], list[dict[str, Any]], datetime],
) -> None:
    """celpy evaluates the written expression to true exactly where `matches` is true, on every
    record whose numbers are doubles (the environment binds a number as a double); and
    `from_cel(to_cel(f))` selects what `f` selects, and writing and reading it again gives the
    same canonical filter (read -> write -> read is identical)."""
    where, rows, now = case
    flt = af.parse(where, CEL_SPACE)
    text = _written(flt)
    if text is None:
        return
    again = af.from_format(text, "cel", CEL_SPACE)
    for row in rows:
        expected = flt.matches(row, now=now)
        assert again.matches(row, now=now) is expected, (text, row)
        if not exact_doubles(row, CEL_SPACE):
            TALLY["records beyond doubles"] += 1
            continue
        TALLY["answers compared with celpy"] += 1
        assert cel_matches(text, row, CEL_SPACE) is expected, (text, row)
        TALLY["answers equal"] += 1
    TALLY["round trips"] += 1
    TALLY["read back as the same filter"] += again == flt
    third = af.from_format(again.to_format("cel"), "cel", CEL_SPACE)
    assert third.to_json() == again.to_json()


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"c_number": {"gte": 100}}, "c_number >= 100.0"),
        ({"c_string": {"not": "FR"}}, 'c_string != null && c_string != "FR"'),
        ({"c_number": None}, "type(c_number) == null_type"),
        ({"c_string": {"notIn": ["a"]}}, 'c_string != null && !(c_string in ["a"])'),
        (
            {"NOT": {"AND": [{"c_number": {"lt": 1}}, {"c_string": {"endsWith": "x"}}]}},
            '!(c_number < 1.0 && c_string.endsWith("x"))',
        ),
        (
            {"rows": {"none": {"c_string": "x"}}},
            '!rows.exists(r, r.c_string == "x")',
        ),
        (
            {"rows": {"none": {"c_number": {"lt": 3}}}},
            "rows.all(r, !(r.c_number < 3.0) || type(r.c_number) == null_type)",
        ),
        ({"c_string_list": {"has": "vip"}}, '"vip" in c_string_list'),
        ({"c_string_list": {"hasSome": ["a", "b"]}}, '["a", "b"].exists(t, t in c_string_list)'),
        ({"c_boolean_list": {"hasEvery": [True]}}, "[true].all(t, t in c_boolean_list)"),
        (
            {"c_datetime_list": {"isEmpty": False}},
            "type(c_datetime_list) != null_type && c_datetime_list != []",
        ),
        ({"c_string_list": {"isEmpty": True}}, "c_string_list == []"),
        (
            {"c_number_list": {"has": 1}},
            "(type(c_number_list) == list ? c_number_list : [])"
            ".exists(t, type(t) == double && t == 1.0)",
        ),
        (
            {"c_number_list": {"not": {"hasSome": [1, 2.5]}}},
            "type(c_number_list) == list && !(type(c_number_list) == list ? c_number_list : [])"
            ".exists(t, type(t) == double && t in [1.0, 2.5])",
        ),
        (
            {"c_number_list": {"hasEvery": [1, 2]}},
            "[1.0, 2.0].all(v, (type(c_number_list) == list ? c_number_list : [])"
            ".exists(t, type(t) == double && t == v))",
        ),
        (
            {"c_string": "x", "c_number_list": {"not": {"has": 1}}},
            'c_string == "x" && (type(c_number_list) == list'
            " && !(type(c_number_list) == list ? c_number_list : [])"
            ".exists(t, type(t) == double && t == 1.0))",
        ),
        ({"c_date": {"gte": "2025-01-31"}}, 'c_date >= "2025-01-31"'),
        ({"c_date_list": {"has": "2025-01-31"}}, '"2025-01-31" in c_date_list'),
        (
            {"rows": {"some": {"c_date": {"in": ["2025-01-31"]}}}},
            'rows.exists(r, r.c_date in ["2025-01-31"])',
        ),
        (
            {"c_datetime": {"lt": "2025-01-31T10:00:00+01:00"}},
            'c_datetime < timestamp("2025-01-31T09:00:00Z")',
        ),
        (
            {"owner": {"is": {"c_string": "x"}}},
            '(type(owner) == map ? [owner] : []).exists(r, r.c_string == "x")',
        ),
        ({"owner": {"is": None}}, "!(type(owner) == map ? [owner] : []).exists(r, true)"),
        (
            {"owner": {"isNot": {"c_number": {"lt": 3}}}},
            "(type(owner) == map ? [owner] : [])"
            ".all(r, !(r.c_number < 3.0) || type(r.c_number) == null_type)",
        ),
        ({"rows": {"count": {"gte": 2}}}, "size(rows) >= 2"),
        ({"rows": {"count": {"not": {"in": [0, 1]}}}}, "!(size(rows) in [0, 1])"),
        (
            {"rows": {"where": {"c_string": "x"}, "count": {"lt": 2}}},
            'size(rows.filter(r, r.c_string == "x")) < 2',
        ),
    ],
)
def test_the_writer_writes_each_form(where: dict[str, Any], expected: str) -> None:
    flt = af.parse(where, CEL_SPACE)
    assert flt.to_format("cel") == expected
    assert af.from_format(expected, "cel", CEL_SPACE).to_format("cel") == expected


@pytest.mark.parametrize(
    ("where", "path", "words"),
    [
        ({"c_string": {"contains": "Gmail"}}, "c_string.contains", "has letters with case"),
        (
            {"OR": [{"c_number": 1}, {"c_string": {"startsWith": "a", "mode": "insensitive"}}]},
            "OR[1].c_string.startsWith",
            "mind case",
        ),
        ({"c_datetime": {"gte": {"ago": "P30D"}}}, "c_datetime.gte", "move with the clock"),
        ({"NOT": {"c_number": {"gt": 2**53 + 1}}}, "NOT.c_number.gt", "is no double"),
        (
            {"OR": [{"c_number": {"gt": 1}}, {"c_string": {"equals": {"_ref": "c_string_2"}}}]},
            "OR[1].c_string.equals",
            "two nulls equal",
        ),
        ({"rows": {"sum": {"c_number": {"gte": 2}}}}, "rows", "no sums or extremes"),
        ({"rows": {"max": {"c_datetime": None}}}, "rows", "no sums or extremes"),
        ({"rows": {"count": {"gt": 1.5}}}, "rows.count", "compared with integers only"),
        (
            {"rows": {"where": {"c_number": {"lt": 3}}, "count": 2}},
            "rows.where",
            "CEL's filter fails where its condition does",
        ),
    ],
)
def test_the_writer_refuses_at_the_filter_path(
    where: dict[str, Any], path: str, words: str
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where, CEL_SPACE).to_format("cel")
    issue = caught.value.errors[0]
    assert issue.path == path
    assert words in issue.message


_RELATED = [
    {"owner": {"is": {"c_string": "x"}}},
    {"owner": {"is": {"c_number": {"lt": 3}}}},
    {"owner": {"isNot": {"c_number": {"lt": 3}}}},
    {"owner": {"isNot": {"c_string": "x"}}},
    {"owner": {"is": None}},
    {"owner": {"isNot": None}},
    {"owner": {"is": {"c_string_list": {"has": "a"}, "c_number_list": {"has": 1}}}},
    {"owner": {"is": {"data": {"path": ["a"], "equals": "x"}}}},
    {"NOT": {"owner": {"is": {"c_number": {"gte": 1}, "c_string": {"not": "x"}}}}},
    {"OR": [{"owner": {"is": {"c_number": {"gt": 1}}}}, {"c_string": "y"}]},
    {"rows": {"count": 0}},
    {"rows": {"count": {"gte": 2}}},
    {"rows": {"count": {"not": {"lt": 2}}}},
    {"rows": {"count": {"in": [1, 3]}, "where": {"c_boolean": True}}},
    {"rows": {"where": {"c_string": "x"}, "count": {"gte": 2}}},
    {"rows": {"where": {"c_string": {"in": ["x", "y"]}}, "count": {"lte": 1}}},
    {"NOT": {"rows": {"where": {"c_string": "x"}, "count": 2}}},
    {"OR": [{"rows": {"where": {"c_number": None}, "count": {"gt": 1}}}, {"c_string": "y"}]},
]
_ROWS: list[Any] = [
    {"c_string": "x", "c_number": 1, "c_boolean": True, "c_string_list": ["a"]},
    {"c_string": None, "c_number": None, "c_number_list": [None, 1.0], "data": {"a": "x"}},
    {"c_string": "y", "c_number": 5, "c_boolean": None, "data": {"a": None}},
    {},
]


@pytest.mark.parametrize("where", _RELATED)
def test_to_one_relations_and_counts_agree_with_celpy(where: dict[str, Any]) -> None:
    """A to-one row that is null, missing, empty or has null fields, and counts of 0 to 4 rows
    with the where clause TRUE, FALSE or UNKNOWN on some: celpy answers as `matches`, under
    `NOT` and inside `OR` too; the expression reads back as the filter or the same audience,
    which then reads back unchanged."""
    flt = af.parse(where, CEL_SPACE)
    text = flt.to_format("cel")
    again = af.from_format(text, "cel", CEL_SPACE)
    records: list[dict[str, Any]] = [{}, {"owner": None, "rows": None}, {"c_string": "y"}]
    records += [
        {"owner": row, "rows": _ROWS[:n], "c_string": row.get("c_string")}
        for n, row in enumerate(_ROWS)
    ]
    records += [{"rows": _ROWS + _ROWS[:1]}, {"rows": _ROWS[:1] * 2}, {"rows": [{}] * 2}]
    for record in records:
        expected = flt.matches(record)
        assert cel_matches(text, record, CEL_SPACE) is expected, (text, record)
        assert again.matches(record) is expected, (text, record)
    assert af.from_format(again.to_format("cel"), "cel", CEL_SPACE) == again


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        ("size(rows) >= 2.0", 15, "expected an integer, found the literal 2.0"),
        ("size(rows.filter(r, r.c_number < 1.0)) > 1", 32, "CEL's filter fails"),
        ("size(owner) > 1", 6, "size counts the rows of a to-many relation"),
        ("owner.exists(r, true)", 7, "(type(one) == map ? [one] : []) of a to-one relation"),
        ("(owner != null ? [owner] : []).exists(r, true)", 32, "to-many relation"),
        ("size(rows) + 1 > 2", 12, "the arithmetic +"),
        ("owner == null", 1, "relation, whose rows are tested, not compared"),
        ("rows == []", 1, "relation, whose rows are tested, not compared"),
        ("size(rows.filter(r, r.c_string)) > 1", 23, "expected a condition"),
    ],
)
def test_the_reader_refuses_other_forms_of_relations(text: str, column: int, words: str) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format(text, "cel", CEL_SPACE)
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (1, column), issue
    assert words in issue.message, issue.message


def test_the_reader_reads_hand_written_counts() -> None:
    assert _read("2 <= size(rows)", CEL_SPACE) == '{"rows":{"count":{"gte":2}}}'
    assert _read("size(rows) != 3", CEL_SPACE) == '{"rows":{"count":{"not":3}}}'
    assert _read("size(c_string_list) == 0", CEL_SPACE) == '{"c_string_list":{"isEmpty":true}}'


def test_the_writer_refuses_types_cel_compares_otherwise() -> None:
    where: dict[str, Any]
    for where in (
        {"c_string_list": {"equals": ["a"]}},
        {"c_string_list": {"has": "a", "mode": "insensitive"}},
        {"c_string_list": {"hasEvery": []}},
        {"c_string_list": {"hasSome": []}},
    ):
        with pytest.raises(af.FilterError, match="CEL"):
            af.parse(where, SPACE).to_format("cel")


def test_the_figures() -> None:
    """Runs last in this module: the figures of the properties above, for the summary."""
    print("\nCEL figures:", dict(TALLY))
    if TALLY["written"]:  # the property ran in this session: it met enough of the subset
        assert TALLY["answers compared with celpy"] >= 200
        assert TALLY["round trips"] >= 20


# ---- reading -----------------------------------------------------------------------------------


def _read(text: str, schema: af.Schema = af.CONTACT) -> str:
    return af.from_format(text, "cel", schema).to_json()


@pytest.mark.parametrize(
    ("text", "where"),
    [
        ('country == "FR" && points >= 100.0', '{"country":{"equals":"FR"},"points":{"gte":100}}'),
        ('country != "FR"', '{"OR":[{"country":{"not":"FR"}},{"country":null}]}'),
        ("!(points < 5.0)", '{"points":{"not":{"lt":5}}}'),
        (
            '5.0 > points || country in ["FR", "DE"]',
            '{"OR":[{"points":{"lt":5}},{"country":{"in":["FR","DE"]}}]}',
        ),
        (
            "isVerified && !unsubscribed",
            '{"isVerified":{"equals":true},"unsubscribed":{"equals":false}}',
        ),
        ("type(points) != null_type", '{"points":{"not":null}}'),
        ("points != null", '{"points":{"not":null}}'),
        ('email.endsWith("@acme.com")', '{"email":{"endsWith":"@acme.com"}}'),
        (
            'actions.exists(a, a.name == "share")',
            '{"actions":{"some":{"name":{"equals":"share"}}}}',
        ),
        (
            '!actions.exists(a, a.name == "share")',
            '{"actions":{"none":{"name":{"equals":"share"}}}}',
        ),
        (
            'createdAt >= timestamp("2025-01-01T00:00:00+01:00")',
            '{"createdAt":{"gte":"2024-12-31T23:00:00Z"}}',
        ),
        ("// a comment\ntrue", "{}"),
    ],
)
def test_the_reader_reads_the_subset(text: str, where: str) -> None:
    assert _read(text) == where


@pytest.mark.parametrize(
    ("text", "line", "column", "words"),
    [
        ("points >= 100", 1, 11, "the integer 100, which CEL compares with no double"),
        ('country = "FR"', 1, 9, "unexpected character '='"),
        ('country == "FR" and points > 1.0', 1, 17, "expected an operator such as &&"),
        ("points >= 1.0 &&\n  ponts < 5.0", 2, 3, 'unknown field "ponts"'),
        ('email.contains("Gmail")', 1, 16, "has letters with case"),
        ("points + 1.0 > 2.0", 1, 8, "found the arithmetic +"),
        ("points > 1.0 ? true : false", 1, 14, "found the conditional"),
        ('email.matches("a.*")', 1, 7, "the function matches()"),
        ('createdAt > timestamp("2025-01-01")', 1, 23, "no RFC 3339 date-time"),
        ("data == 1.0", 1, 1, "a json field"),
        ("points == points", 1, 8, "both are null"),
        ('"abc', 1, 1, "never closed"),
        ("(points > 1.0", 1, 14, 'expected ")"'),
        ("city == 'a\\q'", 1, 11, "unknown escape"),
        ("let == 1.0", 1, 1, "reserves"),
        ('"a" in country', 1, 8, "expected a list field"),
        ('email == b"x"', 1, 10, "the bytes"),
        ("points == true", 1, 11, "expected a number"),
        ("has(data.plan)", 1, 1, "the function has()"),
        ("actions.exists(a, points > 1.0)", 1, 19, "a name outside the schema"),
    ],
)
def test_errors_point_at_cels_own_position(text: str, line: int, column: int, words: str) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format(text, "cel")
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (line, column), issue
    assert words in issue.message, issue.message


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format('ponts > 1.0 && email.contains("Gmail") && city == 5.0', "cel")
    assert [(e.line, e.column) for e in caught.value.errors] == [(1, 1), (1, 31), (1, 51)]


@pytest.mark.parametrize("depth", [31, 32, 33, 5000])
def test_nesting_is_bounded(depth: int) -> None:
    text = "(" * depth + "points > 1.0" + ")" * depth
    if depth < 32:
        assert _read(text) == '{"points":{"gt":1}}'
        return
    with pytest.raises(af.FilterError, match="nested deeper than 32"):
        af.from_format(text, "cel")
    with pytest.raises(af.FilterError, match="nested deeper than 32"):
        af.from_format("!" * depth + "isVerified", "cel")


_PIECES = st.sampled_from(
    [
        "points",
        "country",
        "actions",
        "a",
        "a.name",
        ".",
        "(",
        ")",
        "[",
        "]",
        "{",
        "}",
        ",",
        ":",
        "?",
        "!",
        "-",
        "+",
        "&&",
        "||",
        "==",
        "!=",
        "<",
        ">=",
        " in ",
        "1.0",
        "1",
        "0x1",
        "2u",
        '"FR"',
        "'x'",
        'r"\\d"',
        'b"x"',
        '"""a"""',
        "\\",
        "true",
        "null",
        "exists",
        "all",
        "startsWith",
        "contains",
        "timestamp",
        "type",
        "null_type",
        "size",
        "has",
        "\n",
        "é",
        "\x00",
        "1e999",
        '"\\u00e9"',
        '"\\ud800"',
        "//c\n",
    ]
)


@settings(max_examples=300 if CI else 600)
@given(st.one_of(st.text(max_size=60), st.lists(_PIECES, max_size=30).map("".join)))
@example("(" * 100_000)
@example("!" * 100_000 + "isVerified")
@example(" || ".join(["isVerified"] * 20_000))
@example("[" * 50 + "]" * 50)
def test_no_text_raises_anything_but_filter_error(text: str) -> None:
    try:
        af.from_format(text, "cel")
    except af.FilterError as error:
        assert all(issue.message for issue in error.errors)


def test_the_reader_takes_text_only() -> None:
    with pytest.raises(af.FilterError, match="expected the text of a CEL expression"):
        cel.read({"points": 1}, af.CONTACT)


def test_the_command_line_converts_to_and_from_cel(capsys: pytest.CaptureFixture[str]) -> None:
    from audiencefilter.cli import EXIT_INVALID, EXIT_OK, main

    text = 'points >= 100 and country != "FR"'
    assert main(["convert", "--from", "text", "--to", "cel", text]) == EXIT_OK
    written = capsys.readouterr().out.strip()
    assert written == 'points >= 100.0 && country != null && country != "FR"'
    assert main(["convert", "--from", "cel", "--to", "text", written]) == EXIT_OK
    assert capsys.readouterr().out.strip() == text
    assert main(["convert", "--from", "cel", "--to", "json", "points >= 100"]) == EXIT_INVALID
    assert "line 1, column 11" in capsys.readouterr().err


def test_the_number_of_conditions_is_bounded() -> None:
    text = " || ".join(["isVerified"] * 10_001)
    with pytest.raises(af.FilterError, match="more than 10000 conditions"):
        af.from_format(text, "cel")


# ---- JSON paths, fields declared inside JSON, lists of numbers -------------------------------

_AT_PATHS = [
    {"data": {"path": ["a"], "equals": "x"}},
    {"data": {"path": ["a"], "not": "x"}},
    {"data": {"path": ["a", "b"], "gt": 4}},
    {"data": {"path": ["a"], "not": {"lte": 4.5}}},
    {"data": {"path": ["a"], "in": [1, 2]}},
    {"data": {"path": ["a"], "notIn": ["x"]}},
    {"data": {"path": ["a"], "not": {"notIn": ["x"]}}},
    {"data": {"path": ["a"], "contains": "@1"}},
    {"data": {"path": ["a"], "startsWith": "x"}},
    {"data": {"path": ["a"], "equals": True}},
    {"data": {"path": ["a", "b"], "equals": None}},
    {"data": {"path": ["a"], "not": None}},
    {"j_string": {"startsWith": "p"}},
    {"j_number": {"not": {"lt": 3}}},
    {"OR": [{"j_boolean": False}, {"c_string": "x"}]},
    {"j_date": {"gte": "2025-01-31"}},
    {"j_date": {"not": {"in": ["2025-01-31", "2024-02-29"]}}},
    {"rows": {"none": {"j_date": None}}},
    {"rows": {"some": {"data": {"path": ["a"], "equals": "x"}}}},
    {"rows": {"none": {"data": {"path": ["a"], "gt": 1}}}},
    {"rows": {"every": {"data": {"path": ["a"], "not": "x"}}}},
    {"NOT": {"AND": [{"data": {"path": ["a"], "lt": "x"}}, {"c_number": {"lt": 3}}]}},
    {"c_number_list": {"not": {"hasEvery": [1, 2]}}},
    {"rows": {"some": {"c_number_list": {"hasSome": [1, 2]}}}},
    {"rows": {"none": {"c_date_list": {"has": "2025-01-31"}}}},
    {"data": {"path": ["a"], "array_contains": "x"}},
    {"data": {"path": ["a", "b"], "array_contains": 5}},
    {"data": {"path": ["a"], "array_contains": [1, "x", True]}},
    {"data": {"path": ["a"], "array_contains": []}},
    {"NOT": {"data": {"path": ["a"], "array_contains": ["x", 1]}}},
    {"NOT": {"data": {"path": ["a"], "array_contains": []}}},
    {"NOT": {"data": {"path": ["a", "b"], "array_contains": False}}},
    {"OR": [{"NOT": {"data": {"path": ["a"], "array_contains": "x"}}}, {"c_string": "y"}]},
    {"j_string_list": {"hasSome": ["a", "x"]}},
    {"j_number_list": {"hasEvery": [1, 2.5]}},
    {"NOT": {"j_number_list": {"has": 1}}},
    {"NOT": {"j_boolean_list": {"hasSome": [True, False]}}},
    {"j_string_list": None},
    {"NOT": {"j_boolean_list": None}},
    {"rows": {"some": {"data": {"path": ["a"], "array_contains": "x"}}}},
    {"rows": {"none": {"data": {"path": ["a"], "array_contains": [1, "x"]}}}},
    {"rows": {"every": {"NOT": {"data": {"path": ["a"], "array_contains": 1}}}}},
    {"rows": {"none": {"j_string_list": {"has": "a"}}}},
    {"rows": {"every": {"j_number_list": {"hasSome": [1, 2]}}}},
    {"data": {"path": ["a"], "array_starts_with": "x"}},
    {"data": {"path": ["a", "b"], "array_ends_with": 5}},
    {"NOT": {"data": {"path": ["a"], "array_starts_with": "X"}}},
    {"NOT": {"data": {"path": ["a"], "array_ends_with": 1}}},
    {"data": {"path": ["a"], "array_starts_with": True, "array_ends_with": "x"}},
    {"rows": {"none": {"data": {"path": ["a"], "array_ends_with": "x"}}}},
    {"rows": {"every": {"NOT": {"data": {"path": ["a"], "array_starts_with": 1}}}}},
]
_AT_PATH_DATA: list[Any] = [
    None,
    {},
    {"a": None},
    {"a": "x"},
    {"a": "y@1"},
    {"a": "5"},
    {"a": 5},
    {"a": 4.5},
    {"a": 1},
    {"a": True},
    {"a": False},
    {"a": ["x"]},
    {"a": {"b": 5}},
    {"a": {"b": "5"}},
    {"a": {"b": None}},
    {"a": "text, not an object"},
    {"j_string": "pro", "j_number": 2, "j_boolean": False},
    {"j_string": 1, "j_number": "2", "j_boolean": None},
    {"j_number": 3.5, "j_boolean": "false", "j_date": "2025-02-01"},
    {"j_date": "2025-01-31"},
    {"j_date": "31/01/2025"},
    {"j_date": 20250131},
    {"a": []},
    {"a": [None, "x", 1.0, True]},
    {"a": [None]},
    {"a": [["x"], {"b": 5}, [1]]},
    {"a": ["X", "1", 1, False]},
    {"a": {"b": [5, "5", None, False]}},
    {"a": {"b": [[5], "x"]}},
    {"a": {"b": []}},
    {"j_string_list": ["a", None, 1], "j_number_list": [1.0, "1", 2.5, None]},
    {"j_string_list": "a", "j_number_list": 1, "j_boolean_list": True},
    {"j_string_list": [["a"], "x"], "j_number_list": [2, 1], "j_boolean_list": [True, None, 1]},
    {"j_string_list": None, "j_number_list": [], "j_boolean_list": [False, "true"]},
]


@pytest.mark.parametrize("where", _AT_PATHS)
def test_paths_declared_fields_and_number_lists_agree_with_celpy(where: dict[str, Any]) -> None:
    """Each JSON value (missing key, JSON null, another type, a step through no object, a
    null document) and each list (null, null items) is answered by celpy as by `matches`,
    directly, inside `rows.exists` and `rows.all`; the expression reads back as the filter or
    the same audience, which then reads back unchanged."""
    flt = af.parse(where, CEL_SPACE)
    text = flt.to_format("cel")
    again = af.from_format(text, "cel", CEL_SPACE)
    lists: list[Any] = [None, [], [None, 2.0], [1, None, 2], [2.5]]
    for i, data in enumerate(_AT_PATH_DATA):
        listed = lists[i % len(lists)]
        row = {"data": data, "c_number_list": listed, "c_number": i, "c_string": "x"}
        row["c_date_list"] = [None, "2025-01-31"] if i % 2 else None
        for record in (row, {"rows": [row]}, {"rows": [row, {"data": {"a": "x"}}]}):
            expected = flt.matches(record)
            assert cel_matches(text, record, CEL_SPACE) is expected, (text, record)
            assert again.matches(record) is expected, (text, record)
    assert af.from_format(again.to_format("cel"), "cel", CEL_SPACE) == again


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        (
            {"data": {"path": ["plan"], "equals": "pro"}},
            'type(data.plan) == string && data.plan == "pro"',
        ),
        (
            {"data": {"path": ["seats"], "not": {"gt": 4}}},
            "type(data.seats) != null_type && (type(data.seats) != double || !(data.seats > 4.0))",
        ),
        (
            {"data": {"path": ["a", "b"], "equals": None}},
            "type(data) != map || !has(data.a) || type(data.a) != map || !has(data.a.b)"
            " || type(data.a.b) == null_type",
        ),
        ({"j_boolean": True}, "type(data.j_boolean) == bool && data.j_boolean == true"),
        (
            {"j_date": {"lt": "2025-01-31"}},
            'type(data.j_date) == string && data.j_date < "2025-01-31"',
        ),
        (
            {"rows": {"some": {"data": {"path": ["a"], "in": ["x", "y"]}}}},
            'rows.exists(r, type(r.data.a) == string && r.data.a in ["x", "y"])',
        ),
        (
            {"data": {"path": ["a", "b"], "array_contains": "x"}},
            "(type(data) == map && has(data.a) && type(data.a) == map && has(data.a.b)"
            " && type(data.a.b) == list ? data.a.b : [])"
            '.exists(t, type(t) == string && t == "x")',
        ),
        (
            {"NOT": {"data": {"path": ["a"], "array_contains": 1}}},
            "type(data) == map && has(data.a) && type(data.a) == list && !(type(data) == map"
            " && has(data.a) && type(data.a) == list ? data.a : [])"
            ".exists(t, type(t) == double && t == 1.0)",
        ),
        (
            {"data": {"path": ["a"], "array_contains": []}},
            "type(data) == map && has(data.a) && type(data.a) == list",
        ),
        (
            {"data": {"path": ["a"], "array_ends_with": "x"}},
            "(type(data) == map && has(data.a) && type(data.a) == list && size(data.a) > 0"
            ' ? [data.a[size(data.a) - 1]] : []).exists(t, type(t) == string && t == "x")',
        ),
        (
            {"rows": {"none": {"j_boolean_list": {"has": True}}}},
            "!rows.exists(r, (type(r.data) == map && has(r.data.j_boolean_list)"
            " && type(r.data.j_boolean_list) == list ? r.data.j_boolean_list : [])"
            ".exists(t, type(t) == bool && t == true))",
        ),
    ],
)
def test_the_writer_writes_tests_at_a_path(where: dict[str, Any], expected: str) -> None:
    assert af.parse(where, CEL_SPACE).to_format("cel") == expected
    again = af.from_format(expected, "cel", CEL_SPACE)
    assert again.to_format("cel") == expected


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ('!(type(data.a) == string && data.a == "x")', "read negated"),
        ("type(data.a) == string && data.a == 1.0", "the type tested beside it (string)"),
        ("type(data.a) == double && data.a > 1", "which CEL compares with no double"),
        ('data.a == "x"', "a name outside the schema"),
        ('j_string == "pro"', "declared inside JSON"),
        ("1.0 in c_number_list", "does not fit a list of numbers"),
        ('type(data.a) == string && data.a.contains("X")', "letters with case"),
        (
            "!(type(data) == map && has(data.a) && type(data.a) == list ? data.a : [])"
            '.exists(t, type(t) == string && t == "x")',
            "read negated",
        ),
        (
            "(type(data) == map && has(data.a) && type(data.a) == list ? data.a : [])"
            ".exists(t, type(t) == string && t == 1.0)",
            "the type tested beside it (string)",
        ),
        (
            '(type(data.a) == list ? data.a : []).exists(t, type(t) == string && t == "x")',
            "to-many relation",
        ),
        ("type(data) == map && has(data.a) && type(data.a) == list && !false", "has"),
        (
            "(type(data) == map && has(data.a) && type(data.a) == list && size(data.a) > 0"
            ' ? [data.a[1]] : []).exists(t, type(t) == string && t == "x")',
            "to-many relation",
        ),
    ],
)
def test_the_reader_refuses_what_a_path_or_a_number_list_does_not_say(
    text: str, words: str
) -> None:
    with pytest.raises(af.FilterError, match=re.escape(words)):
        af.from_format(text, "cel", CEL_SPACE)


def test_the_writer_refuses_a_key_cel_selects_with_an_index_only() -> None:
    for key in ("a b", "in", "1a", ""):
        flt = af.parse({"data": {"path": [key], "equals": "x"}}, CEL_SPACE)
        with pytest.raises(af.FilterError, match="no CEL identifier"):
            flt.to_format("cel")
    with pytest.raises(af.FilterError, match="never blank"):
        af.parse({"data": {"path": ["a"], "blank": True}}, CEL_SPACE).to_format("cel")


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ({"data": {"path": ["a"], "array_contains": "X", "mode": "insensitive"}}, "mind case"),
        ({"data": {"path": ["a b"], "array_contains": "x"}}, "no CEL identifier"),
    ],
)
def test_the_writer_refuses_array_tests_cel_cannot_say(where: dict[str, Any], words: str) -> None:
    with pytest.raises(af.FilterError, match=re.escape(words)) as raised:
        af.parse(where, CEL_SPACE).to_format("cel")
    assert "data.array_" in str(raised.value)


_ARRAY_TESTS: list[dict[str, Any]] = [
    {"j_boolean_list": {"has": False}},
    {"data": {"path": ["x"], "array_contains": "a"}},
    {"AND": [{"j_boolean_list": {"has": False}}, {"data": {"path": ["x"], "array_contains": "a"}}]},
]
_HELD_AT_ARRAYS: list[Any] = [None, "a", False, 0, {}, [], [False], ["a"], [True, "a"]]


@pytest.mark.parametrize("negated", [False, True])
@pytest.mark.parametrize("quantifier", ["every", "some", "none"])
@pytest.mark.parametrize("test", _ARRAY_TESTS, ids=["declared", "path", "both"])
def test_a_quantified_array_test_says_the_filter_over_every_json_value(
    test: dict[str, Any], quantifier: str, negated: bool
) -> None:
    """Rows whose JSON holds each kind of value where an array is tested (none, a string, a
    number, an object, arrays with and without the literal): the CEL written says what the
    filter says, evaluated by CEL itself and read back. Before, `NOT rows.every(...)` was
    written as "some row where the test is FALSE or its key null", which misses a row whose
    value is no array (UNKNOWN there): such a record was left out."""
    where: dict[str, Any] = {"rows": {quantifier: test}}
    if negated:
        where = {"NOT": where}
    flt = af.parse(where, SPACE)
    written = flt.to_format("cel")
    again = af.from_format(written, "cel", SPACE)
    holding = {"id": "r.1", "data": {"j_boolean_list": [False], "x": ["a"]}}
    for value in _HELD_AT_ARRAYS:
        row = {"id": "r.0", "data": {"j_boolean_list": value, "x": value}}
        for rows in ([row], [row, holding]):
            record = {"id": "r", "rows": rows}
            expected = flt.matches(record, now=NOWS[0])
            assert cel_matches(written, json_encoded(record), SPACE) == expected, (value, written)
            assert again.matches(record, now=NOWS[0]) == expected, (value, again.to_json())


@pytest.mark.parametrize("negated", [False, True])
@pytest.mark.parametrize("op", ["in", "notIn"])
@pytest.mark.parametrize("inside", [False, True], ids=["record", "every-row"])
def test_an_empty_list_at_a_json_path_is_a_constant_in_cel(
    op: str, negated: bool, inside: bool
) -> None:
    """`in []` is FALSE and `notIn []` TRUE for every record, whatever the path holds: the CEL
    written says so to CEL itself. Before, `data.a notIn []` was written
    `type(data.a) == string && !(data.a in [])`, false for every value but text (it read
    back as the filter it came from, so only CEL's own answer showed it)."""
    where: dict[str, Any] = {"data": {"path": ["a"], op: []}}
    if inside:
        where = {"rows": {"every": where}}
    if negated:
        where = {"NOT": where}
    flt = af.parse(where, SPACE)
    written = flt.to_format("cel")
    again = af.from_format(written, "cel", SPACE)
    for data in (None, {}, {"a": None}, {"a": 1}, {"a": "s"}, {"a": [1]}, {"a": {"b": 1}}):
        record = {"id": "r", "data": data, "rows": [{"id": "r.0", "data": data}]}
        expected = flt.matches(record, now=NOWS[0])
        assert cel_matches(written, json_encoded(record), SPACE) == expected, (data, written)
        assert again.matches(record, now=NOWS[0]) == expected, (data, again.to_json())
