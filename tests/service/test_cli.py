"""The command line through its real entry point, `python -m audiencefilter.service`."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from sqlalchemy import create_engine, inspect

from audiencefilter.service.commands.main import main
from audiencefilter.service.db import migrate
from audiencefilter.service.ground import keys

from .conftest import ApiClient, sqlite_settings
from .live import cli_env, run_cli


def _env(path: Path) -> dict[str, str]:
    return cli_env(AUDIENCEFILTER_DATABASE_URL=f"sqlite:///{path}")


def test_keys_create_list_disable_enable(
    tmp_path: Path, app_factory: Callable[..., ApiClient], capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "cli.db"
    env = _env(database)
    created = run_cli("keys", "create", "--type", "private", "--account", "acme", env=env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    parsed = keys.parse(key)
    assert parsed is not None and parsed.type == "private"

    pro = run_cli(
        "keys", "create", "--type", "public", "--account", "acme", "--plan", "pro",
        "--label", "sign-up form", env=env,
    )  # fmt: skip
    public_key = pro.stdout.strip().splitlines()[-1]
    assert keys.parse(public_key) is not None and public_key != key

    listing = run_cli("keys", "list", env=env)
    assert listing.returncode == 0
    assert key not in listing.stdout and public_key not in listing.stdout
    assert keys.display_prefix(key) in listing.stdout
    assert listing.stdout.count("acme") == 2 and " pro " in listing.stdout
    assert "sign-up form" in listing.stdout

    api = app_factory(sqlite_settings(database))
    assert api.get("/v4/lists", headers={"apiKey": key}).status_code == 200

    disabled = run_cli("keys", "disable", key, env=env)
    assert disabled.returncode == 0, disabled.stderr
    refused = api.get("/v4/lists", headers={"apiKey": key})
    assert (refused.status_code, refused.json()["message"]) == (401, "This API key is disabled")
    # the same entry function in-process, to keep the test quick
    url = f"sqlite:///{database}"
    assert main(["--database-url", url, "keys", "list", "--account", "acme"]) == 0
    assert "disabled" in capsys.readouterr().out

    key_id = next(line.split()[0] for line in listing.stdout.splitlines() if "private" in line)
    assert main(["--database-url", url, "keys", "enable", key_id]) == 0
    assert api.get("/v4/lists", headers={"apiKey": key}).status_code == 200

    assert main(["--database-url", url, "keys", "disable", "key_unknown"]) == 1
    assert "no such key" in capsys.readouterr().err


def test_keys_create_with_past_expiry_warns_and_the_key_is_expired(
    tmp_path: Path, app_factory: Callable[..., ApiClient], capsys: pytest.CaptureFixture[str]
) -> None:
    database = tmp_path / "exp.db"
    done = run_cli(
        "keys", "create", "--type", "private", "--expires-at", "2020-01-01T00:00:00",
        env=_env(database),
    )  # fmt: skip
    assert done.returncode == 0
    assert "in the past" in done.stderr
    key = done.stdout.strip().splitlines()[-1]
    api = app_factory(sqlite_settings(database))
    response = api.get("/v4/lists", headers={"apiKey": key})
    assert (response.status_code, response.json()["message"]) == (401, "This API key has expired")
    url = f"sqlite:///{database}"
    assert (
        main(["--database-url", url, "keys", "create", "--type", "public", "--expires-at", "soon"])
        == 1
    )
    assert "ISO 8601" in capsys.readouterr().err


def test_serve_refuses_several_workers_on_memory_counters(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'w.db'}"
    assert main(["--database-url", url, "serve", "--workers", "2", "--port", "1"]) == 1
    assert "AUDIENCEFILTER_RATE_LIMIT_STORAGE=redis://" in capsys.readouterr().err


@pytest.mark.postgres
def test_migrate_command_on_postgres(pg_database: Callable[[], str]) -> None:
    url = pg_database()
    env = cli_env(AUDIENCEFILTER_DATABASE_URL=url)
    early = run_cli("keys", "create", "--type", "private", env=env)
    assert early.returncode == 1 and "run `migrate` first" in early.stderr
    done = run_cli("migrate", env=env)
    assert done.returncode == 0, done.stderr
    assert f"revision {migrate.head_revision()}" in done.stdout
    engine = create_engine(url)
    try:
        assert "contacts" in inspect(engine).get_table_names()
    finally:
        engine.dispose()
    assert run_cli("keys", "create", "--type", "private", env=env).returncode == 0
