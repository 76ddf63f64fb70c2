"""The words of the text syntax, written once: how each operator is spelled when read and
printed, the null tests, and the period words after `within`.

The reader maps spellings to operators with these tables, the writer prints with them, and the
error messages list them, so an operator added here is read, printed and offered in hints
alike. The grammar's `OPERATOR`, `NULL_TEST` and period terminals must spell the same words:
`tests/test_text_errors.py` checks each terminal against these tables.
"""

from __future__ import annotations

from ..language.fields import ListOp, Op

#: How each operator is written (and printed); `==` and `!=` are read too.
SPELLINGS: dict[Op, str] = {
    Op.EQUALS: "=",
    Op.GT: ">",
    Op.GTE: ">=",
    Op.LT: "<",
    Op.LTE: "<=",
    Op.CONTAINS: "contains",
    Op.STARTS_WITH: "starts with",
    Op.ENDS_WITH: "ends with",
    Op.IN: "in",
    Op.NOT_IN: "not in",
    Op.WITHIN: "within",
    Op.ANNIVERSARY: "anniversary within",
}
#: How a negation with an operator of its own is written (and printed): `email != "x"`,
#: where any other comparison's negation is `not ...`.
NEGATED_SPELLINGS: dict[Op, str] = {Op.EQUALS: "!="}
#: Other spellings read as an operator, never printed: `==` for `=`.
ALIASES: dict[str, Op] = {"==": Op.EQUALS}
#: The grammar's terminals that hold an operator and its period in one token
#: (`within this month`), and the operator each is.
PERIOD_TERMINALS: dict[str, Op] = {"PERIOD": Op.WITHIN, "ANNIVERSARY": Op.ANNIVERSARY}
#: How each list operator is written; `equals` is `=` (and `!=` its negation), as for scalars.
LIST_SPELLINGS: dict[ListOp, str] = {
    ListOp.HAS: "has",
    ListOp.HAS_SOME: "has some",
    ListOp.HAS_EVERY: "has every",
    ListOp.IS_EMPTY: "is empty",
    ListOp.EQUALS: "=",
}
#: How each operator on a JSON array at a data path is written; `array_contains` of one value
#: is `has`, of a list `has every`.
ARRAY_SPELLINGS: dict[ListOp, str] = {
    ListOp.ARRAY_CONTAINS: "has every",
    ListOp.ARRAY_STARTS_WITH: "array starts with",
    ListOp.ARRAY_ENDS_WITH: "array ends with",
}
#: The tests written after a field with no value: `email is null`, `tags is not empty`.
NULL_TESTS = ("is null", "is not null", "is blank", "is not blank", "is empty", "is not empty")
#: What follows `within` (and `anniversary within`): `today`, `this week`, `last 7 days`.
PERIOD_STARTS = ("today", "this", "last", "next")
PERIOD_UNITS = ("day", "week", "month", "year")


def every_operator() -> tuple[str, ...]:
    """Every operator spelling, for "expected an operator (...)": none left out."""
    words = ["=", "!="]
    for spelling in (
        *SPELLINGS.values(),
        *LIST_SPELLINGS.values(),
        *ARRAY_SPELLINGS.values(),
    ):
        if spelling not in words and spelling not in NULL_TESTS:
            words.append(spelling)
    return tuple(words)
