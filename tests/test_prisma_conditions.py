"""The conditions added for Prisma completeness and segment builders, where conformance data
cannot reach: explanations, text layout and limits, simplification and messages."""

from __future__ import annotations

import json
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.language.fields import Op
from audiencefilter.language.nodes import TRUE, Aggregated, FieldComparison, Not
from audiencefilter.language.relations import Aggregate
from audiencefilter.text import write as text_write
from audiencefilter.text.limits import canonical_size
from audiencefilter.where import write as where_write


def test_blank_explains_as_one_condition_with_the_value_seen() -> None:
    flt = af.parse_text("company is not blank and data.nick is blank")
    lines = str(flt.explain({"company": "", "data": {"nick": 0}})).splitlines()
    assert lines[1].split() == [
        "✗",
        "FALSE",
        "company",
        "is",
        "not",
        "blank",
        "(company",
        "=",
        '"")',
    ]
    assert lines[2].split()[:5] == ["✗", "FALSE", "data.nick", "is", "blank"]


def test_blank_reads_the_same_from_both_syntaxes_and_writes_back() -> None:
    text = af.parse_text('company is not blank and company starts with "A"')
    assert text == af.parse({"company": {"blank": False, "startsWith": "A"}})
    assert text.to_json() == '{"company":{"blank":false,"startsWith":"A"}}'
    assert af.parse_text(text.to_text()) == text


def test_blank_and_not_blank_simplify_to_false() -> None:
    flt = af.parse({"AND": [{"company": {"blank": True}}, {"company": {"blank": False}}]})
    assert flt.simplify().to_text() == "false"


@pytest.mark.parametrize(
    ("where", "message"),
    [
        ({"points": {"blank": True}}, 'blank applies to string fields and JSON paths; "points"'),
        ({"company": {"blank": 1}}, "blank takes true or false, found the number 1"),
    ],
)
def test_blank_errors_say_where_it_applies(where: object, message: str) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where)
    assert caught.value.errors[0].message.startswith(message)
    assert caught.value.errors[0].suggestion


def test_text_blank_on_a_number_is_located() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse_text("points is blank")
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (1, 8)
    assert issue.suggestion is not None and "points is null" in issue.suggestion


def test_blank_measures_as_its_canonical_json() -> None:
    # {"company": {"blank": false}}: a field key and an operator key, no level opened
    not_blank = af.parse({"company": {"blank": False}}).root
    assert (canonical_size(not_blank, 32).depth, canonical_size(not_blank, 32).nodes) == (0, 2)
    blank = af.parse({"data": {"path": ["a"], "blank": True}}).root
    assert canonical_size(blank, 32).depth == 0


def test_polars_compares_an_integer_column_with_a_float_column_exactly() -> None:
    import polars as pl

    frame = pl.DataFrame(
        {
            "id": [1, 2, 3, 4],
            "points": [2**53 + 1, 2**53, 3, None],
            "referrals": [float(2**53), float(2**53), float("nan"), 1.0],
        }
    )
    for text, expected in [
        ("points > referrals", [1]),
        ("referrals < points", [1]),
        ("points = referrals", [2]),
        ("not (points = referrals)", [1]),  # NaN is a missing number: UNKNOWN
    ]:
        flt = af.parse_text(text)
        rows = frame.to_dicts()
        assert flt.select_frame(frame)["id"].to_list() == expected, text
        assert [r["id"] for r in rows if flt.matches(r)] == expected, text


def test_field_reference_refusals_name_the_fields() -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse_text("points > email")
    issue = caught.value.errors[0]
    assert (issue.line, issue.column) == (1, 10)
    assert issue.suggestion == "compare with a number field: referrals"
    declared = af.CONTACT.with_fields(plan=("number", ("data", "plan")))
    with pytest.raises(af.FilterError, match="read from inside JSON"):
        af.parse({"points": {"gt": {"_ref": "plan"}}}, declared)


@pytest.mark.parametrize("op", ["equals", "not", "gt", "gte", "lt", "lte"])
@pytest.mark.parametrize(
    ("aggregate", "other"),
    [
        ({"count": "OP"}, "points"),
        ({"count": "OP", "where": {"name": "share"}}, "points"),
        ({"sum": {"increase": "OP"}}, "points"),
        ({"min": {"increase": "OP"}}, "increase"),
        ({"max": {"createdAt": "OP"}}, "createdAt"),
        ({"max": {"createdAt": "OP"}, "where": {"increase": {"gt": {"_ref": "increase"}}}}, "id"),
    ],
)
def test_an_aggregate_is_never_compared_with_a_field_reference(
    aggregate: dict[str, Any], other: str, op: str
) -> None:
    """An aggregate's value is no field of a record: a reference there (to the contact's field
    or the related row's) is refused at its path, where it used to be read and then loop in
    the writers."""
    text = json.dumps({"actions": aggregate}).replace('"OP"', json.dumps({op: {"_ref": other}}))
    with pytest.raises(af.FilterError) as caught:
        af.parse(text)
    issue = caught.value.errors[0]
    assert issue.path.endswith(f".{op}._ref")
    assert "cannot be compared with" in issue.message and f'"{other}"' in issue.message


def test_writers_refuse_an_aggregate_tested_by_a_reference_built_by_hand() -> None:
    built = Aggregated(
        "actions", Aggregate.COUNT, "count", FieldComparison("count", Op.GT, "points"), TRUE
    )
    for node in (built, Not(built)):
        for write in (where_write.to_json, text_write.to_text):
            with pytest.raises(ValueError, match="compares its value with a literal"):
                write(node)
