"""Writing the text syntax: canonical spellings, and exactly the parentheses the tree needs."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from audiencefilter import (
    FALSE,
    TRUE,
    And,
    Comparison,
    IsNull,
    Node,
    Not,
    Op,
    Or,
    Schema,
    parse,
    parse_text,
    to_text,
)
from audiencefilter.language.visitor import missing_handlers
from audiencefilter.text.write import _Printer

A = Comparison("points", Op.GT, 1)
B = Comparison("points", Op.LT, 9)
C = Comparison("city", Op.EQUALS, "Lyon")

# (AST, its canonical text); every one must also read back to itself.
CASES: list[tuple[Node, str]] = [
    (A, "points > 1"),
    (And((A, B, C)), 'points > 1 and points < 9 and city = "Lyon"'),
    (Or((A, And((B, C)))), 'points > 1 or points < 9 and city = "Lyon"'),
    (And((A, Or((B, C)))), 'points > 1 and (points < 9 or city = "Lyon")'),
    (And((And((A, B)), C)), '(points > 1 and points < 9) and city = "Lyon"'),
    (Or((A, Or((B, C)))), 'points > 1 or (points < 9 or city = "Lyon")'),
    (Not(A), "not (points > 1)"),
    (Not(Not(A)), "not not (points > 1)"),
    (Not(Not(Not(A))), "not not not (points > 1)"),
    (Not(C), 'city != "Lyon"'),
    (Not(Not(C)), 'not (city != "Lyon")'),
    (Not(IsNull("city")), "city is not null"),
    (Not(Not(IsNull("city"))), "not (city is not null)"),
    (IsNull("city"), "city is null"),
    (Not(Or((A, B))), "not (points > 1 or points < 9)"),
    (Not(And((A, B))), "not (points > 1 and points < 9)"),
    (Or((Not(A), Not(C))), 'not (points > 1) or city != "Lyon"'),
    (TRUE, "true"),
    (FALSE, "false"),
    (Not(TRUE), "not true"),
    (Not(Not(FALSE)), "not not false"),
    (And((TRUE, FALSE)), "true and false"),
    (Or((FALSE, And((TRUE, A)))), "false or true and points > 1"),
    (Comparison("country", Op.IN, ()), "country in []"),
    (Comparison("country", Op.NOT_IN, ("FR", "DE")), 'country not in ["FR", "DE"]'),
    (Not(Comparison("country", Op.NOT_IN, ("FR",))), 'not (country not in ["FR"])'),
    (Comparison("email", Op.CONTAINS, "GMAIL", True), 'email contains "GMAIL"'),
    (Comparison("email", Op.STARTS_WITH, "é", True), 'email starts with "é" ignoring case'),
    (Comparison("email", Op.ENDS_WITH, "@x.io"), 'email ends with "@x.io"'),
    (Not(Comparison("email", Op.EQUALS, "a", True)), 'email != "a" ignoring case'),
    (Comparison("points", Op.EQUALS, 2**64 + 1), "points = 18446744073709551617"),
    (Comparison("points", Op.GTE, 0.1), "points >= 0.1"),
    (Comparison("points", Op.GTE, 1e16), "points >= 1e+16"),
    (Comparison("points", Op.GTE, -0.0), "points >= -0.0"),
    (Comparison("isVerified", Op.EQUALS, True), "isVerified = true"),
    (
        Comparison("createdAt", Op.GTE, datetime(2025, 1, 31, 9, 30, tzinfo=UTC)),
        "createdAt >= 2025-01-31T09:30:00Z",
    ),
    (
        Comparison("createdAt", Op.LT, datetime(2025, 1, 31, 9, 30, 0, 5, tzinfo=UTC)),
        "createdAt < 2025-01-31T09:30:00.000005Z",
    ),
    (Comparison("city", Op.EQUALS, 'say "hi"\\'), r'city = "say \"hi\"\\"'),
    (Comparison("city", Op.EQUALS, "a\nb\tc\x00\x7f"), r'city = "a\nb\tc\u0000\u007f"'),
    (Comparison("city", Op.EQUALS, "zero\u200bwidth\u2028"), r'city = "zero\u200bwidth\u2028"'),
    (Comparison("city", Op.EQUALS, "\U000e0001 tag"), r'city = "\udb40\udc01 tag"'),
    (Comparison("city", Op.EQUALS, "😀 日本 é"), 'city = "😀 日本 é"'),
]


@pytest.mark.parametrize(("node", "text"), CASES, ids=[t for _, t in CASES])
def test_canonical_text_and_round_trip(node: Node, text: str) -> None:
    assert to_text(node) == text
    assert parse_text(text).root == node


def test_field_names_are_quoted_only_when_needed() -> None:
    schema = Schema.of(**{"in": "string", "first name": "string", "a`b": "string", "é": "string"})
    texts = {
        "in": '`in` = "x"',
        "first name": '`first name` = "x"',
        "a`b": r'`a\`b` = "x"',
        "é": 'é = "x"',
    }
    for name, text in texts.items():
        node = Comparison(name, Op.EQUALS, "x")
        assert to_text(node) == text
        assert parse_text(text, schema).root == node


def test_the_json_examples_of_the_semantics_print_readably() -> None:
    flt = parse(
        {
            "points": {"gte": 100},
            "OR": [{"country": {"in": ["FR", "DE"]}}, {"email": {"endsWith": "@acme.com"}}],
            "NOT": [{"unsubscribed": True}, {"company": None}],
        }
    )
    assert flt.to_text() == (
        'points >= 100 and (country in ["FR", "DE"] or email ends with "@acme.com") '
        "and not (unsubscribed = true or company is null)"
    )


def test_printer_handles_every_node_kind() -> None:
    assert missing_handlers(_Printer) == []
