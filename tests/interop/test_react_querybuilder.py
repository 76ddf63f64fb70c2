"""react-querybuilder queries: each operator's reading, the writer, round trips, errors and
hostile input (docs/interop.md)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import react_querybuilder as rqb
from audiencefilter.language.nodes import FALSE, TRUE, And, Const, Node, Not, Or
from audiencefilter.testing.strategies import filters

SCHEMA = af.CONTACT


def _group(*rules: Any, **extra: Any) -> dict[str, Any]:
    return {"combinator": "and", "rules": list(rules), **extra}


def _json(query: Any) -> str:
    return Filter(rqb.read(query, SCHEMA)).to_json()


def _rule(field: str, operator: str, value: Any = None, **extra: Any) -> dict[str, Any]:
    return {"field": field, "operator": operator, "value": value, **extra}


@pytest.mark.parametrize(
    ("rule", "canonical"),
    [
        (_rule("points", "=", "100"), '{"points":{"equals":100}}'),
        (_rule("points", "!=", 5), '{"points":{"not":5}}'),
        (_rule("points", ">=", "-2.5"), '{"points":{"gte":-2.5}}'),
        (_rule("country", "<", "M"), '{"country":{"lt":"M"}}'),
        (_rule("email", "contains", "acme"), '{"email":{"contains":"acme"}}'),
        (
            _rule("email", "beginsWith", "ann"),
            '{"email":{"startsWith":"ann","mode":"insensitive"}}',
        ),
        (
            _rule("email", "doesNotEndWith", ".com"),
            '{"email":{"not":{"endsWith":".com"},"mode":"insensitive"}}',
        ),
        (_rule("company", "null"), '{"company":null}'),
        (_rule("company", "notNull", "ignored"), '{"company":{"not":null}}'),
        (_rule("country", "in", "FR, DE"), '{"country":{"in":["FR","DE"]}}'),
        (_rule("country", "in", ["FR", " DE "]), '{"country":{"in":["FR","DE"]}}'),
        (_rule("city", "notIn", "a\\,b,c"), '{"city":{"notIn":["a,b","c"]}}'),
        (_rule("points", "between", "1,5"), '{"points":{"gte":1,"lte":5}}'),
        (_rule("points", "notBetween", [5, 1]), '{"NOT":{"points":{"gte":5,"lte":1}}}'),
        (_rule("isVerified", "=", True), '{"isVerified":{"equals":true}}'),
        (
            _rule("referrals", ">", "points", valueSource="field"),
            '{"referrals":{"gt":{"_ref":"points"}}}',
        ),
        (
            _rule("referrals", "in", ["points", "referrals"], valueSource="field"),
            '{"OR":[{"referrals":{"equals":{"_ref":"points"}}},'
            '{"referrals":{"equals":{"_ref":"referrals"}}}]}',
        ),
        (_rule("data.plan", "=", "pro"), '{"data":{"path":["plan"],"equals":"pro"}}'),
        (_rule("data.address.city", "notNull"), '{"data":{"path":["address","city"],"not":null}}'),
        (
            _rule("createdAt", ">", "2025-01-31 09:30:00.000000"),
            '{"createdAt":{"gt":"2025-01-31T09:30:00Z"}}',
        ),
        (_rule("createdAt", ">=", "2025-01-31"), '{"createdAt":{"gte":"2025-01-31T00:00:00Z"}}'),
        (_rule("points", "IN", "1,2"), '{"points":{"in":[1,2]}}'),
    ],
)
def test_each_operator_reads_as_its_sql_export_means(rule: Any, canonical: str) -> None:
    assert _json(_group(rule)) == canonical


def test_groups_negation_and_the_exports_skipping() -> None:
    eq = _rule("country", "=", "FR")
    assert _json(_group(eq, _group(eq, eq, combinator="or", **{"not": True}))) == (
        '{"country":{"equals":"FR"},"NOT":[{"country":{"equals":"FR"}},'
        '{"country":{"equals":"FR"}}]}'
    )
    # the export's `(1 = 1)`: an empty group is TRUE, its NOT ignored
    assert _json(_group(**{"not": True})) == "{}"
    # ... but NOT of a group holding an empty group is NOT (1 = 1)
    assert rqb.read(_group(_group(), **{"not": True}), SCHEMA) == Not(TRUE)
    # muted rules and placeholders are left out, disabled ones kept
    muted = _rule("points", ">", "1", muted=True)
    placeholder = _rule("~", "=", "x")
    assert _json(_group(muted, placeholder, _rule("city", "=", "x", disabled=True))) == (
        '{"city":{"equals":"x"}}'
    )
    # a muted group alone in its parent is TRUE (NOT of it FALSE); among siblings, left out
    assert rqb.read(_group(_group(eq, muted=True), **{"not": True}), SCHEMA) == Not(TRUE)
    assert _json(_group(_group(eq, muted=True), eq)) == '{"country":{"equals":"FR"}}'


def test_independent_combinators_bind_and_before_or() -> None:
    one, two = _rule("points", "=", "1"), _rule("points", "=", "2")
    fr = _rule("country", "=", "FR")
    query = {"rules": [one, "or", two, "and", fr]}
    assert (
        Filter(rqb.read(query, SCHEMA)).to_text() == 'points = 1 or points = 2 and country = "FR"'
    )
    # a muted rule takes its combinator with it: the one before the next kept rule counts
    query = {"rules": [one, "and", {**two, "muted": True}, "or", fr]}
    assert Filter(rqb.read(query, SCHEMA)).to_text() == 'points = 1 or country = "FR"'


def test_json_text_errors_have_lines_and_columns() -> None:
    text = json.dumps(_group(_rule("points", ">", "12abc")), indent=1)
    with pytest.raises(af.FilterError) as caught:
        rqb.read(text, SCHEMA)
    issue = caught.value.errors[0]
    assert issue.path == "rules[0].value"
    assert issue.line is not None and issue.line > 1 and issue.column is not None
    assert 'found the string "12abc"' in issue.message
    assert issue.suggestion and "digits" in issue.suggestion


@pytest.mark.parametrize(
    ("query", "path", "message", "suggestion"),
    [
        (_group(_rule("ponts", "=", 1)), "rules[0].field", 'unknown field "ponts"', "points"),
        (_group(_rule("points", "gte", 1)), "rules[0].operator", "unknown operator", '">="'),
        (_group(_rule("email", "contains", "a_b")), "rules[0].value", "wildcards", "remove"),
        (_group(_rule("country", "in", [])), "rules[0].value", "at least one value", "widens"),
        (_group(_rule("points", "between", [1])), "rules[0].value", "two values", "[10, 20]"),
        (_group(_rule("isVerified", "=", "true")), "rules[0].value", "true or false", "boolean"),
        (_group(_rule("country", "=", 5)), "rules[0].value", "expected a string", '"5"'),
        (_group(_rule("points", "=", 2**60)), "rules[0].value", "beyond 2^53", "string"),
        (_group(_rule("points", "=", None)), "rules[0].value", "one value", '"null"'),
        (
            _group(_rule("email", "beginsWith", "x", valueSource="field")),
            "rules[0].value",
            "LIKE pattern",
            "compare fields",
        ),
        (
            _group(_rule("points", ">", "email", valueSource="field")),
            "rules[0].value",
            "a field reference compares fields of one type",
            "referrals",
        ),
        (_group(_rule("tags", "=", "x")), "rules[0].field", 'unknown field "tags"', None),
        (_group(_rule("data", "=", "x")), "rules[0].field", "JSON field", "data.plan"),
        (
            _group(_rule("points", "=", "1"), combinator="xor"),
            "combinator",
            "xor",
            "and, or and not",
        ),
        (
            {"rules": [_rule("points", "=", 1), "nand", _rule("points", "=", 2)]},
            "rules[1]",
            '"and" or "or"',
            "alternates",
        ),
        (_group(_rule("points", "=", 1), "and"), "rules[1]", "a rule or a group", None),
        (_group(_rule("points", "=", 1), **{"not": "yes"}), "not", "true or false", None),
        ([1, 2], "", "rule group", None),
    ],
)
def test_errors_name_the_place_what_and_the_fix(
    query: Any, path: str, message: str, suggestion: str | None
) -> None:
    with pytest.raises(af.FilterError) as caught:
        rqb.read(query, SCHEMA)
    issue = caught.value.errors[0]
    assert issue.path == path
    assert message in issue.message
    if suggestion is not None:
        assert issue.suggestion is not None and suggestion in issue.suggestion


def test_every_problem_is_reported_at_once() -> None:
    query = _group(_rule("ponts", "=", 1), _rule("points", "=", "x"), _rule("a", "?", 1))
    with pytest.raises(af.FilterError) as caught:
        rqb.read(query, SCHEMA)
    assert [e.path for e in caught.value.errors] == [
        "rules[0].field",
        "rules[1].value",
        "rules[2].operator",
        "rules[2].field",
    ]


# Hostile input.


def test_deep_nesting_is_refused_without_recursion_errors() -> None:
    query: dict[str, Any] = _group(_rule("points", "=", 1))
    for _ in range(5000):
        query = _group(query)
    with pytest.raises(af.FilterError, match="nested deeper"):
        rqb.read(query, SCHEMA)
    text = '{"rules": [' * 100_000 + "]}" * 100_000
    with pytest.raises(af.FilterError):
        rqb.read(text, SCHEMA)


def test_huge_arrays_numbers_and_odd_types_are_refused() -> None:
    with pytest.raises(af.FilterError, match="over the limit"):
        rqb.read(_group(_rule("points", "in", list(range(20_000)))), SCHEMA)
    with pytest.raises(af.FilterError, match="conditions"):
        rqb.read(_group(*[_rule("points", "=", 1)] * 20_000), SCHEMA)
    with pytest.raises(af.FilterError, match="expected a number"):
        rqb.read(_group(_rule("points", "=", "9" * 100_000)), SCHEMA)
    with pytest.raises(af.FilterError, match="over the limit"):
        rqb.read(" " * 300_000 + "{}", SCHEMA)
    for odd in (None, 3, "x", [], {"rules": "x"}, {"rules": [None, 1.5, [], "and"]}):
        with pytest.raises(af.FilterError):
            rqb.read(odd, SCHEMA)
    with pytest.raises(af.FilterError):
        rqb.read(_group({"field": ["points"], "operator": {}, "value": object()}), SCHEMA)


# The writer.


def _folded(node: Node) -> Node:
    """The tree with FALSE spelt `Not(TRUE)`, as react-querybuilder spells it (NOT of an
    empty group): it has no empty OR."""
    if node == FALSE:
        return Not(TRUE)
    if isinstance(node, And | Or):
        return type(node)(tuple(_folded(item) for item in node.items))
    if isinstance(node, Not):
        return Not(_folded(node.item))
    return node


@settings(max_examples=120)
@given(flt=filters(SCHEMA, max_leaves=6))
def test_ours_to_react_querybuilder_and_back_is_the_same_filter(flt: Filter) -> None:
    try:
        query = rqb.write(flt.root, SCHEMA)
    except af.FilterError as refused:
        assert refused.errors[0].message  # a node with no faithful form, said so
        return
    json.dumps(query)  # what the component loads is JSON
    assert Filter(rqb.read(query, SCHEMA)).to_json() == Filter(_folded(flt.root)).to_json()


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ({"actions": {"some": {"name": "x"}}}, "relation conditions"),
        ({"email": {"blank": True}}, "blank"),
        ({"email": {"startsWith": "a"}}, "minds case"),
        ({"email": {"equals": "a", "mode": "insensitive"}}, "ignores case"),
        ({"createdAt": {"gte": {"ago": "P30D"}}}, "relative"),
        ({"createdAt": {"within": {"this": "month"}}}, "within"),
        ({"email": {"contains": "50%", "mode": "insensitive"}}, "wildcards"),
        ({"data": {"path": ["a.b"], "equals": 1}}, "dot"),
    ],
)
def test_the_writer_refuses_what_has_no_faithful_form(where: Any, words: str) -> None:
    with pytest.raises(af.FilterError, match=words):
        rqb.write(af.parse(where).root, SCHEMA)


def test_the_writer_gives_a_loadable_rule_group() -> None:
    flt = af.parse({"points": {"gte": 100}, "NOT": {"country": {"in": ["FR", "DE"]}}})
    assert rqb.write(flt.root, SCHEMA) == {
        "combinator": "and",
        "not": False,
        "rules": [
            {"field": "points", "operator": ">=", "value": 100},
            {
                "combinator": "and",
                "not": True,
                "rules": [{"field": "country", "operator": "in", "value": ["FR", "DE"]}],
            },
        ],
    }
    assert rqb.write(TRUE, SCHEMA) == {"combinator": "and", "not": False, "rules": []}
    assert rqb.read(rqb.write(Const(False), SCHEMA), SCHEMA) == Not(TRUE)
