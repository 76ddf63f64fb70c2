"""Unit tests of the SQL text back-end: golden SQL per dialect, column mapping, identifier quoting,
placeholders and parameters. Agreement with memory on real engines is the job of the
conformance, differential and injection suites."""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.backends.sql.dialects import DIALECTS, get_dialect
from audiencefilter.backends.sql.text import SqlWriter
from audiencefilter.language.visitor import missing_handlers

F5 = {
    "AND": [
        {"unsubscribed": False},
        {"createdAt": {"gte": "2025-01-01T00:00:00Z"}},
        {"OR": [{"points": {"gt": 500}}, {"referrals": {"gte": 3}}, {"company": {"not": None}}]},
    ]
}

GOLDEN: list[tuple[dict[str, Any], dict[str, str]]] = [
    (
        F5,
        {
            "postgresql": '"unsubscribed" = FALSE AND "createdAt" >= TIMESTAMP WITH TIME ZONE '
            "'2025-01-01 00:00:00.000000+00:00' AND "
            '("points" > 500 OR "referrals" >= 3 OR NOT ("company" IS NULL))',
            "sqlite": '"unsubscribed" = 0 AND "createdAt" >= \'2025-01-01 00:00:00.000000\' AND '
            '("points" > 500 OR "referrals" >= 3 OR NOT ("company" IS NULL))',
            "mysql": "`unsubscribed` = FALSE AND `createdAt` >= TIMESTAMP "
            "'2025-01-01 00:00:00.000000' AND "
            "(`points` > 500 OR `referrals` >= 3 OR NOT (`company` IS NULL))",
            "duckdb": '"unsubscribed" = FALSE AND "createdAt" >= TIMESTAMP WITH TIME ZONE '
            "'2025-01-01 00:00:00.000000+00:00' AND "
            '("points" > 500 OR "referrals" >= 3 OR NOT ("company" IS NULL))',
        },
    ),
    (
        {"email": {"startsWith": "Ann_", "mode": "insensitive"}},
        {
            "postgresql": 'lower("email" COLLATE "und-x-icu") COLLATE "default" '
            "LIKE 'ann!_%' ESCAPE '!'",
            "sqlite": "lower(\"email\") GLOB 'ann_*'",
            "mysql": "CAST(lower(replace(`email`, 'İ', 'i̇')) AS BINARY) LIKE 'ann!_%' ESCAPE '!'",
            "duckdb": "starts_with(lower(replace(\"email\", 'İ', 'i̇')) COLLATE \"binary\", 'ann_')",
        },
    ),
    (
        {"company": {"contains": "50%!"}, "city": {"endsWith": "*?"}},
        {
            "postgresql": 'lower("company" COLLATE "und-x-icu") COLLATE "default" '
            "LIKE '%50!%!!%' ESCAPE '!' AND \"city\" COLLATE \"default\" LIKE '%*?' ESCAPE '!'",
            "sqlite": "instr(lower(\"company\"), '50%!') > 0 AND "
            "substr(CAST(X'FF' || \"city\" AS BLOB), -2, 2) = CAST('*?' AS BLOB)",
            "mysql": "CAST(lower(replace(`company`, 'İ', 'i̇')) AS BINARY) "
            "LIKE '%50!%!!%' ESCAPE '!' AND CAST(`city` AS BINARY) LIKE '%*?' ESCAPE '!'",
            "duckdb": "contains(lower(replace(\"company\", 'İ', 'i̇')) COLLATE \"binary\", "
            "'50%!') AND ends_with(\"city\" COLLATE \"binary\", '*?')",
        },
    ),
    (
        {"firstName": {"in": ["Ann", "O'Brien", "Ann"], "not": "Bob"}, "country": {"notIn": []}},
        {
            "postgresql": "\"firstName\" COLLATE \"default\" IN ('Ann', 'O''Brien') AND "
            'NOT ("firstName" COLLATE "default" = \'Bob\') AND TRUE',
            "sqlite": "\"firstName\" COLLATE BINARY IN ('Ann', 'O''Brien') AND "
            "NOT (\"firstName\" COLLATE BINARY = 'Bob') AND 1",
            "mysql": "CAST(`firstName` AS BINARY) IN ('Ann', 'O''Brien') AND "
            "NOT (CAST(`firstName` AS BINARY) = 'Bob') AND TRUE",
            "duckdb": "\"firstName\" COLLATE \"binary\" IN ('Ann', 'O''Brien') AND "
            'NOT ("firstName" COLLATE "binary" = \'Bob\') AND TRUE',
        },
    ),
    (
        {
            "points": {"in": [1, 2.5, 100.0, 99999999999999999999]},
            "referrals": {"lt": -(2**63) - 1},
        },
        {
            # The integers no double holds: a DOUBLE column would meet them rounded, so the
            # double they round to is answered apart (`Writer.exact_on_doubles`).
            "postgresql": '("points" IN (1, 2.5, 100, 99999999999999999999) AND NOT "points" '
            'IN (100000000000000000000)) AND ("referrals" < -9223372036854775809 AND NOT '
            '"referrals" = -9223372036854775808)',
            "sqlite": '("points" IN (1, 2.5, 100, 100000000000000000000) AND NOT "points" '
            'IN (100000000000000000000)) AND ("referrals" < -9223372036854777856 AND NOT '
            '"referrals" = -9223372036854775808)',
            "mysql": "(`points` IN (1, 2.5, 100, 99999999999999999999) AND NOT `points` "
            "IN (100000000000000000000)) AND (`referrals` < -9223372036854775809 AND NOT "
            "`referrals` = -9223372036854775808)",
            # DuckDB would compare a list of integers and floats as doubles: two lists.
            "duckdb": '(("points" IN (1, 100) OR "points" IN (99999999999999999999) OR "points" '
            'IN (2.5)) AND NOT "points" IN (100000000000000000000)) AND ("referrals" < '
            '-9223372036854775809 AND NOT "referrals" = -9223372036854775808)',
        },
    ),
    (
        {"city": {"equals": "a\\b"}, "company": {"contains": "x\x00"}},
        {
            "postgresql": '"city" COLLATE "default" = E\'a\\\\b\' AND CASE WHEN '
            'lower("company" COLLATE "und-x-icu") IS NOT NULL THEN FALSE END',
            "sqlite": "\"city\" COLLATE BINARY = 'a\\b' AND "
            "instr(lower(\"company\"), CAST(X'7800' AS TEXT)) > 0",
            "mysql": "CAST(`city` AS BINARY) = _utf8mb4 X'615C62' AND "
            "CAST(lower(replace(`company`, 'İ', 'i̇')) AS BINARY) LIKE _utf8mb4 X'25780025' "
            "ESCAPE '!'",
            "duckdb": '"city" COLLATE "binary" = \'a\\b\' AND '
            "contains(lower(replace(\"company\", 'İ', 'i̇')) COLLATE \"binary\", ('x' || chr(0)))",
        },
    ),
]


