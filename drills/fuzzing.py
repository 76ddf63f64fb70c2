"""Fuzzing: both filter parsers under atheris, and the HTTP interface under schemathesis.

`fuzz` runs a bounded coverage-guided atheris run per parser (JSON and text), seeded with the
corpus kept in tests/fuzz/corpus (grown by `make fuzz`, 500,000 inputs a parser a run). A
failure is any exception other than the parser's own `FilterError`, or a valid filter that does
not survive every writer and back-end (tests/fuzz/targets.py). Without atheris the drill falls
back to a seeded mutation loop over the same corpus and targets: less clever, same checks.

`schemathesis` runs the suite's schemathesis test (tests/service/test_schemathesis.py) in a
child pytest, and reports the number of cases it generated.
"""

from __future__ import annotations

import importlib.util
import random
import re
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

from .common import ROOT, Context, Missing, Row, row

CORPUS = ROOT / "tests" / "fuzz" / "corpus"
KINDS = ("json", "text")
MAX_LEN = 2048
TOKENS = (
    b"{",
    b"}",
    b"[",
    b"]",
    b'"',
    b":",
    b",",
    b" and ",
    b" or ",
    b"not ",
    b"null",
    b"true",
    b"1e308",
    b"-0",
    b'"AND"',
    b'"OR"',
    b'"NOT"',
    b'"equals"',
    b'"in"',
    b'"gte"',
    b'"contains"',
    b'"data"',
    b'"path"',
    b"points",
    b"createdAt",
    b">=",
    b"==",
    b"!=",
    b"2025-01-01T00:00:00Z",
    b"\\u0000",
    b"\xff",
)


def corpus_size() -> dict[str, int]:
    return {kind: sum(1 for _ in (CORPUS / kind).iterdir()) for kind in KINDS}


def _atheris_run(kind: str, inputs: int, workdir: Path) -> tuple[int, int, int, str]:
    """Runs, failures, new inputs, and the tail of the output of one atheris run."""
    new_inputs, artifacts = workdir / f"new-{kind}", workdir / f"crashes-{kind}"
    new_inputs.mkdir()
    artifacts.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "drills.fuzz_target", kind, str(new_inputs)]
        + [f"-runs={inputs}", f"-max_len={MAX_LEN}", f"-artifact_prefix={artifacts}/"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1800,
        check=False,
    )
    output = done.stdout + done.stderr
    runs = re.search(r"Done (\d+) runs in", output)
    failures = sum(1 for _ in artifacts.iterdir()) or (1 if done.returncode else 0)
    found = sum(1 for _ in new_inputs.iterdir())
    return int(runs.group(1)) if runs else 0, failures, found, output[-3000:]


def mutate(rng: random.Random, data: bytes, corpus: list[bytes]) -> bytes:
    """One to four random edits: flips, token insertions, deletions, splices with the corpus."""
    buffer = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        choice = rng.randrange(5)
        where = rng.randrange(len(buffer) + 1)
        if choice == 0 and buffer:
            buffer[min(where, len(buffer) - 1)] = rng.randrange(256)
        elif choice == 1:
            buffer[where:where] = rng.choice(TOKENS)
        elif choice == 2 and buffer:
            del buffer[where : where + rng.randint(1, 16)]
        elif choice == 3:
            other = rng.choice(corpus)
            cut = rng.randrange(len(other) + 1)
            buffer[where:] = other[cut:]
        else:
            buffer[where:where] = buffer[where : where + rng.randint(1, 32)]
    return bytes(buffer[:MAX_LEN])


def _mutation_run(kind: str, inputs: int, workdir: Path) -> tuple[int, int, int, str]:
    from tests.fuzz.targets import check_json, check_text

    check: Callable[[bytes], None] = check_json if kind == "json" else check_text
    corpus = [path.read_bytes() for path in sorted((CORPUS / kind).iterdir())]
    rng = random.Random(20_240_601)
    failures, first = 0, ""
    for number in range(inputs):
        data = corpus[number] if number < len(corpus) else mutate(rng, rng.choice(corpus), corpus)
        try:
            check(data)
        except Exception as exc:  # anything but FilterError escaping the target is a finding
            failures += 1
            (workdir / f"crash-{kind}-{number}").write_bytes(data)
            first = first or f"{type(exc).__name__}: {exc}"
    return inputs, failures, 0, first


def fuzz(ctx: Context) -> Row:
    engine = "atheris" if importlib.util.find_spec("atheris") else "mutation"
    runner = _atheris_run if engine == "atheris" else _mutation_run
    started = time.monotonic()
    total = failures = found = 0
    notes: list[str] = []
    for kind in KINDS:
        runs, failed, new, output = runner(kind, ctx.sizes.fuzz_inputs, ctx.workdir)
        total, failures, found = total + runs, failures + failed, found + new
        if failed:
            print(output, file=sys.stderr)
            notes.append(f"{kind}: {failed} failure(s)")
    seconds = time.monotonic() - started
    sizes = corpus_size()
    passed = failures == 0 and total >= len(KINDS) * ctx.sizes.fuzz_inputs
    figures = (
        f"{engine}: {total:,} inputs ({ctx.sizes.fuzz_inputs:,} per parser, JSON and text) in "
        f"{seconds:.0f} s, {failures} failures, {found} new-coverage inputs (not kept); corpus "
        f"tests/fuzz/corpus: {sizes['json']} JSON + {sizes['text']} text inputs"
    )
    if notes:
        figures += "; " + "; ".join(notes)
    return row("fuzz", passed, figures)


def schemathesis(ctx: Context) -> Row:
    if importlib.util.find_spec("schemathesis") is None:
        raise Missing("schemathesis is not installed (`pip install -e '.[dev]'`)")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "tests/service/test_schemathesis.py"]
        + ["-q", "-s", "-p", "no:cacheprovider"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    output = done.stdout + done.stderr
    cases = [int(count) for count in re.findall(r"schemathesis: (\d+) cases generated", output)]
    summary = re.findall(r"^=*\s*(\d+ (?:passed|failed|skipped|error).*?)\s*=*$", output, re.M)
    tests = summary[-1] if summary else f"pytest exit {done.returncode}"
    if done.returncode != 0:
        print(output[-6000:], file=sys.stderr)
    findings = sorted(set(re.findall(r"\u274c (ST\d+ [^\n]*?)\s*$", output, re.MULTILINE)))
    passed = done.returncode == 0 and bool(cases) and "skipped" not in tests
    figures = f"{sum(cases):,} generated cases, all checks; {tests}"
    if findings:
        figures += "; findings: " + "; ".join(findings)
    return row("schemathesis", passed, figures)
