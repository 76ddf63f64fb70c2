"""Facts the code states in one place only, so two copies cannot drift apart."""

from __future__ import annotations

import re
from pathlib import Path

SOURCE = Path(__file__).resolve().parents[1] / "src" / "audiencefilter"

# The custom field types' names in a row, however the lines are wrapped.
_CUSTOM_TYPES = re.compile(
    r'"string",\s*"number",\s*"boolean",\s*"date",\s*"string\[\]",\s*"number\[\]",\s*"boolean\[\]"'
)


def test_the_custom_field_types_are_listed_once() -> None:
    listing = [
        str(path.relative_to(SOURCE))
        for path in sorted(SOURCE.rglob("*.py"))
        for _ in _CUSTOM_TYPES.finditer(path.read_text(encoding="utf-8"))
    ]
    assert listing == ["service/domain/custom_fields.py"]
