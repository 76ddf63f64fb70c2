"""Fixtures of the interop tests: react-querybuilder's SQL export, run once per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.interop.node_runner import FormatSql, start


@pytest.fixture(scope="session")
def format_sql() -> Iterator[FormatSql]:
    runner = start()
    yield runner
    runner.close()
