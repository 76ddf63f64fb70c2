"""SQL WHERE conditions: each construct's reading, the writer, round trips, errors with their
line and column, and hostile input (docs/interop.md)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import sql_where
from audiencefilter.testing.strategies import filters

SCHEMA = af.CONTACT


def _json(text: str) -> str:
    return Filter(sql_where.read(text, SCHEMA)).to_json()


@pytest.mark.parametrize(
    ("text", "canonical"),
    [
        ("points >= 100", '{"points":{"gte":100}}'),
        ("100 < points", '{"points":{"gt":100}}'),
        ("points <> -5", '{"points":{"not":-5}}'),
        ("contacts.country != 'FR'", '{"country":{"not":"FR"}}'),
        ("\"firstName\" = 'Ann'", '{"firstName":{"equals":"Ann"}}'),
        ("FIRSTNAME = 'Ann'", '{"firstName":{"equals":"Ann"}}'),
        ("country IN ('FR', 'DE')", '{"country":{"in":["FR","DE"]}}'),
        ("country NOT IN ('FR')", '{"country":{"notIn":["FR"]}}'),
        ("NOT (country IN ('FR'))", '{"country":{"not":{"in":["FR"]}}}'),
        ("points BETWEEN 1 AND 5", '{"points":{"gte":1,"lte":5}}'),
        ("email LIKE 'ann%'", '{"email":{"startsWith":"ann"}}'),
        ("email NOT LIKE '%.com'", '{"email":{"not":{"endsWith":".com"}}}'),
        ("email ILIKE '%Acme%'", '{"email":{"contains":"Acme"}}'),
        ("email LIKE '%@%'", '{"email":{"contains":"@"}}'),
        ("email ILIKE 'ann%'", '{"email":{"startsWith":"ann","mode":"insensitive"}}'),
        ("email LIKE 'ann'", '{"email":{"equals":"ann"}}'),
        ("company IS NULL", '{"company":null}'),
        ("company IS NOT NULL", '{"company":{"not":null}}'),
        ("isVerified", '{"isVerified":{"equals":true}}'),
        ("NOT isVerified", '{"isVerified":{"not":true}}'),
        ("unsubscribed = FALSE", '{"unsubscribed":{"equals":false}}'),
        ("TRUE", "{}"),
        ("FALSE", '{"OR":[]}'),
        ("referrals > points", '{"referrals":{"gt":{"_ref":"points"}}}'),
        ("createdAt >= '2025-01-01'", '{"createdAt":{"gte":"2025-01-01T00:00:00Z"}}'),
        (
            "points > 1 AND (country = 'FR' OR city = 'Paris')",
            '{"points":{"gt":1},"OR":[{"country":{"equals":"FR"}},{"city":{"equals":"Paris"}}]}',
        ),
        (
            "EXISTS (SELECT 1 FROM actions WHERE actions.sub_id = contacts.id)",
            '{"actions":{"some":{}}}',
        ),
        (
            "EXISTS (SELECT * FROM actions AS a WHERE contacts.id = a.sub_id AND a.name = 'share' "
            "AND a.created_at > '2025-01-01 00:00:00.000000')",
            '{"actions":{"some":{"name":{"equals":"share"},"createdAt":{"gt":"2025-01-01T00:00:00Z"}}}}',
        ),
        (
            "NOT EXISTS (SELECT 1 FROM actions a WHERE a.sub_id = contacts.id AND name = 'x')",
            '{"actions":{"none":{"name":{"equals":"x"}}}}',
        ),
        (
            "NOT EXISTS (SELECT 1 FROM actions a WHERE a.sub_id = contacts.id AND "
            "(a.increase > 0) IS NOT TRUE)",
            '{"actions":{"every":{"increase":{"gt":0}}}}',
        ),
        (
            "EXISTS (SELECT 1 FROM contact_audiences AS m WHERE m.contact_id = contacts.id AND "
            "m.name = 'vip')",
            '{"audiences":{"some":{"name":{"equals":"vip"}}}}',
        ),
    ],
)
def test_each_construct_reads_as_sql_means_it(text: str, canonical: str) -> None:
    assert _json(text) == canonical


@pytest.mark.parametrize(
    ("text", "line", "column", "message", "suggestion"),
    [
        ("points > '5'", 1, 10, "expected a number", "without quotes"),
        ("country = 5", 1, 11, "expected a string", "'5' in quotes"),
        ("points >= 1 AND\n  ponts = 3", 2, 3, 'unknown column "ponts"', '"points"'),
        ("email LIKE '%ab%'", 1, 12, "minds case", "ILIKE"),
        ("email LIKE 'a_b%'", 1, 12, "_ matches any one character", "'text%'"),
        ("email LIKE 'a\\%'", 1, 12, "backslash", None),
        ("email LIKE 'a%' ESCAPE '!'", 1, 1, "ESCAPE", None),
        ("email LIKE '%'", 1, 12, "not literal text", None),
        ("points = NULL", 1, 1, "never TRUE", "IS NULL"),
        ("points BETWEEN SYMMETRIC 1 AND 2", 1, 1, "SYMMETRIC", None),
        ("isVerified IS TRUE", 1, 1, "IS TRUE", None),
        ("country IN (SELECT x FROM t)", 1, 1, "subquery", None),
        ("points + 1 > 2", 1, 1, "compares no column", "functions and arithmetic"),
        ("country", 1, 1, "not a condition", None),
        ("orders.total > 1", 1, 1, 'unknown table "orders"', "contacts"),
        ("LOWER(email) = 'x'", 1, 1, "compares no column", "ILIKE"),
        (
            "EXISTS (SELECT 1 FROM orders WHERE orders.sub_id = contacts.id)",
            1,
            23,
            '"orders" is no relation',
            None,
        ),
        (
            "EXISTS (SELECT 1 FROM actions WHERE name = 'x')",
            1,
            16,
            "correlated once",
            "actions.sub_id = contacts.id",
        ),
        (
            "EXISTS (SELECT 1 FROM actions WHERE actions.sub_id = contacts.id GROUP BY name)",
            1,
            16,
            "SELECT 1 FROM <relation> WHERE",
            None,
        ),
        ("data = 'x'", 1, 1, "json field", "JSON form"),
        ("points >", 1, 8, "ends too early", "e.g. points >= 100"),
        ("points = 1; DROP TABLE contacts", 1, 13, 'unexpected "DROP"', None),
        ("country = 'FR", None, None, "invalid SQL condition", None),
    ],
)
def test_errors_have_line_column_what_and_fix(
    text: str, line: int | None, column: int | None, message: str, suggestion: str | None
) -> None:
    with pytest.raises(af.FilterError) as caught:
        sql_where.read(text, SCHEMA)
    issue = caught.value.errors[0]
    assert message in issue.message
    assert (issue.line, issue.column) == (line, column)
    if suggestion is not None:
        assert issue.suggestion is not None and suggestion in issue.suggestion


def test_every_problem_is_reported_at_once() -> None:
    with pytest.raises(af.FilterError) as caught:
        sql_where.read("ponts = 1 AND points = 'x' OR email LIKE '%a_%'", SCHEMA)
    assert [e.path for e in caught.value.errors] == ["ponts", "points", "email"]


# Hostile input.


@pytest.mark.parametrize(
    "text",
    [
        "(" * 5000 + "points = 1" + ")" * 5000,
        "NOT " * 5000 + "isVerified",
        "points = " + "- " * 5000 + "1",
        "points = 1 AND " * 2 + "(" * 40 + "points = 1" + ")" * 40,
    ],
)
def test_deep_nesting_is_refused_before_parsing(text: str) -> None:
    with pytest.raises(af.FilterError, match="nested deeper"):
        sql_where.read(text, SCHEMA)


def test_long_chains_huge_lists_numbers_and_text_are_bounded() -> None:
    chain = " AND ".join(["points = 1"] * 5000)
    assert isinstance(sql_where.read(chain, SCHEMA), object)  # flat: no recursion error
    with pytest.raises(af.FilterError, match="conditions"):
        sql_where.read(" OR ".join(["points = 1"] * 12_000), SCHEMA)
    with pytest.raises(af.FilterError, match="over the limit"):
        sql_where.read("points IN (" + ", ".join(["1"] * 12_000) + ")", SCHEMA)
    with pytest.raises(af.FilterError, match="out of range"):
        sql_where.read("points = 1e999", SCHEMA)
    with pytest.raises(af.FilterError, match="out of range"):
        sql_where.read("points = " + "9" * 5000, SCHEMA)
    with pytest.raises(af.FilterError, match="over the limit"):
        sql_where.read("points = 1 " + " " * 300_000, SCHEMA)
    for odd in (None, 3, b"points = 1", {"points": 1}, ["points = 1"]):
        with pytest.raises(af.FilterError, match="text of a SQL condition"):
            sql_where.read(odd, SCHEMA)


# The writer.


@settings(max_examples=150)
@given(flt=filters(SCHEMA, max_leaves=6))
def test_ours_to_sql_and_back_is_the_same_filter(flt: Filter) -> None:
    try:
        text = sql_where.write(flt.root, SCHEMA)
    except af.FilterError as refused:
        assert refused.errors[0].message
        return
    assert Filter(sql_where.read(text, SCHEMA)).to_json() == flt.to_json(), text


@pytest.mark.parametrize(
    ("where", "words"),
    [
        ({"email": {"equals": "a", "mode": "insensitive"}}, "ignoring case"),
        ({"email": {"blank": True}}, "blank"),
        ({"data": {"path": ["plan"], "equals": "pro"}}, "JSON"),
        ({"createdAt": {"gte": {"ago": "P30D"}}}, "relative"),
        ({"email": {"startsWith": "50%"}}, "LIKE"),
        ({"actions": {"count": {"gte": 3}}}, "count"),
        ({"country": {"in": []}}, "empty"),
    ],
)
def test_the_writer_refuses_what_it_cannot_read_back(where: Any, words: str) -> None:
    with pytest.raises(af.FilterError, match=words):
        sql_where.write(af.parse(where).root, SCHEMA)


def test_the_writer_gives_portable_sql() -> None:
    flt = af.parse(
        {
            "points": {"gte": 100},
            "email": {"contains": "acme"},
            "actions": {"some": {"name": "share"}},
            "country": {"not": "FR"},
        }
    )
    assert sql_where.write(flt.root, SCHEMA) == (
        '"points" >= 100 AND "email" ILIKE \'%acme%\' AND EXISTS (SELECT 1 FROM "actions" '
        'AS "r1" WHERE "r1"."sub_id" = "contacts"."id" AND ("r1"."name" = '
        "'share')) AND \"country\" <> 'FR'"
    )


def test_a_dialect_chooses_how_the_text_is_read() -> None:
    assert _json_dialect("`points` >= 1 AND `firstName` = 'Ann'", "mysql") == (
        '{"points":{"gte":1},"firstName":{"equals":"Ann"}}'
    )
    assert _json_dialect("email ILIKE 'a%'", "postgres") == (
        '{"email":{"startsWith":"a","mode":"insensitive"}}'
    )


def _json_dialect(text: str, dialect: str) -> str:
    return Filter(sql_where.read(text, SCHEMA, dialect=dialect)).to_json()
