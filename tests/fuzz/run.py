"""Coverage-guided fuzzing of the JSON and text readers with atheris.

    python -m tests.fuzz.run json -runs=500000      # or: text
    make fuzz                                        # both, 500,000 inputs each

New interesting inputs are added to tests/fuzz/corpus/<kind>/, which the test suite replays.
"""

from __future__ import annotations

import sys
from pathlib import Path

import atheris

with atheris.instrument_imports(include=["audiencefilter"]):
    from tests.fuzz.targets import check_json, check_text

CORPUS = Path(__file__).parent / "corpus"


def main() -> None:
    kind = sys.argv[1]
    target = {"json": check_json, "text": check_text}[kind]
    args = [sys.argv[0], str(CORPUS / kind), *sys.argv[2:]]
    atheris.Setup(args, target)
    atheris.Fuzz()


if __name__ == "__main__":
    main()
