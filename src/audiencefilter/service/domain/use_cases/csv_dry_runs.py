"""A CSV import's dry run: the whole file read and checked, nothing written.

It answers the first `PREVIEW` rows as they would be stored, every bad cell (row, column, why),
up to `MAX_PROBLEMS` listed and all counted, the rows whose e-mail an earlier row has (the
import answers them `duplicate`), and the format the file was read with beside the one its cells
suggest (`af.CsvRows.evidence`). The rows are read as the import reads them
(`csv_rows.CsvFile.read`), so a dry run says what the import will do.
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

import audiencefilter as af

from ...db.models import List
from ..contact_import import ImportRow, InvalidRow
from ..csv_rows import CsvFile

PREVIEW = 20
MAX_PROBLEMS = 10_000
MAX_TRACKED = 100_000
"""E-mails a dry run remembers to name the file's repeated ones (a few MB at most)."""


def dry_run(reader: CsvFile, lst: List) -> dict[str, Any]:
    """Every row read and checked, none written: the first rows as stored, every bad cell."""
    preview: list[dict[str, Any]] = []
    problems: list[dict[str, Any]] = []
    repeats = _Repeats()
    rows = invalid = found = 0
    for number, value in reader.values():
        rows += 1
        row = reader.read(number, value, lst)
        if isinstance(row, InvalidRow):
            invalid += 1
            found += len(row.errors)
            room = MAX_PROBLEMS - len(problems)
            problems += [{"row": number, **issue} for issue in row.errors[:room]]
            continue
        repeats.see(row)
        if len(preview) < PREVIEW:
            preview.append(_stored(row))
    proposed, reasons = reader.rows.evidence.proposal()
    return {
        "dryRun": True,
        "format": _format_view(reader.rows),
        "proposed": proposed,
        "proposedBecause": reasons,
        "columns": [
            {"column": c, "field": f}
            for c, f in zip(reader.rows.header, reader.rows.fields, strict=True)
        ],
        "rows": rows,
        "valid": rows - invalid,
        "invalid": invalid,
        "preview": preview,
        "duplicates": repeats.count,
        "duplicateRows": repeats.listed,
        "duplicatesCheckedRows": min(rows, MAX_TRACKED),
        "problems": problems,
        "problemsNotListed": found - len(problems),
    }


class _Repeats:
    """The valid rows whose e-mail an earlier valid row of the file has (the import answers
    them `duplicate`), among the first `MAX_TRACKED` rows: a dry run's memory stays bounded
    however long the file."""

    def __init__(self) -> None:
        self.first: dict[str, int] = {}
        self.count = 0
        self.listed: list[dict[str, Any]] = []

    def see(self, row: ImportRow) -> None:
        earlier = self.first.get(row.key)
        if earlier is None:
            if len(self.first) < MAX_TRACKED:
                self.first[row.key] = row.number
            return
        self.count += 1
        if len(self.listed) < MAX_PROBLEMS:
            self.listed.append(
                {"row": row.number, "sameAsRow": earlier, "email": row.fields["email"]}
            )


def _format_view(rows: af.CsvRows) -> dict[str, str]:
    """The format the file was read with, as the request's parameters spell it."""
    delimiter = "tab" if rows.delimiter == "\t" else rows.delimiter
    return {
        "dateOrder": rows.format.date_order,
        "decimal": rows.format.decimal,
        "delimiter": delimiter,
    }


def _stored(row: ImportRow) -> dict[str, Any]:
    """A valid row as it would be stored: its fields (custom fields in `data`) and actions."""
    fields = {name: _plain(value) for name, value in row.fields.items()}
    actions = [
        {"name": a.name, "increase": a.increase, "createdAt": _plain(a.createdAt)}
        for a in row.actions
    ]
    return {"row": row.number, "contact": fields | ({"actions": actions} if actions else {})}


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, date | datetime) else value
