"""The check, fmt, sql and explain commands, through `main` and the real entry points."""

from __future__ import annotations

import importlib.util
import io
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

import audiencefilter
from audiencefilter.cli import EXIT_INVALID, EXIT_OK, EXIT_USAGE, main

TEXT = 'points >= 100 and (country in ["FR", "DE"] or email ends with "@acme.com")'
JSON = (
    '{"points":{"gte":100},"OR":[{"country":{"in":["FR","DE"]}},'
    '{"email":{"endsWith":"@acme.com"}}]}'
)
HAS_SQL = importlib.util.find_spec("audiencefilter.backends.sql.text") is not None


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    status = main(list(argv))
    captured = capsys.readouterr()
    return status, captured.out, captured.err


def feed_stdin(monkeypatch: pytest.MonkeyPatch, text: str) -> None:
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(text.encode())))


def test_check_accepts_both_syntaxes(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "check", TEXT) == (EXIT_OK, "ok\n", "")
    assert run(capsys, "check", JSON) == (EXIT_OK, "ok\n", "")


def test_check_reports_text_errors_with_a_caret(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "check", 'points >= 100 and emial contains "x"')
    assert status == EXIT_INVALID and out == ""
    assert err == (
        'error at line 1, column 19: unknown field "emial"\n'
        '  points >= 100 and emial contains "x"\n'
        "                    ^^^^^\n"
        '  hint: did you mean "email"?\n'
    )


def test_check_reports_json_errors_with_a_caret(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "check", '{"points": {"gte": "x"}}')
    assert status == EXIT_INVALID
    assert err.splitlines() == [
        'error at points.gte (line 1, column 20): expected a number for number field "points", '
        'found the string "x"',
        '  {"points": {"gte": "x"}}',
        "                     ^^^",
    ]


def test_syntax_can_be_forced(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "check", "--syntax", "json", "points > 1")
    assert status == EXIT_INVALID and "invalid JSON" in err
    status, _, err = run(capsys, "check", "--syntax", "text", JSON)
    assert status == EXIT_INVALID and "expected a condition" in err


