"""docs/backends.md tells the truth: its SQL examples are what `to_sql` writes, and its `>>>`
examples run.

An example is a fenced `sql` block whose first line is `-- where: <JSON>` (and, for relative
date-times, a second line `-- now: <instant>`), followed by one `-- <dialect>` line and the SQL
for each dialect. After changing the SQL back-end, regenerate
the blocks with `python -m tests.test_sql_docs --write` and review the diff.
"""

from __future__ import annotations

import doctest
import json
import re
import sys
from pathlib import Path

import audiencefilter as af
from audiencefilter.language.values import parse_datetime

DOC = Path(__file__).parent.parent / "docs" / "backends.md"
DIALECTS = ("postgresql", "sqlite", "mysql", "duckdb")
BLOCK = re.compile(r"```sql\n(-- where: .*?\n(?:-- now: .*?\n)?)(.*?)```", re.DOTALL)


def render(head: str) -> str:
    """The body of an example block for its `-- where:` (and `-- now:`) lines."""
    where_line, _, now_line = head.rstrip("\n").partition("\n")
    flt = af.parse(json.loads(where_line.removeprefix("-- where: ")))
    now = parse_datetime(now_line.removeprefix("-- now: ")) if now_line else None
    return "".join(f"-- {name}\n{flt.to_sql(name, now=now)}\n" for name in DIALECTS)


def regenerated(text: str) -> str:
    return BLOCK.sub(lambda m: f"```sql\n{m.group(1)}{render(m.group(1))}```", text)


def test_sql_examples_are_what_to_sql_writes() -> None:
    text = DOC.read_text(encoding="utf-8")
    blocks = BLOCK.findall(text)
    assert len(blocks) >= 15, "docs/backends.md lost its SQL examples"
    for where_line, body in blocks:
        assert body == render(where_line), where_line


def test_backends_doc_examples_run() -> None:
    result = doctest.testfile(
        str(DOC), module_relative=False, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    )
    assert result.attempted > 0
    assert result.failed == 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(regenerated(DOC.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.exit("usage: python -m tests.test_sql_docs --write")
