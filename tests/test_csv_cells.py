"""`af.read_csv`: the cell rules every CSV reader shares, the column mapping, every bad cell."""

from __future__ import annotations

import io
from datetime import UTC, date, datetime

import pytest

import audiencefilter as af

SCHEMA = af.CONTACT.with_relations()
CUSTOM = af.Schema.of("list", email="string", birthday="date", tags="string[]", vip="boolean")


def _rows(text: str, schema: af.Schema = SCHEMA, **columns: str | None) -> list[af.CsvRow]:
    return list(af.read_csv(io.StringIO(text), schema, columns=columns or None))


def test_cells_are_read_by_their_fields_types() -> None:
    text = (
        "email,points,isVerified,createdAt,data,actions,plan\n"
        'ada@example.com,12,1,2024-05-01T09:30:00+02:00,"{""a"": 1}",'
        '"[{""name"": ""share"", ""increase"": 5}]",pro\n'
    )
    [row] = _rows(text)
    assert row.errors == ()
    assert row.record == {
        "email": "ada@example.com",
        "points": 12,
        "isVerified": True,
        "createdAt": datetime(2024, 5, 1, 7, 30, tzinfo=UTC),
        "data": {"a": 1},
        "actions": [{"name": "share", "increase": 5}],
        "plan": "pro",  # outside the schema: text
    }


def test_an_empty_cell_is_null_and_a_declared_list_is_json() -> None:
    [row] = _rows('email,birthday,tags,vip\nada@example.com,,"[""fr""]",false\n', CUSTOM)
    assert row.record == {
        "email": "ada@example.com",
        "birthday": None,
        "tags": ["fr"],
        "vip": False,
    }


def test_every_bad_cell_of_a_row_is_named_with_its_column() -> None:
    text = "email,birthday,tags,vip\nada@example.com,1990-13-01,fr,maybe\nb@x.io,1990-02-03,[],1\n"
    first, second = _rows(text, CUSTOM)
    assert [error.column for error in first.errors] == ["birthday", "tags", "vip"]
    assert "YYYY-MM-DD" in first.errors[0].reason
    assert '"maybe"' in first.errors[2].reason
    assert second.errors == () and second.record["birthday"] == date(1990, 2, 3)


def test_columns_rename_headers_and_leave_columns_out() -> None:
    text = "E-mail address,Geburtstag,Notes\nada@example.com,1990-02-03,call her\n"
    rows = af.read_csv(
        io.StringIO(text),
        CUSTOM,
        columns={"E-mail address": "email", "Geburtstag": "birthday", "Notes": None},
    )
    assert rows.header == ["E-mail address", "Geburtstag", "Notes"]
    assert rows.fields == ["email", "birthday", None]
    [row] = list(rows)
    assert row.record == {"email": "ada@example.com", "birthday": date(1990, 2, 3)}


def test_a_bad_cell_of_a_renamed_column_is_named_as_the_file_names_it() -> None:
    [row] = _rows("Geburtstag\nsoon\n", CUSTOM, Geburtstag="birthday")
    assert [error.column for error in row.errors] == ["Geburtstag"]


def test_rows_count_from_one_skip_blank_lines_and_say_where_they_end() -> None:
    rows = _rows('email,points\n\na@x.io,1\nb@x.io,"two\n"\nc@x.io\n')
    assert [(row.number, row.line) for row in rows] == [(1, 3), (2, 5), (3, 6)]
    assert rows[1].errors[0].column == "points"
    assert rows[2].errors == (af.CellError("", "expected 2 cells as in the header, found 1"),)


def test_json_is_refused_as_csv() -> None:
    with pytest.raises(af.CsvError, match="this is JSON, not CSV"):
        af.read_csv(io.StringIO('[{"email": "a@x.io"}]'), SCHEMA)


def test_an_empty_file_has_no_header_and_no_rows() -> None:
    rows = af.read_csv(io.StringIO(""), SCHEMA)
    assert rows.header == [] and list(rows) == []


@pytest.mark.parametrize(
    ("cell", "kind", "value"),
    [
        ("12", af.FieldType.NUMBER, 12),
        ("1.5", af.FieldType.NUMBER, 1.5),
        ("TRUE", af.FieldType.BOOLEAN, True),
    ],
)
def test_one_cell(cell: str, kind: af.FieldType, value: object) -> None:
    assert af.csv_cell(cell, kind) == value


def test_a_number_cell_that_is_no_number() -> None:
    with pytest.raises(ValueError, match='expected a number, found "12kg"'):
        af.csv_cell("12kg", af.FieldType.NUMBER)


@pytest.mark.parametrize("kind", [af.FieldType.JSON, af.FieldType.STRING_LIST])
@pytest.mark.parametrize(
    "cell",
    ["[" * 5000 + "]" * 5000, '{"a":' * 5000 + "1" + "}" * 5000, "[" * 201 + "]" * 201],
    ids=["arrays", "objects", "one past the bound"],
)
def test_a_json_cell_nested_past_the_bound_is_the_cells_error(
    cell: str, kind: af.FieldType
) -> None:
    with pytest.raises(ValueError, match="nested at most 200 levels deep"):
        af.csv_cell(cell, kind)


def test_brackets_inside_json_strings_are_text_not_nesting() -> None:
    cell = '["' + "[" * 5000 + '", "\\"' + "{" * 300 + '"]'
    assert af.csv_cell(cell, af.FieldType.STRING_LIST) == ["[" * 5000, '"' + "{" * 300]
    deepest = af.csv_cell("[" * 200 + "]" * 200, af.FieldType.JSON)
    for _ in range(199):
        [deepest] = deepest
    assert deepest == []


def test_written_numbers_keep_their_text_and_compare_as_numbers() -> None:
    text = "email,points\na@x.io,1000.00\nb@x.io,7\n"
    schema = af.CONTACT.with_fields(score="number")
    fmt = af.CsvFormat("ISO", ",", ";")
    [plain, _] = [row.record for row in af.read_csv(io.StringIO(text), schema)]
    assert plain["points"] == 1000.0 and type(plain["points"]) is float  # by default, as before
    rows = af.read_csv(io.StringIO(text), schema, written=True)
    records = [row.record for row in rows]
    assert isinstance(records[0]["points"], af.WrittenNumber)
    assert (records[0]["points"].text, records[0]["points"], records[1]["points"]) == (
        "1000.00",
        1000,
        7,
    )
    assert type(records[1]["points"]) is int
    flt = af.parse_text("points >= 1000 and points < 1000.001", schema=schema)
    assert [flt.matches(record) for record in records] == [True, False]
    semicolons = io.StringIO("email;score\na@x.io;1 234,50\n")
    [comma] = af.read_csv(semicolons, schema, format=fmt, written=True)
    assert comma.record["score"].text == "1234.50" and comma.record["score"] == 1234.5


def test_a_written_number_survives_a_copy() -> None:
    import copy
    import pickle

    number = af.WrittenNumber("12.50")
    for again in (copy.deepcopy(number), pickle.loads(pickle.dumps(number))):
        assert (type(again), again.text, again) == (af.WrittenNumber, "12.50", 12.5)
