"""The command line of `benchmarks.claims`: choose the claims, measure them, print the table."""

from __future__ import annotations

import argparse
import fnmatch
import os
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from . import markers, now
from .registry import Claim, Unavailable


@dataclass(frozen=True)
class Verdict:
    """One claim measured: its values (empty when not run), the verdict's word, a note."""

    claim: Claim
    values: tuple[float, ...]
    word: str
    note: str = ""

    @property
    def failed(self) -> bool:
        return self.word in ("does not hold", "error")


def main(argv: Sequence[str] | None = None) -> int:
    args = _arguments(argv)
    from .catalogue import CLAIMS

    chosen = _chosen(CLAIMS, args.only)
    if args.list:
        print(_listing(chosen))
        if args.write_now:
            _write(args.write_now, now.page(chosen, _places(chosen)))
        return 0
    machine = _machine()
    print(machine)
    verdicts = [_judge(claim, args) for claim in chosen]
    print(_table(verdicts))
    print(f"load average at the end {_load()}")
    if args.write_now:
        measured = {v.claim.id: _measured(v) for v in verdicts}
        page = now.page(chosen, _places(chosen), measured, f"{machine}; at the end {_load()}")
        _write(args.write_now, page)
    return 1 if any(v.failed for v in verdicts) else 0


def _places(claims: Sequence[Claim]) -> dict[str, markers.Marked]:
    """Each claim's marker; a claim written nowhere, or in two places, stops the page."""
    found = markers.marked()
    wrong = [c.id for c in claims if len(found.get(c.id, [])) != 1]
    if wrong:
        raise SystemExit(f"claims not marked exactly once in docs/performance*.md: {wrong}")
    return {c.id: found[c.id][0] for c in claims}


def _measured(verdict: Verdict) -> tuple[str, str]:
    shown = verdict.claim.stated.show(verdict.values) if verdict.values else "-"
    word = f"{verdict.word} ({verdict.note})" if verdict.note else verdict.word
    return shown, word


def _write(path: Path, text: str) -> None:
    path.write_text(text, encoding="utf-8")
    print(f"wrote {path}", file=sys.stderr)


def _arguments(argv: Sequence[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.claims", description=__doc__)
    parser.add_argument("--only", default="", help="claim ids or patterns, comma-separated")
    parser.add_argument("--list", action="store_true", help="the registry, nothing measured")
    parser.add_argument("--quick", action="store_true", help="tiny sizes: the machinery only")
    parser.add_argument("--long", action="store_true", help="the long claims too")
    parser.add_argument(
        "--write-now",
        type=Path,
        metavar="PATH",
        help="write the page of claims (docs/performance-now.md): with --list from the "
        "registry alone, otherwise with what was measured",
    )
    return parser.parse_args(argv)


def _chosen(claims: Sequence[Claim], only: str) -> list[Claim]:
    patterns = [part.strip() for part in only.split(",") if part.strip()]
    if not patterns:
        return list(claims)
    chosen = [c for c in claims if any(fnmatch.fnmatch(c.id, p) for p in patterns)]
    if not chosen:
        raise SystemExit(f"no claim matches {only!r}: see --list")
    return chosen


def _judge(claim: Claim, args: argparse.Namespace) -> Verdict:
    if claim.long and not (args.long or args.only or args.quick):
        return Verdict(claim, (), "not run", "long: --only or --long")
    started = time.perf_counter()
    try:
        values = tuple(float(v) for v in claim.measure(args.quick))
    except Unavailable as exc:
        return Verdict(claim, (), "not run", str(exc))
    except (Exception, SystemExit) as exc:  # one broken measure must not hide the others'
        return Verdict(claim, (), "error", f"{type(exc).__name__}: {exc}")
    note = f"{time.perf_counter() - started:.0f} s"
    print(f"  {claim.id}: {claim.stated.show(values)} ({note})", file=sys.stderr, flush=True)
    if args.quick:
        return Verdict(claim, values, "quick (not judged)", note)
    return Verdict(claim, values, "holds" if claim.stated.holds(values) else "does not hold", note)


def _table(verdicts: Sequence[Verdict]) -> str:
    lines = ["| claim | stated | measured | verdict | data |", "|---|---|---:|---|---|"]
    for v in verdicts:
        measured = v.claim.stated.show(v.values) if v.values else "-"
        word = f"{v.word} ({v.note})" if v.note and not v.values else v.word
        line = f"| {v.claim.id} | {v.claim.stated.text} | {measured} | {word} | {v.claim.size} |"
        lines.append(line)
    return "\n".join(lines)


def _listing(claims: Sequence[Claim]) -> str:
    lines = ["| claim | section | statement | stated | data | long |", "|---|---|---|---|---|---|"]
    for c in claims:
        lines.append(
            f"| {c.id} | {c.section} | {c.statement} | {c.stated.text} | {c.size} | "
            f"{'yes' if c.long else ''} |"
        )
    return "\n".join(lines)


def _load() -> str:
    return " ".join(f"{x:.2f}" for x in os.getloadavg())


def _machine() -> str:
    return (
        f"{datetime.now(UTC):%Y-%m-%d %H:%M} UTC, Python {sys.version.split()[0]}, "
        f"{os.cpu_count()} CPUs, load average {_load()}"
    )


if __name__ == "__main__":
    raise SystemExit(main())
