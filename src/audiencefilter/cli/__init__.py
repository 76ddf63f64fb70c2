"""`audiencefilter`: check, format, translate, explain and run filters from the command line.

    audiencefilter check 'points >= 100 and email contains "gmail"'
    audiencefilter fmt --to json @audience.txt
    audiencefilter sql --dialect sqlite '{"points": {"gte": 100}}'
    audiencefilter explain 'points >= 100' --record '{"points": 42}'
    audiencefilter eval @audience.txt contacts.jsonl
    audiencefilter bench @filters.txt --contacts synthetic:100000 --engines memory,polars,duckdb
    audiencefilter convert --from jsonlogic --to mongodb '{"==": [{"var": "country"}, "FR"]}'
    audiencefilter compare 'points >= 10' 'points >= 5'
    audiencefilter examples --json 'country = "FR" or points >= 10'

Exit status: 0 success, 1 invalid filter or unreadable input, 2 bad command line, 3 `eval` or
`bench` finished but skipped bad rows, 4 `bench` found engines answering differently.
docs/cli.md has the details.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Callable, Sequence
from datetime import date, datetime
from typing import IO, Any

import audiencefilter as af

from .evaluate import (
    EXIT_BAD_ROWS,
    EXIT_INVALID,
    EXIT_OK,
    EXIT_USAGE,
    EvalOptions,
    record_checker,
    run_eval,
)
from .inputs import UsageError, detect_syntax, load_filter, load_record, load_schema, read_text
from .output import write

EXIT_DIFFERENT = 4
"""`bench`: two engines found different contacts for a filter."""

__all__ = [
    "EXIT_BAD_ROWS",
    "EXIT_DIFFERENT",
    "EXIT_INVALID",
    "EXIT_OK",
    "EXIT_USAGE",
    "build_parser",
    "main",
]

# Every name the library accepts, aliases (`postgres`, `mariadb`) included.
DIALECTS = af.sql_dialects()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status (the console script exits with it)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    out, err = sys.stdout, sys.stderr
    try:
        if not args.one_filter:  # the command reads its filters itself
            status: int = args.run(args, out, err)
            return status
        return _read_and_run(args, out, err)
    except UsageError as exc:
        parser.print_usage(err)
        err.write(f"audiencefilter {args.command}: error: {exc}\n")
        return EXIT_USAGE
    except BrokenPipeError:  # `... | head`: the reader has what it wanted
        # Point stdout at devnull so the interpreter's final flush does not fail again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_OK


def _read_and_run(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Read the schema and the filter the command line names, then run the command on them; an
    invalid filter is reported here, as every command reports it."""
    if args.command == "eval" and args.contacts == "-" and _filter_from_stdin(args):
        raise UsageError("the filter and the contacts cannot both come from stdin")
    schema = load_schema(args.schema, replace=args.replace_schema)
    text = read_text(args.filter, args.file)
    syntax = getattr(args, "source_format", None) or detect_syntax(text, args.syntax)
    try:
        flt = load_filter(text, syntax, schema)
    except af.FilterError as exc:
        write(err, af.render_error(exc, text))
        return EXIT_INVALID
    status: int = args.run(args, flt, syntax, out, err)
    return status


def _filter_from_stdin(args: argparse.Namespace) -> bool:
    if args.file is not None:
        return bool(args.file == "-")
    return args.filter is None or args.filter in ("-", "@-")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="audiencefilter",
        description="Check, format, translate, explain and run smart-audience filters, written "
        "as where-clause JSON or in the readable text syntax.",
    )
    parser.add_argument("--version", action="version", version=f"audiencefilter {af.__version__}")
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name, help_text, options, run in _COMMANDS:
        one_filter = name not in _SEVERAL_FILTERS
        command = _command(commands, name, help_text, one_filter)
        _add_options(command, options)
        command.set_defaults(run=run, one_filter=one_filter)
    return parser


def _command(commands: Any, name: str, help_text: str, one_filter: bool) -> argparse.ArgumentParser:
    """A subcommand; one that takes one filter has the options every such command shares:
    where the filter comes from, its syntax and its schema."""
    command: argparse.ArgumentParser = commands.add_parser(
        name, help=help_text, description=help_text
    )
    if one_filter:
        _add_options(command, _FILTER_OPTIONS)
    return command


def _add_options(command: argparse.ArgumentParser, options: Sequence[_Option]) -> None:
    for flags, settings in options:
        command.add_argument(*flags, **settings)


