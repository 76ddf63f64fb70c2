"""`audiencefilter eval`: a filter run over a contacts file, streaming, in constant memory.

A row is bad when it cannot be read (broken JSON, a CSV cell that is not of its field's type)
or when a field the filter reads holds a value of the wrong type (a string in `points`, a date
that is not ISO 8601). Bad rows are reported on stderr with where they are, counted in the
summary and turn the exit status to 3; the other rows are still evaluated. Fields the filter
does not read are not checked: they cannot change the result.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date, datetime
from typing import IO, Any

import audiencefilter as af

from .contacts import InputError, Row, format_of, read_rows
from .output import progress

EXIT_OK, EXIT_INVALID, EXIT_USAGE, EXIT_BAD_ROWS = 0, 1, 2, 3
_TICK_EVERY = 1 << 13

Check = Callable[[Mapping[str, Any]], "str | None"]


@dataclass(frozen=True, slots=True)
class EvalOptions:
    """What `eval` was asked for on the command line."""

    path: str
    fmt: str | None = None
    output: str | None = None
    id_field: str = "id"
    count_only: bool = False
    progress: str = "auto"
    bad_rows_shown: int = 20
    now: datetime | None = None


def record_checker(flt: af.Filter) -> Check:
    """A function naming the first field the filter reads that holds a wrong-typed value."""
    fields = [flt.schema.get(name) for name in sorted(flt.fields)]
    # A relation is no field: its rows are checked by the predicate as it reads them. A field
    # declared inside JSON holds whatever JSON holds: another type there is an answer (FALSE
    # or UNKNOWN, docs/semantics-json.md), never a bad row.
    read = [field for field in fields if field is not None and not field.source]

    def check(record: Mapping[str, Any]) -> str | None:
        for field in read:
            problem = af.value_problem(field.type, record.get(field.name))
            if problem is not None:
                return f'field "{field.name}": {problem}'
        return None

    return check


def _json_default(value: Any) -> Any:
    if isinstance(value, date):  # a date-time as `...Z`, a date as YYYY-MM-DD
        return af.json_value(value)
    raise TypeError(f"{type(value).__name__} is not JSON serializable")


class _Tally:
    """Counts, bad-row reports and the matches' destination for one run."""

    def __init__(
        self, options: EvalOptions, out: IO[str], err: IO[str], records_out: IO[str] | None
    ) -> None:
        self.options = options
        self.out, self.err, self.records_out = out, err, records_out
        self.rows = self.matched = self.bad = 0

    def bad_row(self, where: str, message: str) -> None:
        self.bad += 1
        shown = self.options.bad_rows_shown
        if self.bad <= shown:
            self.err.write(f"{self.options.path}: {where}: {message}\n")
        elif self.bad == shown + 1:
            self.err.write(f"{self.options.path}: more bad rows: counted, not shown\n")

    def match(self, row: Row, record: Mapping[str, Any]) -> None:
        self.matched += 1
        if self.records_out is not None:
            self.records_out.write(
                json.dumps(record, ensure_ascii=False, default=_json_default) + "\n"
            )
        elif not self.options.count_only:
            ident = record.get(self.options.id_field)
            self.out.write(f"{row.where if ident is None else ident}\n")

    def summary(self) -> str:
        share = f" ({100 * self.matched / self.rows:.2f}%)" if self.rows else ""
        text = f"{self.matched} of {self.rows} contacts match{share}"
        if self.bad:
            text += f"; {self.bad} bad row{'s' if self.bad != 1 else ''} skipped"
        return text


def run_eval(flt: af.Filter, options: EvalOptions, out: IO[str], err: IO[str]) -> int:
    """Evaluate `flt` over the contacts file; returns the exit status."""
    fmt = format_of(options.path, options.fmt)
    try:
        stream = sys.stdin.buffer if options.path == "-" else open(options.path, "rb")  # noqa: SIM115
    except OSError as exc:  # a file named on the command line: a usage error, as for @filter
        err.write(
            f"audiencefilter eval: error: cannot read {options.path}: {exc.strerror or exc}\n"
        )
        return EXIT_USAGE
    records_out: IO[str] | None = None
    try:
        if options.output == "-":
            records_out = out
        elif options.output is not None:
            records_out = open(options.output, "w", encoding="utf-8")  # noqa: SIM115
        tally = _Tally(options, out, err, records_out)
        status = _evaluate(flt, stream, fmt, tally, err)
    except BrokenPipeError:
        raise  # `... | head`: the command line ends quietly (see `main`)
    except OSError as exc:
        err.write(f"{options.output or options.path}: {exc.strerror or exc}\n")
        return EXIT_INVALID
    finally:
        if stream is not sys.stdin.buffer:
            stream.close()
        if records_out is not None and records_out is not out:
            records_out.close()
    if status != EXIT_INVALID:
        if options.count_only:
            out.write(f"{tally.matched}\n")
        err.write(tally.summary() + "\n")
        out.flush()
    return status


def _evaluate(flt: af.Filter, stream: IO[bytes], fmt: str, tally: _Tally, err: IO[str]) -> int:
    predicate, check = _predicate_at(flt, tally.options.now), record_checker(flt)
    total = _size(stream)
    with progress(err, total, tally.options.progress) as tick:
        try:
            for row in read_rows(stream, fmt, flt.schema):
                tally.rows += 1
                if tally.rows % _TICK_EVERY == 0:
                    tick(_position(stream))
                record = row.record
                if record is None:
                    tally.bad_row(row.where, row.error or "unreadable")
                    continue
                problem = check(record)
                if problem is None:
                    try:
                        if predicate(record):
                            tally.match(row, record)
                        continue
                    except af.RecordError as exc:
                        problem = str(exc)
                tally.bad_row(row.where, problem)
        except InputError as exc:
            err.write(f"{tally.options.path}: {exc}\n")
            return EXIT_INVALID if tally.rows == 0 else EXIT_BAD_ROWS
    return EXIT_BAD_ROWS if tally.bad else EXIT_OK


def _predicate_at(flt: af.Filter, now: datetime | None) -> Callable[[Mapping[str, Any]], bool]:
    """The predicate with every relative value taken once, at `--now` (default: the clock
    when the run starts), as `Filter.select` takes them: one file is judged at one instant.
    Not `resolve(now)`, which keeps anniversaries relative (they would read the clock)."""
    if not flt.clock.relatives:
        return flt.predicate
    evaluate, instants = flt.evaluator, flt.clock.instants(now)
    return lambda record: evaluate(record, instants)


def _size(stream: IO[bytes]) -> int | None:
    try:
        return os.fstat(stream.fileno()).st_size or None
    except (OSError, ValueError):
        return None


def _position(stream: IO[bytes]) -> int:
    try:
        return stream.tell()
    except (OSError, ValueError):
        return 0
