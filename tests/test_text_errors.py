"""Errors as a person sees them: the caret under the right character, the words, the fix."""

from __future__ import annotations

import pytest

from audiencefilter import FilterError, Issue, parse, parse_text, render_error
from audiencefilter.excerpt import excerpt


def _rendered(text: str, *, json: bool = False) -> str:
    with pytest.raises(FilterError) as caught:
        parse(text) if json else parse_text(text)
    return render_error(caught.value)


def _hint(text: str) -> str | None:
    with pytest.raises(FilterError) as caught:
        parse_text(text)
    return caught.value.errors[0].suggestion


GOLDEN_TEXT = [
    (
        'emial contains "gmail"',
        """\
error at line 1, column 1: unknown field "emial"
  emial contains "gmail"
  ^^^^^
  hint: did you mean "email"?""",
    ),
    (
        'email contians "gmail"',
        """\
error at line 1, column 7: expected an operator (=, !=, >, >=, <, <=, contains, starts with, \
ends with, in, not in, within, anniversary within, has, has some, has every, array starts with, \
array ends with, is null, is not null, is blank, is not blank, is empty, is not empty), \
found "contians"
  email contians "gmail"
        ^^^^^^^^
  hint: did you mean "contains"?""",
    ),
    (
        'points >= 100 and\n  (country in ["FR", "DE"] or email startswith "@acme.com")',
        """\
error at line 2, column 37: expected an operator (=, !=, >, >=, <, <=, contains, starts with, \
ends with, in, not in, within, anniversary within, has, has some, has every, array starts with, \
array ends with, is null, is not null, is blank, is not blank, is empty, is not empty), \
found "startswith"
    (country in ["FR", "DE"] or email startswith "@acme.com")
                                      ^^^^^^^^^^
  hint: did you mean "starts with"?""",
    ),
    (
        'points >= "100" and city = "日本" and isVerified = "true"',
        """\
error at line 1, column 11: expected a number for number field "points", found the string "100"
  points >= "100" and city = "日本" and isVerified = "true"
            ^^^^^
  hint: write the number without quotes: 100

error at line 1, column 50: expected true or false for boolean field "isVerified", found the \
string "true"
  points >= "100" and city = "日本" and isVerified = "true"
                                                     ^^^^^^
  hint: write true without quotes""",
    ),
    (
        '(points > 5 and email = "x"',
        """\
error at line 1, column 28: expected ")", found the end of the filter
  (points > 5 and email = "x"
                             ^
  hint: close the "(" opened at line 1, column 1""",
    ),
    (
        "\tcountry = 'FR'",
        """\
error at line 1, column 12: expected a value ("text", 42, 2025-01-31, true, false, null or a \
["list"]) or a field name, found the character "'"
  \tcountry = 'FR'
  \t          ^
  hint: strings are written in double quotes: "FR\"""",
    ),
    (
        "points contains 5",
        """\
error at line 1, column 8: "contains" applies to string fields; "points" is a number field
  points contains 5
         ^^^^^^^^
  hint: "points" takes =, !=, >, >=, <, <=, in, not in, is null, is not null""",
    ),
    (
        "# only a comment\n",
        """\
error at line 1, column 1: the filter is empty
  # only a comment
  ^
  hint: write true to select every contact""",
    ),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN_TEXT, ids=[t for t, _ in GOLDEN_TEXT])
def test_golden_text_syntax_errors(text: str, expected: str) -> None:
    assert _rendered(text) == expected


GOLDEN_JSON = [
    (
        '{\n  "OR": [\n    {"points": {"gte": "ten"}},\n    {"emial": "x"}\n  ]\n}',
        """\
error at OR[0].points.gte (line 3, column 24): expected a number for number field "points", \
found the string "ten"
      {"points": {"gte": "ten"}},
                         ^^^^^

error at OR[1].emial (line 4, column 6): unknown field "emial"
      {"emial": "x"}
       ^^^^^^^
  hint: did you mean "email"?""",
    ),
    (
        '{"points": {"gte": 1,}}',
        """\
error at line 1, column 22: invalid JSON: Expecting property name enclosed in double quotes
  {"points": {"gte": 1,}}
                       ^""",
    ),
    (
        '{"email": {"containz": "x"}}',
        """\
error at email.containz (line 1, column 12): unknown operator "containz" for string field \
"email"; expected one of contains, endsWith, equals, gt, gte, in, lt, lte, notIn, startsWith, \
not, mode, blank
  {"email": {"containz": "x"}}
             ^^^^^^^^^^
  hint: did you mean "contains"?""",
    ),
]


