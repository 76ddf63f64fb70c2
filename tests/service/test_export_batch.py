"""The CSV export's cells converted a batch at a time (`csv_batch`) are the cells written one
at a time (`csv_cells`), byte for byte: text that opens like a formula, empty cells, flags,
numbers, times, `data` empty, stored with spaces, or holding what orjson refuses, and the draw
columns of an audience running an experiment."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from typing import Any

from audiencefilter.service.api.routes.exports import csv_batch, csv_cells
from audiencefilter.service.domain.use_cases.exports import DRAW_FIELDS, FIELDS

TEXTS = ["plain", "=HYPERLINK(1)", "+1+cmd", "-5", "@SUM", "\tx", "\rx", "", None, "'quoted"]
DATA = ["{}", "", None, '{"a": 1, "b": [1, 2]}', '{"big": 123456789012345678901234567890}']
DATA += ['{"nan": NaN}', "[1, 2]", '{"x":"=1"}']


def _rows() -> list[dict[str, Any]]:
    rows = []
    for index in range(60):
        row: dict[str, Any] = {}
        for offset, field in enumerate(FIELDS + DRAW_FIELDS):
            text = TEXTS[(index + offset) % len(TEXTS)]
            row[field] = text
        row.update(
            points=index - 3,
            referrals=index,
            isVerified=index % 2 == 0,
            unsubscribed=None if index % 5 == 0 else index % 3 == 0,
            isGDPR=False,
            holdout=None if index % 4 == 0 else index % 2 == 1,
            createdAt=datetime(2026, 1, 1, 12, 0, index % 60, index * 1000, tzinfo=UTC),
            data=DATA[index % len(DATA)],
        )
        rows.append(row)
    return rows


def _written(lines: list[list[Any]]) -> str:
    buffer = io.StringIO()
    csv.writer(buffer, lineterminator="\n").writerows(lines)
    return buffer.getvalue()


def test_a_batch_writes_the_cells_one_row_at_a_time_writes() -> None:
    for fields in (FIELDS, FIELDS + DRAW_FIELDS):
        rows = _rows()
        one_by_one = []
        for row in rows:
            cells = csv_cells({field: row[field] for field in fields}, ())
            one_by_one.append([cells[field] for field in fields])
        batch = csv_batch([{field: row[field] for field in fields} for row in rows], fields)
        assert _written(batch) == _written(one_by_one)
