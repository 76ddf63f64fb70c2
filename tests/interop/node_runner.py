"""react-querybuilder's own `formatQuery(query, "sql")`, run in Node once per test session.

`tests/interop/node/` pins react-querybuilder (package.json, package-lock.json); `npm ci` there
installs it (CI does, in `.ci/run`). Without Node or the installed package the tests that need
it are skipped, unless `AUDIENCEFILTER_REQUIRE_SERVERS=1` (CI), which makes that a failure, as
for the database servers.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest

NODE_DIR = Path(__file__).parent / "node"


class FormatSql:
    """One Node process reading queries as JSON Lines and answering each with its SQL."""

    def __init__(self, node: str) -> None:
        self.process = subprocess.Popen(
            [node, "format_sql.mjs"],
            cwd=NODE_DIR,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            encoding="utf-8",
        )

    def __call__(self, query: Any) -> str:
        """`formatQuery(query, "sql")`."""
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.write(json.dumps(query) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, "the Node process of format_sql.mjs ended"
        answer = json.loads(line)
        assert "sql" in answer, answer.get("error")
        sql: str = answer["sql"]
        return sql

    def close(self) -> None:
        assert self.process.stdin is not None and self.process.stdout is not None
        self.process.stdin.close()
        self.process.wait(timeout=10)
        self.process.stdout.close()


def unavailable(reason: str) -> None:
    """Skip, or fail when CI requires every external tool."""
    if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason} (AUDIENCEFILTER_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason)


def start() -> FormatSql:
    node = shutil.which("node")
    if node is None:
        unavailable("node is not installed")
    if not (NODE_DIR / "node_modules" / "react-querybuilder").is_dir():
        unavailable("react-querybuilder is not installed: run npm ci in tests/interop/node")
    assert node is not None
    return FormatSql(node)