@pytest.mark.parametrize(("text", "expected"), GOLDEN_JSON, ids=["nested", "syntax", "operator"])
def test_golden_json_errors(text: str, expected: str) -> None:
    assert _rendered(text, json=True) == expected


@pytest.mark.parametrize(
    ("text", "hint"),
    [
        ('email startswith "a"', 'did you mean "starts with"?'),
        ("points > 1000,5", "decimals are written with a dot: 1000.5"),
        ("points >= -3,25 and points < 9", "decimals are written with a dot: -3.25"),
        ('email startsWith "a"', 'did you mean "starts with"?'),
        ('email starts wiht "a"', 'did you mean "starts with"?'),
        ('email endswith "a"', 'did you mean "ends with"?'),
        ('email contians "a"', 'did you mean "contains"?'),
        ('email like "a"', 'did you mean "contains"?'),
        ("points gte 5", 'did you mean ">="?'),
        ("points => 5", 'did you mean ">="?'),
        ('country notin ["a"]', 'did you mean "not in"?'),
        ("company is nul", 'did you mean "is null"?'),
        ("company isnotnull", 'did you mean "is not null"?'),
        ('email = "a" adn points > 1', 'did you mean "and"?'),
        ('email = "a" && points > 1', 'did you mean "and"?'),
        ('email = "a" || points > 1', 'did you mean "or"?'),
        ('email = "a" ignore case', 'did you mean "ignoring case"?'),
        ("isVerified = ture", 'did you mean "true"?'),
        ("country = FR", 'strings are written in double quotes: "FR"'),
        ("country = 'FR'", 'strings are written in double quotes: "FR"'),
        ('points > 1 email = "a"', 'join conditions with "and" or "or"'),
        ('email "a"', "put an operator between the field and the value, such as = or contains"),
        (
            '"email" = "a"',
            "field names are written without quotes, or between backticks: `first name`",
        ),
        ('country in "FR"', 'write ["FR"]'),
        ('country in ["FR", null]', "to match nulls too, add: or country is null"),
        ("points > null", 'test for null with "points is null" or "points is not null"'),
        ("points = 5 ignoring case", "remove ignoring case"),
        ("points = [1, 2]", 'use "in" to test against several values'),
        ("email = 5", 'write it as a string: "5"'),
        (
            "createdAt > 5",
            "write e.g. 2025-01-31, 2025-01-31T09:30:00Z or 2025-01-31T09:30:00+02:00",
        ),
        ("emial = 5", 'did you mean "email"?'),
        ("EMAIL = 5", 'did you mean "email"?'),
        (
            "zzz = 5",
            "filterable fields are email, firstName, lastName, company, country, city, "
            "points, referrals, isVerified, unsubscribed, createdAt, data; "
            "relations are actions (to-many), audiences (to-many)",
        ),
    ],
)
def test_suggestions(text: str, hint: str) -> None:
    assert _hint(text) == hint


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('email = "abc', "the string is not closed on its line"),
        ("`first name = 1", "the quoted field name is not closed on its line"),
        (r'email = "\q"', 'unknown escape "\\q"'),
        (r'email = "\u12"', '"\\u" must be followed by four hexadecimal digits'),
        (r'email = "\ud800"', "the string holds a lone surrogate, not valid Unicode"),
        ("points = " + "9" * 5000, "the number has more than 4300 digits"),
        ("points > 1e999", "which is too large to represent"),
        ("createdAt > 2025-02-30", "day is out of range for month"),
        ('createdAt > "yesterday"', 'expected an ISO 8601 date-time, found the string "yesterday"'),
        ("points > 1 )", 'expected the end of the filter, found ")"'),
        ("not", "found the end of the filter"),
    ],
)
def test_messages(text: str, message: str) -> None:
    with pytest.raises(FilterError) as caught:
        parse_text(text)
    assert message in caught.value.errors[0].message


def test_a_field_named_like_a_keyword_is_hinted_to_backticks() -> None:
    from audiencefilter import Schema

    schema = Schema.of(**{"in": "number", "null": "string", "case": "string"})
    assert parse_text('case = "x"', schema)  # only "ignoring case" is a keyword
    for text, name in (("in > 1", "in"), ('`in` > 1 and null = "x"', "null")):
        with pytest.raises(FilterError) as caught:
            parse_text(text, schema)
        hint = f"a field named like a keyword is written between backticks: `{name}`"
        assert caught.value.errors[0].suggestion == hint


