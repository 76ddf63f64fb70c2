"""`python -m drills.fuzz_target KIND NEW_INPUTS [libFuzzer flags]`: one bounded atheris run.

The same targets as `tests.fuzz.run`, seeded with the kept corpus, but inputs that reach new
coverage go to NEW_INPUTS, a scratch folder, instead of tests/fuzz/corpus: a drill leaves the
working tree as it found it. (`make fuzz` is the run that grows the corpus.)
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris  # type: ignore[import-untyped]

with atheris.instrument_imports(include=["audiencefilter"]):
    from tests.fuzz.targets import check_json, check_text

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "fuzz" / "corpus"


def main() -> None:
    kind, new_inputs = sys.argv[1], sys.argv[2]
    target = {"json": check_json, "text": check_text}[kind]
    atheris.Setup([sys.argv[0], new_inputs, str(CORPUS / kind), *sys.argv[3:]], target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
