"""`make serve` (the `demo` command) prints, before it serves, the addresses a newcomer
wants first: the API docs, the audience builder (`/builder`) and the sign-up form
(`/signup`), each under the address it serves on; on SQLite and PostgreSQL alike."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.commands import demo

from .conftest import settings_on


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)])
def banner(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> str:
    served: list[tuple[str, int]] = []

    def serve(_settings: Any, *, host: str, port: int) -> None:
        served.append((host, port))

    monkeypatch.setattr(demo, "serve", serve)
    monkeypatch.setattr(demo, "check_address", lambda host, port: None)
    demo.run_demo(settings_on(request, tmp_path / "demo.db"), host="127.0.0.1", port=8123)
    assert served == [("127.0.0.1", 8123)]
    return capsys.readouterr().out


def test_the_banner_names_the_builder_and_the_signup_form(banner: str) -> None:
    lines = banner.splitlines()
    for page in ("/docs", "/builder", "/signup"):
        assert any(line.rstrip().endswith(f"http://127.0.0.1:8123{page}") for line in lines), page
    builder = next(line for line in lines if line.rstrip().endswith("/builder"))
    signup = next(line for line in lines if line.rstrip().endswith("/signup"))
    assert "private key" in builder and "public key" in signup
