"""Reading the text syntax: every construct, checked against the AST the JSON form reads to."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from audiencefilter import (
    CONTACT,
    FALSE,
    TRUE,
    And,
    Comparison,
    FilterError,
    IsNull,
    Limits,
    Not,
    Op,
    Or,
    Schema,
    parse,
    parse_text,
)

# (text, the where-clause JSON that reads to the same AST)
EQUIVALENTS = [
    ('email = "a@b.c"', {"email": "a@b.c"}),
    ('email == "a@b.c"', {"email": {"equals": "a@b.c"}}),
    ('email != "a@b.c"', {"email": {"not": "a@b.c"}}),
    ("points > 10", {"points": {"gt": 10}}),
    ("points >= 10", {"points": {"gte": 10}}),
    ("points < 10", {"points": {"lt": 10}}),
    ("points <= -10", {"points": {"lte": -10}}),
    ('email contains "gmail"', {"email": {"contains": "gmail"}}),
    ('email starts with "ab"', {"email": {"startsWith": "ab"}}),
    ('email ends with "@acme.com"', {"email": {"endsWith": "@acme.com"}}),
    ('country in ["FR", "DE"]', {"country": {"in": ["FR", "DE"]}}),
    ('country not in ["FR", "DE"]', {"country": {"notIn": ["FR", "DE"]}}),
    ("country in []", {"country": {"in": []}}),
    ("country not in []", {"country": {"notIn": []}}),
    ("company is null", {"company": None}),
    ("company = null", {"company": {"equals": None}}),
    ("company is not null", {"company": {"not": None}}),
    ("company != null", {"company": {"not": None}}),
    ('email = "X" ignoring case', {"email": {"equals": "X", "mode": "insensitive"}}),
    ('email != "X" ignoring case', {"email": {"not": "X", "mode": "insensitive"}}),
    (
        'not (country in ["FR"] ignoring case)',
        {"country": {"not": {"in": ["FR"]}, "mode": "insensitive"}},
    ),
    (
        'firstName starts with "é" ignoring case',
        {"firstName": {"startsWith": "é", "mode": "insensitive"}},
    ),
    ("isVerified = true", {"isVerified": True}),
    ("unsubscribed != false", {"unsubscribed": {"not": False}}),
    ("createdAt >= 2025-01-01", {"createdAt": {"gte": "2025-01-01"}}),
    ('createdAt >= "2025-01-01"', {"createdAt": {"gte": "2025-01-01"}}),
    ("createdAt < 2025-01-31T09:30:00+02:00", {"createdAt": {"lt": "2025-01-31T07:30:00Z"}}),
    ("createdAt = 2025-01-31T09:30:00.123456Z", {"createdAt": "2025-01-31T09:30:00.123456Z"}),
    ("createdAt in [2025-01-01, 2025-02-01]", {"createdAt": {"in": ["2025-01-01", "2025-02-01"]}}),
    ("points = 9007199254740993", {"points": 9007199254740993}),
    ("points = 1.5", {"points": 1.5}),
    ("points = -2.5e-3", {"points": -0.0025}),
    ("true", {}),
    ("false", {"OR": []}),
    ("not true", {"NOT": {}}),
    ("not false", {"NOT": {"OR": []}}),
    ("points > 1 and points < 5", {"points": {"gt": 1, "lt": 5}}),
    ("points > 1 or points < 5", {"OR": [{"points": {"gt": 1}}, {"points": {"lt": 5}}]}),
    ('not (points > 1 or city = "x")', {"NOT": [{"points": {"gt": 1}}, {"city": "x"}]}),
    ('not (points > 1 and city = "x")', {"NOT": {"points": {"gt": 1}, "city": "x"}}),
    ("not not (points > 1)", {"NOT": {"NOT": {"points": {"gt": 1}}}}),
    (
        '(points > 1 and points < 5) and city = "x"',
        {"AND": [{"points": {"gt": 1, "lt": 5}}, {"city": "x"}]},
    ),
]


@pytest.mark.parametrize(("text", "where"), EQUIVALENTS, ids=[t for t, _ in EQUIVALENTS])
def test_text_reads_like_its_json_equivalent(text: str, where: dict[str, object]) -> None:
    assert parse_text(text) == parse(where)


def test_precedence_not_then_and_then_or() -> None:
    a, b, c = (Comparison("points", Op.GT, n) for n in (1, 2, 3))
    text = "points > 1 or points > 2 and not points > 3"
    assert parse_text(text).root == Or((a, And((b, Not(c)))))
    assert parse_text("not points > 1 and points > 2").root == And((Not(a), b))


def test_a_run_of_one_connective_is_one_group_and_parentheses_nest() -> None:
    a, b, c = (Comparison("points", Op.GT, n) for n in (1, 2, 3))
    assert parse_text("points > 1 and points > 2 and points > 3").root == And((a, b, c))
    assert parse_text("(points > 1 and points > 2) and points > 3").root == And((And((a, b)), c))
    assert parse_text("points > 1 and (points > 2 and points > 3)").root == And((a, And((b, c))))
    assert parse_text("(points > 1 or points > 2) or points > 3").root == Or((Or((a, b)), c))
    assert parse_text("((points > 1))").root == a


def test_keywords_are_case_insensitive_and_spacing_is_free() -> None:
    expected = parse_text('email starts with "x" ignoring case and company is not null')
    shouted = 'EMAIL STARTS   WITH "x" Ignoring\tCase AND company IS NOT\n NULL'
    # Field names keep their case: only keywords fold.
    with pytest.raises(FilterError):
        parse_text(shouted)
    assert parse_text(shouted.replace("EMAIL", "email")) == expected


def test_comments_and_line_breaks_are_ignored() -> None:
    text = """
    # VIP customers in France
    points >= 100   # loyal enough
    and country = "FR"  # the # inside a string is text: "a#b"
    """
    assert parse_text(text) == parse({"points": {"gte": 100}, "country": "FR"})
    assert parse_text('city = "a#b"').root == Comparison("city", Op.EQUALS, "a#b")


@pytest.mark.parametrize(
    ("literal", "value"),
    [
        (r'"tab\there"', "tab\there"),
        (r'"quote \" and backslash \\"', 'quote " and backslash \\'),
        (r'"slash \/ b\b f\f n\n r\r"', "slash / b\b f\f n\n r\r"),
        (r'"\u00e9\u00C9"', "éÉ"),
        (r'"\ud83d\ude00"', "😀"),
        ('"😀 ß İ"', "😀 ß İ"),
        (r'"\u0000"', "\x00"),
        ('""', ""),
        ('"%_\\\\"', "%_\\"),
    ],
)
def test_string_escapes(literal: str, value: str) -> None:
    assert parse_text(f"city = {literal}").root == Comparison("city", Op.EQUALS, value)


def test_big_integers_are_exact_and_floats_stay_floats() -> None:
    big = 2**70 + 1
    node = parse_text(f"points = {big}").root
    assert isinstance(node, Comparison)
    assert node.value == big and isinstance(node.value, int)
    node = parse_text("points = 100.0").root
    assert isinstance(node, Comparison) and isinstance(node.value, float)


def test_datetimes_are_utc_instants() -> None:
    node = parse_text("createdAt > 2025-01-31T09:30:00-05:00").root
    assert node == Comparison("createdAt", Op.GT, datetime(2025, 1, 31, 14, 30, tzinfo=UTC))


def test_contains_is_always_case_insensitive() -> None:
    assert parse_text('email contains "X"').root == Comparison("email", Op.CONTAINS, "X", True)
    assert parse_text('email contains "X" ignoring case') == parse_text('email contains "X"')


def test_constants_inside_groups() -> None:
    assert parse_text("true and false or true").root == Or((And((TRUE, FALSE)), TRUE))


def test_null_tests() -> None:
    assert parse_text("company is null").root == IsNull("company")
    assert parse_text("company is not null").root == Not(IsNull("company"))


def test_trailing_comma_in_a_list() -> None:
    assert parse_text('country in ["FR", "DE",]') == parse_text('country in ["FR", "DE"]')


def test_backticks_name_any_field() -> None:
    schema = Schema.of(**{"first name": "string", "in": "number", "a`b": "string"})
    assert parse_text('`first name` = "x"', schema).root == Comparison("first name", Op.EQUALS, "x")
    assert parse_text("`in` > 1", schema).root == Comparison("in", Op.GT, 1)
    assert parse_text(r'`a\`b` = "x"', schema).root == Comparison("a`b", Op.EQUALS, "x")


def test_words_containing_keywords_are_names() -> None:
    schema = Schema.of(android="string", orders="number", notes="string", island="string")
    text = 'android = "x" and orders > 1 and notes is null and island != "y"'
    assert parse_text(text, schema).fields == {"android", "orders", "notes", "island"}


def test_unicode_field_names() -> None:
    schema = Schema.of(prénom="string")
    assert parse_text('prénom = "Zoé"', schema).root == Comparison("prénom", Op.EQUALS, "Zoé")


def test_parse_text_binds_the_schema() -> None:
    flt = parse_text("points > 1")
    assert flt.schema is CONTACT
    assert flt.matches({"points": 2}) and not flt.matches({"points": None})


def test_limits_are_those_of_the_json_form() -> None:
    deep = "not " * 33 + "points > 1"
    with pytest.raises(FilterError, match="nested deeper than 32 levels") as caught:
        parse_text(deep)
    assert caught.value.errors[0].column == 1 + 32 * 4  # the 33rd `not`, as parse reports
    with pytest.raises(FilterError) as caught:
        parse_text("not " * 32 + "points != 1")  # a field-level not is a level too
    assert caught.value.errors[0].column == 1 + 32 * 4
    assert parse_text("not " * 32 + "(points > 1)")  # 32 levels, as {"NOT": ...} 32 times
    with pytest.raises(FilterError, match="over the limit of 3"):
        parse_text('country in ["a", "b", "c", "d"]', limits=Limits(max_array=3))
    with pytest.raises(FilterError, match="more than 5 conditions"):
        parse_text(" or ".join(["points > 1"] * 3), limits=Limits(max_nodes=5))
    with pytest.raises(FilterError, match="over the limit of 20"):
        parse_text("points > 100000 or points < 0", limits=Limits(max_text=20))


def test_deep_nesting_is_an_error_not_a_crash() -> None:
    nested_groups = "points > 1 and (" * 3_000 + "points > 1" + ")" * 3_000
    for text in (nested_groups, "not " * 50_000 + "points > 1"):
        with pytest.raises(FilterError, match="nested deeper") as caught:
            parse_text(text, limits=Limits(max_text=10**6))
        assert caught.value.errors[0].line == 1


def test_redundant_parentheses_add_no_level() -> None:
    text = "(" * 50_000 + "points > 1" + ")" * 50_000
    assert parse_text(text).root == Comparison("points", Op.GT, 1)


def test_every_problem_is_reported_in_order() -> None:
    with pytest.raises(FilterError) as caught:
        parse_text('emial = "x" and points > "5" and city contains 3')
    issues = caught.value.errors
    assert [i.column for i in issues] == [1, 26, 48]
    assert [i.path for i in issues] == ["emial", "points", "city"]


def test_only_str_is_read() -> None:
    with pytest.raises(TypeError):
        parse_text(b"points > 1")  # type: ignore[arg-type]


def test_both_readers_share_one_condition_builder() -> None:
    # The text reader reads syntax only: it reaches no part of the JSON reader.
    import ast
    import inspect

    from audiencefilter.text import read

    tree = ast.parse(inspect.getsource(read))
    imported = {
        node.module
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module is not None
    }
    assert "where.read" not in imported and "language.conditions" in imported
