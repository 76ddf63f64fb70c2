"""A European CSV reads as it was written: dates day first, decimal commas, `;` or tabs.

Replay of a finding: every row of a file saved by French or German Excel (`26/11/2026`,
`1234,56`, cells split by `;`) was refused, and nothing could say how the file was written.
Here the same contacts are written in every format a generator spans (date order and
separator, decimal mark and digit grouping, cell delimiter) and read back with the format
stated: the values are those of the ISO file. A cell no stated format reads names each of its
readings, and the evidence of a file's cells proposes its format without choosing an order the
cells leave open.
"""

from __future__ import annotations

import io
from datetime import UTC, date, datetime
from decimal import Decimal

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.csv_format import comma_decimal

SCHEMA = af.CONTACT.with_fields(birthday="date", lifetimeValue="number", signedUp="datetime")


def _read(text: str, fmt: af.CsvFormat | None = None) -> list[af.CsvRow]:
    return list(af.read_csv(io.StringIO(text), SCHEMA, format=fmt))


def _write_date(day: date, order: str, separator: str) -> str:
    parts = (day.day, day.month) if order == "DMY" else (day.month, day.day)
    return separator.join([f"{parts[0]:02d}", f"{parts[1]:02d}", f"{day.year:04d}"])


def _write_number(value: Decimal, grouping: str) -> str:
    sign = "-" if value < 0 else ""
    whole, _, fraction = f"{abs(value):.2f}".partition(".")
    if grouping:
        groups = []
        while len(whole) > 3:
            whole, groups = whole[:-3], [whole[-3:], *groups]
        whole = grouping.join([whole, *groups])
    return f"{sign}{whole},{fraction}"


@given(
    day=st.dates(min_value=date(1000, 1, 1), max_value=date(9999, 12, 31)),
    moment=st.datetimes(min_value=datetime(1900, 1, 1), max_value=datetime(2200, 1, 1)),
    amount=st.decimals(min_value=-(10**9), max_value=10**9, places=2),
    order=st.sampled_from(["DMY", "MDY"]),
    separator=st.sampled_from(["/", ".", "-"]),
    grouping=st.sampled_from(["", " ", "\u00a0", "\u202f", "."]),
    delimiter=st.sampled_from([";", "\t", "|", ","]),
    stated=st.booleans(),
)
def test_a_file_written_in_any_format_reads_as_its_iso_twin(
    day: date,
    moment: datetime,
    amount: Decimal,
    order: str,
    separator: str,
    grouping: str,
    delimiter: str,
    stated: bool,
) -> None:
    moment = moment.replace(microsecond=0)
    number = _write_number(amount, grouping)
    when = f"{_write_date(moment.date(), order, separator)} {moment:%H:%M:%S}"
    cells = ["ann@example.com", _write_date(day, order, separator), number, when]
    if delimiter == ",":
        cells = [f'"{cell}"' for cell in cells]
    text = delimiter.join(["email", "birthday", "lifetimeValue", "signedUp"]) + "\n"
    text += delimiter.join(cells) + "\n"
    fmt = af.CsvFormat(order, ",", delimiter if stated or delimiter == "," else None)  # type: ignore[arg-type]
    (row,) = _read(text, fmt)
    assert row.errors == ()
    assert row.record["birthday"] == day
    assert row.record["lifetimeValue"] == float(amount) or row.record["lifetimeValue"] == int(
        amount
    )
    assert row.record["signedUp"] == moment.replace(tzinfo=UTC)


def test_the_delimiter_is_read_from_the_header_when_unstated() -> None:
    rows = af.read_csv(io.StringIO("email;firstName\nann@example.com;Ann\n"), af.CONTACT)
    assert rows.delimiter == ";" and [r.record for r in rows] == [
        {"email": "ann@example.com", "firstName": "Ann"}
    ]


@pytest.mark.parametrize(
    ("cell", "readings"),
    [
        ("01/02/2026", ["1 February 2026 with dateOrder=DMY", "2 January 2026 with dateOrder=MDY"]),
        ("26/11/2026", ["26 November 2026 with dateOrder=DMY"]),
        ("11.26.2026", ["26 November 2026 with dateOrder=MDY"]),
    ],
)
def test_a_date_under_no_stated_order_names_every_reading(cell: str, readings: list[str]) -> None:
    (row,) = _read(f"email,birthday\nann@example.com,{cell}\n")
    (error,) = row.errors
    assert error.column == "birthday"
    assert all(reading in error.reason for reading in readings), error.reason
    assert "dateOrder" in error.reason


def test_a_date_the_calendar_lacks_is_named() -> None:
    (row,) = _read("email,birthday\nann@example.com,2026-02-31\n")
    assert "there is no 31 February 2026" in row.errors[0].reason
    (row,) = _read("email,birthday\nann@example.com,31/02/2026\n", af.CsvFormat("DMY"))
    assert "there is no 31 February 2026" in row.errors[0].reason


def test_a_decimal_comma_under_the_default_hints_the_option() -> None:
    (row,) = _read('email,lifetimeValue\nann@example.com,"1000,5"\n')
    assert 'decimal=","' in row.errors[0].reason and "1000.5" in row.errors[0].reason


def test_a_decimal_point_under_a_stated_comma_is_refused() -> None:
    (row,) = _read("email;lifetimeValue\nann@example.com;1234.56\n", af.CsvFormat(decimal=","))
    assert "decimal comma" in row.errors[0].reason


@pytest.mark.parametrize("text", ["1,2,3", "1 23,4", "12.34,5", ",5", "1..234,5"])
def test_what_is_no_comma_decimal(text: str) -> None:
    assert comma_decimal(text) is None


def test_the_evidence_proposes_day_first_and_a_decimal_comma() -> None:
    text = "email;birthday;lifetimeValue\na@x.io;01/02/1990;12,5\nb@x.io;26/11/1990;3\n"
    rows = af.read_csv(io.StringIO(text), SCHEMA)
    list(rows)
    options, reasons = rows.evidence.proposal()
    assert options == {"dateOrder": "DMY", "decimal": ","}
    assert any("DD/MM/YYYY" in reason and "26/11/1990" in reason for reason in reasons)


def test_the_evidence_leaves_an_open_order_open() -> None:
    rows = af.read_csv(io.StringIO("email,birthday\na@x.io,01/02/1990\n"), SCHEMA)
    list(rows)
    options, reasons = rows.evidence.proposal()
    assert options == {} and "state dateOrder" in reasons[0]


def test_a_format_states_only_known_conventions() -> None:
    with pytest.raises(ValueError, match="dateOrder"):
        af.CsvFormat("YDM")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="delimiter"):
        af.CsvFormat(delimiter=":")