@pytest.mark.parametrize("dialect", ["postgresql", "sqlite", "mysql", "duckdb"])
@pytest.mark.parametrize(("where", "expected"), GOLDEN)
def test_to_sql_golden(where: dict[str, Any], expected: dict[str, str], dialect: str) -> None:
    assert af.parse(where).to_sql(dialect) == expected[dialect]


def test_sql_writer_covers_every_node_kind() -> None:
    assert missing_handlers(SqlWriter) == []


def test_columns_map_field_names_to_column_names() -> None:
    flt = af.parse({"createdAt": {"gte": "2025-01-01"}, "firstName": "Ann"})
    sql = flt.to_sql("postgresql", columns={"createdAt": "created_at"})
    assert sql.startswith('"created_at" >= ')
    assert sql.endswith('AND "firstName" COLLATE "default" = \'Ann\'')


@pytest.mark.parametrize(
    ("dialect", "quoted"),
    [
        ("postgresql", '"we""ird`name\'"'),
        ("sqlite", '"we""ird`name\'"'),
        ("duckdb", '"we""ird`name\'"'),
        ("mysql", "`we\"ird``name'`"),
    ],
)
def test_identifier_quoting_doubles_the_quote_character(dialect: str, quoted: str) -> None:
    flt = af.parse({"city": None})
    assert flt.to_sql(dialect, {"city": "we\"ird`name'"}) == f"{quoted} IS NULL"


@pytest.mark.parametrize("name", ["", "a\x00b"])
def test_invalid_column_names_are_refused(name: str) -> None:
    with pytest.raises(ValueError, match="invalid column name"):
        af.parse({"city": None}).to_sql("postgresql", {"city": name})


def test_unknown_dialect_names_the_known_ones() -> None:
    expected = "unknown SQL dialect 'oracle'; expected one of clickhouse, duckdb"
    with pytest.raises(ValueError, match=expected):
        af.parse({}).to_sql("oracle")


