"""The where-clause reader: canonical forms, exact error paths, messages and suggestions,
positions in JSON text, and limits that end in FilterError whatever the input."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta, timezone
from types import MappingProxyType

import pytest

import audiencefilter as af
from audiencefilter import And, Comparison, Const, IsNull, Not, Op, Or


def issues(where: object, **kwargs: object) -> list[af.Issue]:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where, **kwargs)  # type: ignore[arg-type]
    return list(caught.value.errors)


def test_literal_shorthand_equals_spelled_out_equals() -> None:
    assert af.parse({"email": "a"}) == af.parse({"email": {"equals": "a"}})
    assert af.parse({"email": "a"}).root == Comparison("email", Op.EQUALS, "a")


def test_single_object_equals_one_element_array() -> None:
    for key in ("AND", "OR", "NOT"):
        assert af.parse({key: {"email": "a"}}) == af.parse({key: [{"email": "a"}]})


def test_group_of_one_is_its_item_and_empty_groups_are_constants() -> None:
    assert af.parse({"AND": [{"email": "a"}]}).root == Comparison("email", Op.EQUALS, "a")
    assert af.parse({"AND": []}).root == Const(True)
    assert af.parse({"OR": []}).root == Const(False)
    assert af.parse({"NOT": []}).root == Const(True)
    assert af.parse({}).root == Const(True)
    assert af.parse({"email": {}}).root == Const(True)


def test_not_array_is_not_of_or() -> None:
    root = af.parse({"NOT": [{"email": "a"}, {"city": "b"}]}).root
    assert root == Not(
        Or((Comparison("email", Op.EQUALS, "a"), Comparison("city", Op.EQUALS, "b")))
    )


def test_field_not_forms() -> None:
    assert af.parse({"email": {"not": None}}).root == Not(IsNull("email"))
    assert af.parse({"email": {"not": "a"}}).root == Not(Comparison("email", Op.EQUALS, "a"))
    both = af.parse({"points": {"not": {"gt": 1, "lt": 5}}}).root
    assert both == And((Not(Comparison("points", Op.GT, 1)), Not(Comparison("points", Op.LT, 5))))


def test_mode_is_inherited_by_not_and_contains_is_always_insensitive() -> None:
    root = af.parse({"email": {"not": "A", "mode": "insensitive"}}).root
    assert root == Not(Comparison("email", Op.EQUALS, "A", insensitive=True))
    assert af.parse({"email": {"contains": "A"}}) == af.parse(
        {"email": {"contains": "A", "mode": "insensitive"}}
    )


def test_datetimes_are_normalized_to_utc() -> None:
    root = af.parse({"createdAt": "2025-01-01T02:00:00+02:00"}).root
    assert root == Comparison("createdAt", Op.EQUALS, datetime(2025, 1, 1, tzinfo=UTC))
    assert isinstance(root, Comparison) and root.value.tzinfo is UTC  # type: ignore[union-attr]


def test_mapping_input_may_hold_datetimes_tuples_and_mapping_proxies() -> None:
    moment = datetime(2025, 1, 1, 2, tzinfo=timezone(timedelta(hours=2)))
    flt = af.parse(MappingProxyType({"createdAt": {"in": (moment,)}}))
    assert flt == af.parse({"createdAt": {"in": ["2025-01-01T00:00:00Z"]}})


def test_text_and_bytes_and_dict_give_the_same_filter() -> None:
    where = {"OR": [{"points": {"gte": 10}}, {"email": {"endsWith": "@x.org"}}]}
    text = json.dumps(where)
    assert af.parse(text) == af.parse(text.encode()) == af.parse(where)


def test_every_problem_is_reported_once_in_input_order() -> None:
    found = issues({"emial": 1, "OR": [{"points": "x"}], "city": {"gt": 1}})
    assert [i.path for i in found] == ["emial", "OR[0].points", "city.gt"]


def test_unknown_field_message_and_suggestion() -> None:
    (issue,) = issues({"fristName": "a"})
    assert issue.path == "fristName"
    assert issue.message == 'unknown field "fristName"'
    assert issue.suggestion == 'did you mean "firstName"?'


def test_unknown_field_without_close_match_lists_fields() -> None:
    (issue,) = issues({"zzzzzz": 1})
    assert issue.suggestion is not None and issue.suggestion.startswith("filterable fields are")
    assert "email" in issue.suggestion


def test_unknown_operator_names_expected_ones() -> None:
    (issue,) = issues({"OR": [{"email": "a"}, {"email": {"startWith": "a"}}]})
    assert issue.path == "OR[1].email.startWith"
    assert (
        "expected one of contains, endsWith, equals, gt, gte, in, lt, lte, notIn, startsWith, "
        "not, mode, blank" in issue.message
    )
    assert issue.suggestion == 'did you mean "startsWith"?'


def test_wrong_type_names_expected_and_found() -> None:
    (issue,) = issues({"OR": [{"email": "a"}, {"points": {"gte": "ten"}}]})
    assert issue.path == "OR[1].points.gte"
    assert issue.message == 'expected a number for number field "points", found the string "ten"'


def test_ordering_on_boolean_explains_where_it_applies() -> None:
    (issue,) = issues({"isVerified": {"lt": True}})
    assert issue.message == (
        'lt applies to string, number and date-time fields; "isVerified" is a boolean field'
    )


def test_boolean_is_not_a_number() -> None:
    (issue,) = issues({"points": {"gt": True}})
    assert issue.message == 'expected a number for number field "points", found true'


def test_null_inside_in_suggests_or() -> None:
    (issue,) = issues({"country": {"in": ["FR", None]}})
    assert issue.path == "country.in[1]"
    assert issue.suggestion == 'to match nulls too, use OR with "country": null'


def test_mode_inside_not_is_refused_with_fix() -> None:
    (issue,) = issues({"email": {"not": {"equals": "a", "mode": "insensitive"}}})
    assert issue.path == "email.not.mode"
    assert issue.suggestion == "put mode beside not, in the field's object; not inherits it"


def test_duplicate_keys_are_an_error_at_their_path() -> None:
    (issue,) = issues('{"OR": [{"city": "a", "city": "b"}]}')
    assert issue.path == "OR[0].city"
    assert "appears more than once" in issue.message


def test_json_text_errors_carry_line_and_column() -> None:
    text = '{\n  "OR": [\n    {"emial": "a"},\n    {"points": {"gte": "ten"}}\n  ]\n}'
    first, second = issues(text)
    assert (first.path, first.line, first.column) == ("OR[0].emial", 3, 6)
    assert (second.path, second.line, second.column) == ("OR[1].points.gte", 4, 24)


def test_invalid_json_reports_line_and_column() -> None:
    (issue,) = issues('{"points": \n  {"gte": 1,}}')
    assert issue.path == ""
    assert issue.message.startswith("invalid JSON")
    assert (issue.line, issue.column) == (2, 13)


@pytest.mark.parametrize(
    "text",
    [
        "points >= 100",
        '  email contains "gmail"',
        "(points > 1 or referrals >= 3)",
        "not unsubscribed = true",
        'data.plan = "pro"',
        "`first name` is null",
        "true and points > 1",
    ],
)
def test_text_syntax_given_to_parse_suggests_parse_text(text: str) -> None:
    (issue,) = issues(text)
    assert issue.message.startswith("invalid JSON")
    assert issue.suggestion is not None and "parse_text" in issue.suggestion
    af.parse_text(text.replace("`first name`", "company"))  # it is indeed the text syntax


@pytest.mark.parametrize("text", ['{"points": ', "", "[1,", '"points >= 100', "nul", "points"])
def test_broken_json_gets_no_text_syntax_advice(text: str) -> None:
    (issue,) = issues(text)
    assert issue.suggestion is None


def test_error_lists_every_issue_in_its_message() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse({"emial": 1, "points": "x"})
    text = str(caught.value)
    assert text.startswith("invalid filter (2 problems):")
    assert 'emial: unknown field "emial"; did you mean "email"?' in text
    assert caught.value.to_dicts()[0] == {
        "path": "emial",
        "message": 'unknown field "emial"',
        "suggestion": 'did you mean "email"?',
    }


def test_filter_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        af.parse("[]")


def _nested(depth: int) -> dict[str, object]:
    where: dict[str, object] = {"points": 1}
    for _ in range(depth):
        where = {"AND": [where]}
    return where


def test_depth_limit_allows_32_and_refuses_33() -> None:
    af.parse(_nested(32))
    (issue,) = issues(_nested(33))
    assert issue.message == "groups are nested deeper than 32 levels"
    assert issue.path == ".".join(["AND[0]"] * 32) + ".AND"


def test_field_not_counts_towards_depth() -> None:
    where: dict[str, object] = {"points": {"not": {"not": {"not": 1}}}}
    af.parse(where, limits=af.Limits(max_depth=3))
    assert issues(where, limits=af.Limits(max_depth=2))[0].path == "points.not.not.not"


def test_node_limit_is_reported_once() -> None:
    found = issues({"OR": [{"points": i} for i in range(10_001)]})
    assert len(found) == 1
    assert found[0].message == "the filter has more than 10000 conditions"


def test_array_limit() -> None:
    (issue,) = issues({"points": {"in": list(range(10_001))}})
    assert issue.path == "points.in"
    af.parse({"points": {"in": list(range(10_000))}})


def test_text_size_limit_counts_utf8_bytes() -> None:
    text = json.dumps({"email": {"in": ["é" * 100] * 1000}}, ensure_ascii=False)
    assert len(text) < 150_000 < len(text.encode())
    (issue,) = issues(text, limits=af.Limits(max_text=150_000))
    assert issue.message.startswith("the filter text is 204019 bytes, over the limit of 150000")
    af.parse(text, limits=af.Limits(max_text=250_000))


@pytest.mark.parametrize("opener", ["[", '{"AND":', '{"a":'])
def test_very_deep_json_text_is_a_filter_error_not_a_recursion_error(opener: str) -> None:
    text = opener * 100_000
    assert issues(text)


def test_deep_mapping_input_and_cycles_end_in_filter_error() -> None:
    cyclic: dict[str, object] = {}
    cyclic["AND"] = cyclic
    assert issues(cyclic)[0].message.startswith("groups are nested deeper")
    assert issues(_nested(5000))


def test_non_string_keys_and_odd_python_values_are_issues() -> None:
    found = issues({1: "a", "points": object(), "email": {"in": {"a"}}})  # type: ignore[dict-item]
    assert [i.path for i in found] == ["", "points", "email.in"]


def test_invalid_utf8_bytes_are_a_filter_error() -> None:
    issues(b'{"email": "\xff"}')


def test_huge_integer_strings_are_a_filter_error() -> None:
    issues('{"points": ' + "9" * 5000 + "}")


def test_big_integers_stay_exact() -> None:
    root = af.parse('{"points": 9007199254740993}').root
    assert root == Comparison("points", Op.EQUALS, 2**53 + 1)
    assert af.parse(af.parse('{"points": 9007199254740993}').to_json()).root == root


def test_custom_schema_is_data() -> None:
    schema = af.CONTACT.with_fields(phoneNumber="string", isGDPR="boolean")
    assert af.parse({"isGDPR": True, "phoneNumber": {"startsWith": "+33"}}, schema).matches(
        {"isGDPR": True, "phoneNumber": "+33 6"}
    )
    assert issues({"isGDPR": True})[0].path == "isGDPR"
    with pytest.raises(ValueError, match="unknown type"):
        af.Schema.of(plan="enum")
    with pytest.raises(ValueError, match="reserved"):
        af.Schema.of(AND="string")


def test_filters_from_different_schemas_differ() -> None:
    other = af.CONTACT.with_fields(phoneNumber="string")
    assert af.parse({"email": "a"}) != af.parse({"email": "a"}, other)


@pytest.mark.parametrize("mode", [True, 1, None, "Insensitive"])
def test_mode_takes_only_its_two_words(mode: object) -> None:
    (issue,) = issues({"email": {"equals": "a", "mode": mode}})
    assert issue.path == "email.mode"
    assert issue.message.startswith('expected "insensitive" or "default"')


def test_in_null_and_not_in_null_are_null_tests_as_in_prisma() -> None:
    assert af.parse({"points": {"in": None}}) == af.parse({"points": None})
    assert af.parse({"points": {"notIn": None}}) == af.parse({"points": {"not": None}})
    assert af.parse_text("data.plan not in null") == af.parse(
        {"data": {"path": ["plan"], "not": None}}
    )
    (issue,) = issues({"points": {"in": [1, None]}})
    assert issue.path == "points.in[1]"