def _instant(text: str) -> datetime:
    try:
        return af.parse_datetime(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected an ISO 8601 date-time such as 2025-01-31T09:00:00Z, found {text!r}"
        ) from None


def _relative_note(flt: af.Filter, now: datetime | None, err: IO[str]) -> None:
    """Say on stderr which instants the relative dates were written as: SQL text is fixed."""
    if not flt.clock.is_relative:
        return
    instants = ", ".join(
        f"{ago.words} = {_shown_instant(instant)}"
        for ago, instant in zip(flt.clock.relatives, flt.clock.instants(now), strict=True)
    )
    taken = "at --now" if now is not None else "now; rerun it or pass --now to choose the instant"
    err.write(f"note: relative dates are written as the instants they are {taken}: {instants}\n")


def _shown_instant(instant: date | str | af.MonthDays) -> str:
    """An anniversary's month-days in words, any other instant as the JSON form writes it."""
    if isinstance(instant, af.MonthDays):
        return instant.words
    return str(af.json_value(instant))


def _check(
    args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]
) -> int:
    out.write("ok\n")
    return EXIT_OK


def _fmt(args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]) -> int:
    target = args.to or syntax
    if target == "json":
        out.write(flt.to_json(indent=args.indent) + "\n")
    else:
        out.write(af.to_text(flt.root, width=args.width or None) + "\n")
    return EXIT_OK


def _sql(args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]) -> int:
    columns = _columns(args.column)
    try:
        _write_sql(args, flt, columns or None, out)
    except ImportError as exc:
        err.write(f"the SQL back-end is not available: {exc}\n")
        return EXIT_INVALID
    except af.FilterError as exc:  # a filter this dialect refuses (relations on Spark SQL, say)
        write(err, af.render_error(exc))
        return EXIT_INVALID
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    _relative_note(flt, args.now, err)
    return EXIT_OK


def _convert(
    args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]
) -> int:
    """The filter in `--to`'s format: text as it is, anything else as indented JSON."""
    try:
        converted = flt.to_format(args.target_format)
    except af.FilterError as exc:  # a condition the target format has no faithful form for
        write(err, af.render_error(exc))
        return EXIT_INVALID
    if not isinstance(converted, str):
        converted = json.dumps(converted, indent=2, ensure_ascii=False, default=str)
    out.write(converted + "\n")
    return EXIT_OK


def _columns(pairs: Sequence[str]) -> dict[str, str]:
    """The `--column FIELD=COLUMN` options as a mapping."""
    columns = {}
    for pair in pairs:
        field, sep, column = pair.partition("=")
        if not sep or not field or not column:
            raise UsageError(f"--column takes FIELD=COLUMN, not {pair!r}")
        columns[field] = column
    return columns


def _write_sql(
    args: argparse.Namespace, flt: af.Filter, columns: dict[str, str] | None, out: IO[str]
) -> None:
    """The SQL text, or with `--params` the text with placeholders and its values as JSON."""
    if not args.params:
        out.write(flt.to_sql(args.dialect, columns, now=args.now) + "\n")
        return
    sql, params = flt.to_sql_params(args.dialect, columns, now=args.now)
    document = {"sql": sql, "params": [af.json_value(p) for p in params]}
    out.write(json.dumps(document, ensure_ascii=False, default=str) + "\n")


def _explain(
    args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]
) -> int:
    record = load_record(args.record)
    problem = record_checker(flt)(record)  # the same words as `eval` for a wrong-typed value
    if problem is not None:
        err.write(f"the record cannot be evaluated: {problem}\n")
        return EXIT_INVALID
    try:
        explanation = flt.explain(record, now=args.now)
    except af.RecordError as exc:
        err.write(f"the record cannot be evaluated: {exc}\n")
        return EXIT_INVALID
    verdict = "in the audience" if explanation.matched else "not in the audience"
    write(out, f"{explanation.render()}\n\nthe record is {verdict}")
    return EXIT_OK


def _eval(args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]) -> int:
    options = EvalOptions(
        path=args.contacts,
        fmt=args.contacts_format,
        output=args.output,
        id_field=args.id_field,
        count_only=args.count,
        progress=args.progress,
        bad_rows_shown=max(0, args.bad_rows_shown),
        now=args.now,
    )
    return run_eval(flt, options, out, err)