def test_dialect_aliases() -> None:
    assert get_dialect("postgres") is get_dialect("postgresql")
    assert get_dialect("mariadb") is get_dialect("mysql")
    assert set(DIALECTS) == {
        "postgresql",
        "postgres",
        "sqlite",
        "mysql",
        "mariadb",
        "duckdb",
        "spark",
        "clickhouse",
    }


@pytest.mark.parametrize(
    ("dialect", "placeholder"),
    [("postgresql", "%s"), ("mysql", "%s"), ("sqlite", "?"), ("duckdb", "?")],
)
def test_to_sql_params_uses_the_driver_placeholder(dialect: str, placeholder: str) -> None:
    flt = af.parse({"email": {"contains": "50%"}, "points": {"in": [1, 2]}})
    sql, params = flt.to_sql_params(dialect)
    assert sql.count(placeholder) == 3
    assert len(params) == 3
    if placeholder == "%s":
        # The text holds no `%` of its own that a `format` driver could misread.
        assert sql.replace("%s", "").count("%") == 0


def test_to_sql_params_driver_values_per_dialect() -> None:
    flt = af.parse(
        {
            "createdAt": {"gt": "2025-01-01T01:00:00+01:00"},
            "points": {"in": [2.5, 3.0, 2**64]},
            "isVerified": True,
            "email": {"endsWith": "_x", "contains": "Ω"},
        }
    )
    instant = datetime(2025, 1, 1, tzinfo=UTC)
    assert flt.to_sql_params("postgresql")[1] == [
        instant,
        Decimal("2.5"),
        3,
        2**64,
        True,
        "%!_x",
        "%ω%",
    ]
    assert flt.to_sql_params("sqlite")[1] == [
        "2025-01-01 00:00:00.000000",
        2.5,
        3,
        float(2**64),
        True,
        "_x",
        "ω",
    ]
    assert flt.to_sql_params("mysql")[1] == [
        instant.replace(tzinfo=None),
        2.5,
        3,
        2**64,
        True,
        "%!_x",
        "%ω%",
    ]
    assert flt.to_sql_params("duckdb")[1] == [instant, 3, 2**64, 2.5, True, "_x", "ω"]


def test_to_sql_does_not_double_percent_signs() -> None:
    found = af.parse({"company": "50%"}).to_sql("postgresql")
    assert found == '"company" COLLATE "default" = \'50%\''


def test_nested_groups_are_parenthesized_and_not_always_is() -> None:
    flt = af.parse({"OR": [{"AND": [{"points": 1}, {"points": 2}]}, {"NOT": {"points": 3}}]})
    assert flt.to_sql("sqlite") == '("points" = 1 AND "points" = 2) OR NOT ("points" = 3)'


def test_integral_floats_are_written_as_integers() -> None:
    flt = af.parse({"points": {"gte": 9007199254740992.0, "lt": 1e300}})
    sql = flt.to_sql("postgresql")
    assert sql.startswith('"points" >= 9007199254740992 AND "points" < 1000000000000000052504')
    assert "e+" not in sql


def test_duckdb_writes_integers_beyond_128_bits_as_doubles() -> None:
    assert af.parse({"points": {"lt": 2**130}}).to_sql("duckdb") == (f'"points" < {2**130}.0')


def test_every_nul_free_literal_has_no_control_characters_on_mysql() -> None:
    literal = get_dialect("mysql").text("a\nb\\c")
    assert literal == "_utf8mb4 X'610A625C63'"


@pytest.mark.parametrize(
    ("op", "literal", "expected"),
    [
        ("lt", "a\x00z", '"email" COLLATE "C" <= \'a\''),
        ("lte", "a\x00", '"email" COLLATE "C" <= \'a\''),
        ("gt", "a\x00", '"email" COLLATE "C" > \'a\''),
        ("gte", "\x00", '"email" COLLATE "C" > \'\''),
    ],
)
def test_postgresql_string_ordering_with_nul_takes_the_bound_it_means(
    op: str, literal: str, expected: str
) -> None:
    assert af.parse({"email": {op: literal}}).to_sql("postgresql") == expected


def test_spark_refuses_a_folded_ordering_only_where_its_fold_could_decide() -> None:
    from audiencefilter.backends.sql.dialects.spark import order_refusal

    assert order_refusal("zebra élan") is None
    assert order_refusal("\u0307") is not None  # between U+0264 and U+A7CB
    assert order_refusal("\u03c3") is not None  # a sigma
    with pytest.raises(af.FilterError, match="ordering"):
        af.parse({"email": {"lt": "\u03c3", "mode": "insensitive"}}).to_sql("spark")
    assert af.parse({"email": {"lt": "\u03c3"}}).to_sql("spark") == "`email` < 'σ'"
