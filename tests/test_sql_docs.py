"""The back-end pages tell the truth: their SQL examples are what `to_sql` writes, and their
`>>>` examples run.

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

import pytest

import audiencefilter as af
from audiencefilter.language.values import parse_datetime

DOCS = Path(__file__).parent.parent / "docs"
# The pages by engine family that hold examples; the Spark page's job runs in test_spark_docs.
BACKEND_PAGES = [
    "backends.md",
    "backends-sql-rules.md",
    "backends-clickhouse.md",
    "backends-polars.md",
]
SQL_PAGES = ["backends.md", "backends-sql-rules.md"]
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


@pytest.mark.parametrize("name", SQL_PAGES)
def test_sql_examples_are_what_to_sql_writes(name: str) -> None:
    blocks = BLOCK.findall((DOCS / name).read_text(encoding="utf-8"))
    assert len(blocks) >= 10, f"docs/{name} lost its SQL examples"
    for where_line, body in blocks:
        assert body == render(where_line), where_line


@pytest.mark.parametrize("name", BACKEND_PAGES)
def test_backends_doc_examples_run(name: str) -> None:
    result = doctest.testfile(
        str(DOCS / name),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
    )
    assert result.attempted > 0, f"{name} has no examples"
    assert result.failed == 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        for page in SQL_PAGES:
            path = DOCS / page
            path.write_text(regenerated(path.read_text(encoding="utf-8")), encoding="utf-8")
    else:
        sys.exit("usage: python -m tests.test_sql_docs --write")