def test_filter_from_a_file_or_stdin(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    path = tmp_path / "audience.txt"
    path.write_text("# VIPs\n" + TEXT + "\n", encoding="utf-8")
    assert run(capsys, "check", f"@{path}")[0] == EXIT_OK
    assert run(capsys, "check", "--file", str(path))[0] == EXIT_OK
    feed_stdin(monkeypatch, JSON)
    assert run(capsys, "check")[:2] == (EXIT_OK, "ok\n")
    feed_stdin(monkeypatch, TEXT)
    assert run(capsys, "check", "-")[:2] == (EXIT_OK, "ok\n")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, _, err = run(capsys, "check", f"@{tmp_path / 'missing.txt'}")
    assert status == EXIT_USAGE and "cannot read" in err
    status, _, err = run(capsys, "check", "--file", "x", "points > 1")
    assert status == EXIT_USAGE and "not both" in err
    with pytest.raises(SystemExit) as exited:
        main(["frobnicate"])
    assert exited.value.code == EXIT_USAGE


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    assert capsys.readouterr().out == f"audiencefilter {audiencefilter.__version__}\n"


def test_fmt_to_json_and_text(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "fmt", "--to", "json", TEXT) == (EXIT_OK, JSON + "\n", "")
    assert run(capsys, "fmt", "--to", "text", JSON) == (EXIT_OK, TEXT + "\n", "")
    status, out, _ = run(capsys, "fmt", "--indent", "2", '{"points": 1}')
    assert json.loads(out) == {"points": {"equals": 1}} and out.startswith('{\n  "points"')


def test_fmt_lays_long_text_out_over_lines(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "fmt", "--to", "text", "--width", "40", JSON)
    assert (status, out) == (
        EXIT_OK,
        'points >= 100\nand (\n    country in ["FR", "DE"]\n'
        '    or email ends with "@acme.com"\n)\n',
    )
    assert run(capsys, "fmt", "--width", "0", TEXT)[1] == TEXT + "\n"


def test_fmt_keeps_the_input_syntax_by_default(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "fmt", "POINTS >= 100 AND true".replace("POINTS", "points"))[1] == (
        "points >= 100 and true\n"
    )
    assert run(capsys, "fmt", '{"points": 1}')[1] == '{"points":{"equals":1}}\n'


def test_fmt_rejects_invalid_filters(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, err = run(capsys, "fmt", "points >")
    assert status == EXIT_INVALID and out == "" and "found the end of the filter" in err


@pytest.mark.skipif(not HAS_SQL, reason="the SQL back-end is not in this tree yet")
def test_sql(capsys: pytest.CaptureFixture[str]) -> None:
    status, out, _ = run(capsys, "sql", "--dialect", "sqlite", "points >= 100")
    assert status == EXIT_OK and "points" in out and ">= 100" in out
    status, out, _ = run(capsys, "sql", "--params", "--column", "points=score", "points >= 100")
    payload = json.loads(out)
    assert payload["params"] == [100] and "score" in payload["sql"]
    status, _, err = run(capsys, "sql", "--column", "nonsense", "points >= 100")
    assert status == EXIT_USAGE and "FIELD=COLUMN" in err


def test_explain(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    status, out, _ = run(capsys, "explain", "points >= 100", "--record", '{"points": 42}')
    assert status == EXIT_OK
    assert out == (
        "✗ FALSE    points >= 100   (points = 42)\n\nthe record is not in the audience\n"
    )
    record = tmp_path / "r.json"
    record.write_text('{"points": 420, "country": "FR"}', encoding="utf-8")
    assert run(capsys, "explain", JSON, "--record", f"@{record}")[1].endswith(
        "the record is in the audience\n"
    )


def test_explain_rejects_bad_records(capsys: pytest.CaptureFixture[str]) -> None:
    status, _, err = run(capsys, "explain", "points > 1", "--record", "[1]")
    assert status == EXIT_USAGE and "must be a JSON object" in err
    status, _, err = run(capsys, "explain", "points > 1", "--record", "{")
    assert status == EXIT_USAGE and "not valid JSON" in err
    status, _, err = run(capsys, "explain", "points > 1", "--record", '{"points": "x"}')
    assert status == EXIT_INVALID and "cannot be evaluated" in err


def test_custom_schema(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    schema = tmp_path / "schema.json"
    schema.write_text('{"score": "number", "plan": "string"}', encoding="utf-8")
    assert run(capsys, "check", "--schema", str(schema), 'score > 1 and plan = "pro"')[0] == 0
    # The file's fields extend the contact's, relations included, unless they replace them.
    assert (
        run(capsys, "check", "--schema", str(schema), "points > 1 and count(actions) > 1")[0] == 0
    )
    replaced = ("check", "--schema", str(schema), "--replace-schema", "points > 1")
    status, _, err = run(capsys, *replaced)
    assert status == EXIT_INVALID and "unknown field" in err
    schema.write_text('{"score": "integer"}', encoding="utf-8")
    assert run(capsys, "check", "--schema", str(schema), "score > 1")[0] == EXIT_USAGE


def _script() -> str:
    return str(Path(sysconfig.get_path("scripts")) / "audiencefilter")


def _environment() -> dict[str, str]:
    return {**os.environ, "NO_COLOR": "1", "PYTHONIOENCODING": "utf-8"}


@pytest.mark.parametrize("entry", ["module", "script"])
def test_real_entry_points(entry: str) -> None:
    command = [sys.executable, "-m", "audiencefilter.cli"] if entry == "module" else [_script()]
    if entry == "script" and not Path(command[0]).exists():
        pytest.skip("the console script is not installed in this environment")
    ok = subprocess.run(
        [*command, "fmt", "--to", "json", TEXT],
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=60,
        check=False,
    )
    assert (ok.returncode, ok.stdout) == (0, JSON + "\n")
    bad = subprocess.run(
        [*command, "check", "-"],
        input="points >= 100 and emial = 1",
        capture_output=True,
        text=True,
        env=_environment(),
        timeout=60,
        check=False,
    )
    assert bad.returncode == EXIT_INVALID
    assert '  hint: did you mean "email"?' in bad.stderr and "^^^^^" in bad.stderr