def test_escape_errors_point_into_the_string() -> None:
    with pytest.raises(FilterError) as caught:
        parse_text(r'city = "ab\qc"')
    assert caught.value.errors[0].column == 11


def test_positions_on_later_lines_and_after_crlf() -> None:
    text = 'points > 1\r\nand emial = "x"'
    with pytest.raises(FilterError) as caught:
        parse_text(text)
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (2, 5)
    assert render_error(caught.value).split("\n")[1:3] == ['  and emial = "x"', "      ^^^^^"]


def test_a_long_line_is_cut_to_a_window_around_the_column() -> None:
    line = " or ".join(f"points = {n}" for n in range(60)) + " or emial = 1"
    lines = excerpt(line, line.index("emial"))
    assert lines[0].startswith("  …") and len(lines[0]) < 110
    assert lines[1].index("^") == lines[0].index("emial")


def test_issues_without_a_position_render_their_path() -> None:
    error = FilterError([Issue(path="OR[1]", message="bad", suggestion="fix it")])
    assert render_error(error) == "error at OR[1]: bad\n  hint: fix it"
    error = FilterError([Issue(path="", message="too big")])
    assert render_error(error) == "error: too big"


def test_size_limit_error_has_no_excerpt() -> None:
    from audiencefilter import Limits

    with pytest.raises(FilterError) as caught:
        parse_text("points > 1", limits=Limits(max_text=5))
    assert render_error(caught.value) == (
        "error: the filter text is 10 bytes, over the limit of 5\n"
        "  hint: split the audience or shorten lists"
    )


@pytest.mark.parametrize(
    ("text", "column", "words"),
    [
        (
            "createdAt within the last 7 days",
            18,
            'found "the"; leave out "the": within last 7 days',
        ),
        ("createdAt anniversary within the week", 30, "within this week"),
        ("createdAt in last 30 days", 11, "a period is written with within: within last 30 days"),
        ("createdAt in the next 2 weeks", 11, "within next 2 weeks"),
    ],
)
def test_periods_as_people_say_them_point_at_the_wrong_word(
    text: str, column: int, words: str
) -> None:
    with pytest.raises(FilterError) as caught:
        parse_text(text)
    issue = caught.value.errors[0]
    assert issue.column == column
    assert words in f"{issue.message}; {issue.suggestion}"


def test_the_operator_list_names_every_operator() -> None:
    from audiencefilter.text.vocabulary import NULL_TESTS, every_operator

    with pytest.raises(FilterError) as caught:
        parse_text("points 3")
    message = caught.value.errors[0].message
    for spelling in (*every_operator(), *NULL_TESTS):
        assert spelling in message
    for needed in ("within", "has", "is blank", "anniversary within", "has every"):
        assert needed in every_operator() + NULL_TESTS


def test_the_grammar_spells_the_vocabulary() -> None:
    """Every operator of the vocabulary is an `OPERATOR`, `NULL_TEST` or period token of the
    grammar, and the grammar reads no operator the vocabulary lacks."""
    import re

    from audiencefilter.text.grammar import grammar_text
    from audiencefilter.text.vocabulary import NULL_TESTS, every_operator

    grammar = grammar_text()
    terminals = {}
    for name in ("OPERATOR", "NULL_TEST", "PERIOD", "ANNIVERSARY"):
        found = re.search(rf"^{name}(?:\.\d)?: /(.*)/i?$", grammar, re.MULTILINE)
        assert found is not None, name
        terminals[name] = re.compile(found.group(1), re.IGNORECASE)
    for spelling in every_operator():
        if spelling == "within":
            assert terminals["PERIOD"].fullmatch("within last 7 days")
        elif spelling == "anniversary within":
            assert terminals["ANNIVERSARY"].fullmatch("anniversary within this week")
        else:
            assert terminals["OPERATOR"].fullmatch(spelling), spelling
    for test in NULL_TESTS:
        assert terminals["NULL_TEST"].fullmatch(test), test
    alternatives = re.findall(r"[a-z]+(?:\\s\+[a-z]+)*", terminals["OPERATOR"].pattern)
    spelled = {a.replace("\\s+", " ") for a in alternatives} - {"b", "with"}
    assert spelled <= set(every_operator()), spelled - set(every_operator())
