"""Without Node or react-querybuilder the interop proof is skipped locally, and fails in CI."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.interop import node_runner


def test_missing_tools_skip_locally(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("AUDIENCEFILTER_REQUIRE_SERVERS", raising=False)
    with pytest.raises(pytest.skip.Exception, match="not installed"):
        node_runner.unavailable("react-querybuilder is not installed")


def test_missing_tools_fail_when_ci_requires_them(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AUDIENCEFILTER_REQUIRE_SERVERS", "1")
    with pytest.raises(pytest.fail.Exception, match="REQUIRE_SERVERS"):
        node_runner.unavailable("react-querybuilder is not installed")


def test_a_missing_package_is_noticed(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setattr(node_runner, "NODE_DIR", tmp_path)
    monkeypatch.setenv("AUDIENCEFILTER_REQUIRE_SERVERS", "1")
    with pytest.raises(pytest.fail.Exception, match="not installed"):
        node_runner.start()
