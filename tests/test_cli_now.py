"""`--now` on every command that evaluates or writes something that depends on the time.

`eval --now T` took anniversaries at the machine's clock: it resolved the filter at T, and an
anniversary stays relative there. `explain` and `sql` took T already; each is checked here on
anniversaries, calendar starts, periods and durations of dates and date-times (a column, a
date declared inside JSON, an action's date-time), at a T far from any day the tests run on.
`check`, `fmt` and `convert` evaluate nothing: relative values are written as relative.
"""

from __future__ import annotations

import json
import sqlite3
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.cli import EXIT_OK, main

NOW = "1990-06-15T12:00:00Z"
_T = datetime.fromisoformat(NOW)
SCHEMA = {
    "birthday": "date",
    "createdAt": "datetime",
    "data": "json",
    "jday": ["date", ["data", "j"]],
}
CONSTRUCTS = (
    "{} anniversary within this day",
    '{} anniversary within this week in "Pacific/Kiritimati"',
    "{} >= start of this month",
    "{} >= 3 days ago",
    "{} within last 7 days",
)
FIELDS = ("birthday", "createdAt", "jday")


def _contacts() -> list[dict[str, Any]]:
    """Contacts on T's own day, around it and a year before, and on days far from T (one of
    which the machine's clock may fall on: the answer at T differs from theirs)."""
    days = [_T.date() + timedelta(days=d) for d in (0, -1, -5, 1, -365, 180, 182)]
    days += [date(1970, 6, 15), date(1970, 12, 15)]
    return [
        {
            "id": f"c{index}",
            "birthday": day.isoformat(),
            "createdAt": f"{day.isoformat()}T11:00:00Z",
            "data": {"j": day.isoformat()},
            "actions": [{"id": index, "createdAt": f"{day.isoformat()}T11:00:00Z"}],
        }
        for index, day in enumerate(days)
    ]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("now")
    contacts, schema = folder / "contacts.jsonl", folder / "schema.json"
    contacts.write_text("".join(json.dumps(c) + "\n" for c in _contacts()), encoding="utf-8")
    schema.write_text(json.dumps(SCHEMA), encoding="utf-8")
    return contacts, schema


def _cases() -> list[tuple[str, bool]]:
    """(filter, on the contact schema of --schema); an action's date-time on the default one."""
    cases = [(c.format(f), True) for c in CONSTRUCTS for f in FIELDS]
    return cases + [(f"actions some ({c.format('createdAt')})", False) for c in CONSTRUCTS]


def _schema_args(schema: Path, custom: bool) -> list[str]:
    return ["--schema", str(schema)] if custom else []


def _expected(text: str, custom: bool) -> list[str]:
    schema = af.Schema.from_mapping(SCHEMA) if custom else af.CONTACT
    return [c["id"] for c in af.parse_text(text, schema).select(_contacts(), now=_T)]


@pytest.mark.parametrize(("text", "custom"), _cases())
def test_eval_takes_every_relative_value_at_now(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path], text: str, custom: bool
) -> None:
    contacts, schema = files
    argv = ["eval", *_schema_args(schema, custom), text, str(contacts), "--now", NOW]
    status, out, _ = run(capsys, *argv)
    assert status == EXIT_OK
    assert out.split() == _expected(text, custom)


@pytest.mark.parametrize(("text", "custom"), _cases())
def test_explain_takes_every_relative_value_at_now(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path], text: str, custom: bool
) -> None:
    _, schema = files
    expected = _expected(text, custom)
    for contact in _contacts():
        record = json.dumps(contact)
        argv = ["explain", *_schema_args(schema, custom), text, "--record", record, "--now", NOW]
        status, out, _ = run(capsys, *argv)
        assert status == EXIT_OK
        verdict = "in" if contact["id"] in expected else "not in"
        assert out.rstrip().endswith(f"the record is {verdict} the audience"), contact


@pytest.mark.parametrize("text", [c.format(f) for c in CONSTRUCTS for f in FIELDS])
def test_sql_takes_every_relative_value_at_now(
    capsys: pytest.CaptureFixture[str], files: tuple[Path, Path], text: str
) -> None:
    """The SQL printed at --now selects in SQLite what the library selects at T."""
    _, schema = files
    status, out, err = run(
        capsys, "sql", "--dialect", "sqlite", "--schema", str(schema), text, "--now", NOW
    )
    assert status == EXIT_OK and "at --now" in err
    connection = sqlite3.connect(":memory:")
    af.register_sqlite_functions(connection)
    connection.execute(
        'CREATE TABLE contacts (id TEXT, birthday TEXT, "createdAt" TEXT, data TEXT)'
    )
    for c in _contacts():
        row = (c["id"], c["birthday"], c["createdAt"], json.dumps(c["data"]))
        connection.execute("INSERT INTO contacts VALUES (?, ?, ?, ?)", row)
    found = [
        r[0] for r in connection.execute(f"SELECT id FROM contacts WHERE {out} ORDER BY rowid")
    ]
    assert found == _expected(text, True)


@pytest.mark.parametrize(
    "command", [["check"], ["fmt"], ["convert", "--from", "text", "--to", "json"]]
)
def test_commands_that_evaluate_nothing_keep_relative_values(
    capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    status, out, _ = run(capsys, *command, "createdAt anniversary within this day")
    assert status == EXIT_OK
    assert "1990" not in out and str(datetime.now().year) not in out
