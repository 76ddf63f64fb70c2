"""`audiencefilter compare A B` and `audiencefilter examples F`: the audience algebra on the
command line (docs/algebra.md), as readable text or `--json`."""

from __future__ import annotations

import argparse
import json
from decimal import Decimal
from typing import IO, Any

from ..algebra import compare
from ..errors import FilterError
from ..excerpt import render_error
from ..filter import Filter
from ..testing.examples import Examples, examples
from ..where.write import json_value
from .evaluate import EXIT_INVALID, EXIT_OK
from .inputs import detect_syntax, load_filter, load_schema, read_text
from .output import write


def _jsonable(value: Any) -> Any:
    """A witness record as JSON data: date-times as ISO text, exact decimals as numbers."""
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, Decimal):
        return float(value) if float(value) == value else str(value)
    if isinstance(value, float) and value != value:
        return "NaN"
    return json_value(value) if not isinstance(value, str | int | float | bool) else value


def _dumps(value: Any) -> str:
    return json.dumps(_jsonable(value), sort_keys=True, allow_nan=False, default=str)


def run_compare(args: argparse.Namespace, out: IO[str], err: IO[str]) -> int:
    """Read both filters, print their relation and a witness per region known non-empty."""
    schema = load_schema(args.schema, replace=args.replace_schema)
    filters: list[Filter] = []
    for argument in (args.first, args.second):
        text = read_text(argument, None)
        try:
            filters.append(load_filter(text, detect_syntax(text, args.syntax), schema))
        except FilterError as exc:
            write(err, render_error(exc, text))
            return EXIT_INVALID
    result = compare(filters[0], filters[1], now=args.now)
    regions = {"both": result.both, "a_only": result.a_only, "b_only": result.b_only}
    if args.json:
        out.write(_dumps({"relation": result.relation, **regions, "reason": result.reason}) + "\n")
        return EXIT_OK
    lines = [f"relation: {result.relation}"]
    titles = {"both": "in both", "a_only": "in the first only", "b_only": "in the second only"}
    lines += [f"{titles[k]}: {_dumps(v)}" for k, v in regions.items() if v is not None]
    if result.relation == "unknown":
        lines.append(f"reason: {result.reason}")
    write(out, "\n".join(lines))
    return EXIT_OK


def run_examples(
    args: argparse.Namespace, flt: Filter, syntax: str, out: IO[str], err: IO[str]
) -> int:
    """Print a record inside, one outside, and a deciding pair per condition."""
    found = examples(flt, now=args.now)
    if args.json:
        out.write(_dumps(_as_data(found)) + "\n")
        return EXIT_OK
    lines = [f"inside:  {_dumps(found.inside)}", f"outside: {_dumps(found.outside)}"]
    for path, pair in found.conditions.items():
        if pair.inside is not None:
            lines.append(f"{path}: in {_dumps(pair.inside)} / out {_dumps(pair.outside)}")
        else:
            lines.append(f"{path}: {'dead (never decides)' if pair.dead else 'no pair found'}")
    write(out, "\n".join(lines))
    return EXIT_OK


def _as_data(found: Examples) -> dict[str, Any]:
    pairs = {
        path: {"inside": p.inside, "outside": p.outside, "dead": p.dead}
        for path, p in found.conditions.items()
    }
    return {"inside": found.inside, "outside": found.outside, "conditions": pairs}