def _compare(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    from .algebra import run_compare  # the algebra only when asked

    return run_compare(args, out, err)


def _examples(
    args: argparse.Namespace, flt: af.Filter, syntax: str, out: IO[str], err: IO[str]
) -> int:
    from .algebra import run_examples

    return run_examples(args, flt, syntax, out, err)


def _bench(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    from .bench import run_bench  # polars, DuckDB and matplotlib only when benchmarking

    return run_bench(args, out, err)


# The command line as data: each command's own options, then the commands. An option is its
# flags and the keyword arguments of `add_argument`.
_Option = tuple[tuple[str, ...], dict[str, Any]]

_FILTER_OPTIONS: tuple[_Option, ...] = (
    (
        ("filter",),
        {
            "nargs": "?",
            "metavar": "FILTER",
            "help": "the filter text, @file, or - for stdin (default: stdin)",
        },
    ),
    (("--file", "-f"), {"metavar": "PATH", "help": "read the filter from PATH"}),
    (
        ("--syntax",),
        {
            "choices": ("auto", "json", "text"),
            "default": "auto",
            "help": "the filter's syntax (default: JSON if it starts with { or [)",
        },
    ),
    (
        ("--schema",),
        {
            "metavar": "PATH",
            "help": 'filterable fields as JSON {"field": "TYPE", ...}, TYPE one of '
            + ", ".join(kind.value for kind in af.FieldType)
            + " added to the contact fields and relations (`actions`), a field of the same "
            "name taking the file's type",
        },
    ),
    (
        ("--replace-schema",),
        {
            "action": "store_true",
            "help": "the --schema fields replace the contact fields and relations instead",
        },
    ),
)
_NOW: _Option = (
    ("--now",),
    {
        "type": _instant,
        "metavar": "DATETIME",
        "help": "the instant relative dates (`3 days ago`) are taken at, ISO 8601 "
        "(default: the clock)",
    },
)
_FMT_OPTIONS: tuple[_Option, ...] = (
    (("--to",), {"choices": ("json", "text"), "help": "output syntax (default: the input's own)"}),
    (
        ("--indent",),
        {
            "type": int,
            "default": None,
            "metavar": "N",
            "help": "indent JSON output by N spaces (default: compact)",
        },
    ),
    (
        ("--width",),
        {
            "type": int,
            "default": 100,
            "metavar": "N",
            "help": "break text output longer than N characters over lines (0: one line)",
        },
    ),
)
_SQL_OPTIONS: tuple[_Option, ...] = (
    (
        ("--dialect",),
        {
            "choices": DIALECTS,
            "default": "postgresql",
            "help": "the SQL dialect (default: postgresql)",
        },
    ),
    (
        ("--column",),
        {
            "action": "append",
            "default": [],
            "metavar": "FIELD=COLUMN",
            "help": "the column holding FIELD (repeatable); default: the field's name",
        },
    ),
    (
        ("--params",),
        {
            "action": "store_true",
            "help": 'print {"sql": ..., "params": [...]} with placeholders instead',
        },
    ),
    _NOW,
)
_EXPLAIN_OPTIONS: tuple[_Option, ...] = (
    (
        ("--record",),
        {"required": True, "metavar": "JSON", "help": "the contact as a JSON object, or @file"},
    ),
    _NOW,
)
_EVAL_OPTIONS: tuple[_Option, ...] = (
    (
        ("contacts",),
        {
            "metavar": "CONTACTS",
            "help": "JSON Lines, JSON array or CSV file of contacts (- for stdin)",
        },
    ),
    (
        ("--format",),
        {
            "choices": ("jsonl", "json", "csv"),
            "dest": "contacts_format",
            "help": "the contacts' format (default: from the file's extension)",
        },
    ),
    (
        ("--output", "-o"),
        {
            "metavar": "FILE",
            "help": "write the matching contacts as JSON Lines to FILE (- for stdout)",
        },
    ),
    (
        ("--id-field",),
        {
            "default": "id",
            "metavar": "NAME",
            "help": "the field printed for each match (default: id)",
        },
    ),
    (("--count",), {"action": "store_true", "help": "print only the number of matches"}),
    (
        ("--progress",),
        {
            "choices": ("auto", "always", "never"),
            "default": "auto",
            "help": "progress bar on stderr (default: for large files on a terminal)",
        },
    ),
    (
        ("--bad-rows-shown",),
        {
            "type": int,
            "default": 20,
            "metavar": "N",
            "help": "report at most N bad rows on stderr (all are counted)",
        },
    ),
    _NOW,
)
_BENCH_OPTIONS: tuple[_Option, ...] = (
    (
        ("filters",),
        {
            "nargs": "+",
            "metavar": "FILTERS",
            "help": "filters as JSON or text, or @file holding one per line or a JSON array",
        },
    ),
    (
        ("--syntax",),
        {
            "choices": ("auto", "json", "text"),
            "default": "auto",
            "help": "the filters' syntax (default: JSON if it starts with { or [)",
        },
    ),
    (
        ("--contacts",),
        {
            "required": True,
            "metavar": "SOURCE",
            "help": "JSON Lines, JSON array, CSV or Parquet file, a database URL "
            "(sqlite:///x.db, postgresql://...) with a contacts table, or synthetic:N",
        },
    ),
    (
        ("--format",),
        {
            "choices": ("jsonl", "json", "csv", "parquet"),
            "dest": "contacts_format",
            "help": "the contacts file's format (default: from its extension)",
        },
    ),
    (
        ("--engines",),
        {
            "default": "memory,polars,duckdb,sqlite",
            "metavar": "LIST",
            "help": "comma-separated, from memory, polars, duckdb, sqlite, postgresql, spark "
            "(default: memory,polars,duckdb,sqlite)",
        },
    ),
    (
        ("--postgresql",),
        {"metavar": "URL", "help": "the database the postgresql engine loads the contacts into"},
    ),
    (
        ("--rows",),
        {"type": int, "metavar": "N", "help": "use at most the first N contacts"},
    ),
    (
        ("--repeat",),
        {"type": int, "default": 3, "metavar": "K", "help": "timed runs per filter (median)"},
    ),
    (("--seed",), {"type": int, "default": 0, "help": "the seed of synthetic:N (default: 0)"}),
    (("--json",), {"metavar": "OUT", "help": "write every measurement as JSON to OUT"}),
    (("--plot",), {"metavar": "OUT", "help": "draw rows per second as a PNG image in OUT"}),
    (
        ("--progress",),
        {
            "choices": ("auto", "always", "never"),
            "default": "auto",
            "help": "progress bar on stderr (default: on a terminal)",
        },
    ),
    _NOW,
)
_JSON_OUTPUT: _Option = (("--json",), {"action": "store_true", "help": "print JSON"})
_COMPARE_OPTIONS: tuple[_Option, ...] = (
    (("first",), {"metavar": "A", "help": "the first filter, as JSON or text, or @file"}),
    (("second",), {"metavar": "B", "help": "the second filter, as JSON or text, or @file"}),
    (
        ("--syntax",),
        {
            "choices": ("auto", "json", "text"),
            "default": "auto",
            "help": "the filters' syntax (default: JSON if it starts with { or [)",
        },
    ),
    (("--schema",), {"metavar": "PATH", "help": "filterable fields as JSON, as for check"}),
    (
        ("--replace-schema",),
        {"action": "store_true", "help": "the --schema fields replace the contact fields"},
    ),
    _JSON_OUTPUT,
    _NOW,
)
_EXAMPLES_OPTIONS: tuple[_Option, ...] = (_JSON_OUTPUT, _NOW)
_CONVERT_OPTIONS: tuple[_Option, ...] = (
    (
        ("--from",),
        {
            "choices": ("json", "text", *af.format_names(readable=True)),
            "required": True,
            "dest": "source_format",
            "help": "the filter's format (it replaces --syntax)",
        },
    ),
    (
        ("--to",),
        {
            "choices": ("json", "text", *af.format_names()),
            "required": True,
            "dest": "target_format",
            "help": "the format to print (docs/interop.md)",
        },
    ),
)
_COMMANDS: tuple[tuple[str, str, tuple[_Option, ...], Callable[..., int]], ...] = (
    ("check", "validate a filter; prints ok, or every problem found", (), _check),
    ("fmt", "print a filter in canonical form", _FMT_OPTIONS, _fmt),
    ("sql", "print a filter as a SQL condition", _SQL_OPTIONS, _sql),
    ("explain", "show why a record is in or out of the audience", _EXPLAIN_OPTIONS, _explain),
    ("eval", "run a filter over a file of contacts", _EVAL_OPTIONS, _eval),
    ("bench", "time filters over contacts on several engines", _BENCH_OPTIONS, _bench),
    ("convert", "translate a filter between formats", _CONVERT_OPTIONS, _convert),
    (
        "compare",
        "the relation of two audiences (same, contained, overlapping, disjoint) with witnesses",
        _COMPARE_OPTIONS,
        _compare,
    ),
    (
        "examples",
        "example contacts inside, outside and per condition",
        _EXAMPLES_OPTIONS,
        _examples,
    ),
)
"""Every command, in the order `--help` lists them: name, help, options, and what runs it."""
_SEVERAL_FILTERS = frozenset({"bench", "compare"})
"""Commands that read their filters themselves: the others take one, read before they run."""
