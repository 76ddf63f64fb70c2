"""`keys rotate`: a replacement key at once, the old one alive through the grace period only.

The command runs in-process through `cli.main`, the entry point's own function.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from audiencefilter.service.commands.main import CommandError, main, parse_grace
from audiencefilter.service.ground import keys

from .conftest import ApiClient, sqlite_settings


class Cli:
    """The command line in-process on one database file; each call returns its stdout lines."""

    def __init__(self, path: Path, capsys: pytest.CaptureFixture[str]) -> None:
        self.path, self.capsys = path, capsys
        self.url = f"sqlite:///{path}"

    def __call__(self, *args: str, status: int = 0) -> list[str]:
        assert main(["--database-url", self.url, *args]) == status
        captured = self.capsys.readouterr()
        return (captured.out if status == 0 else captured.err).strip().splitlines()

    def create(self, key_type: str = "public", *extra: str) -> str:
        return self("keys", "create", "--type", key_type, "--account", "shop", *extra)[-1]

    def key_line(self, key: str) -> str:
        prefix = keys.display_prefix(key)
        return next(line for line in self("keys", "list") if f"{prefix}..." in line)


@pytest.fixture
def cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Cli:
    return Cli(tmp_path / "rotate.db", capsys)


def _expiry(line: str) -> datetime:
    return datetime.fromisoformat(line.rsplit(" ", 1)[-1])


def test_rotate_gives_a_new_key_and_keeps_the_old_one_for_the_grace(
    cli: Cli, app_factory: Callable[..., ApiClient]
) -> None:
    old = cli.create("public")
    lines = cli("keys", "rotate", old, "--grace", "24h")
    new = lines[-1]
    parsed = keys.parse(new)
    assert parsed is not None and parsed.type == "public" and new != old
    assert "replaces it, shown once" in lines[-2]
    assert old not in "\n".join(lines[:-1])
    expires = _expiry(lines[0])
    expected = datetime.now(UTC) + timedelta(hours=24)
    assert abs(expires - expected) < timedelta(minutes=1)
    assert "expires" in cli.key_line(old)
    assert abs(_expiry(cli.key_line(old)) - expected) < timedelta(minutes=1)
    assert "expire" not in cli.key_line(new)

    api = app_factory(sqlite_settings(cli.path))
    private = cli.create("private")
    lst = api.post("/v4/lists", headers={"apiKey": private}, json={"name": "Shop"}).json()
    body = {"email": "a@example.com", "listId": lst["data"]["list"]["id"]}
    # both keys work, for the same account
    assert api.post("/v4/contacts", headers={"apiKey": old}, json=body).status_code == 201
    body["email"] = "b@example.com"
    assert api.post("/v4/contacts", headers={"apiKey": new}, json=body).status_code == 201


def test_rotate_with_no_grace_ends_the_old_key_now(
    cli: Cli, app_factory: Callable[..., ApiClient]
) -> None:
    old = cli.create("private")
    new = cli("keys", "rotate", old, "--grace", "0")[-1]
    api = app_factory(sqlite_settings(cli.path))
    refused = api.get("/v4/lists", headers={"apiKey": old})
    assert (refused.status_code, refused.json()["message"]) == (401, "This API key has expired")
    assert api.get("/v4/lists", headers={"apiKey": new}).status_code == 200
    assert "expired" in cli.key_line(old)


def test_rotate_never_extends_a_sooner_expiry(cli: Cli) -> None:
    soon = (datetime.now(UTC) + timedelta(hours=1)).replace(microsecond=0)
    old = cli.create("private", "--expires-at", soon.isoformat())
    lines = cli("keys", "rotate", old, "--grace", "7d")
    assert _expiry(lines[0]) == soon
    assert _expiry(cli.key_line(old)) == soon
    # by id too; a shorter grace does bring it forward
    key_id = cli.key_line(old).split()[0]
    assert _expiry(cli("keys", "rotate", key_id, "--grace", "30m")[0]) < soon


def test_rotate_refuses_unknown_keys_and_bad_durations(cli: Cli) -> None:
    cli.create("private")
    assert "no such key: key_nope" in cli("keys", "rotate", "key_nope", status=1)[-1]
    message = cli("keys", "rotate", "key_nope", "--grace", "1 day", status=1)[-1]
    assert "--grace: expected a duration like 30m, 24h or 7d (or 0)" in message


@pytest.mark.parametrize(
    ("text", "expected"),
    [("0", timedelta(0)), ("90s", timedelta(seconds=90)), ("30m", timedelta(minutes=30)),
     ("24h", timedelta(hours=24)), ("7d", timedelta(days=7))],
)  # fmt: skip
def test_parse_grace(text: str, expected: timedelta) -> None:
    assert parse_grace(text) == expected


@pytest.mark.parametrize("text", ["", "24", "h", "-1h", "1.5h", "24 h", "1w"])
def test_parse_grace_refuses(text: str) -> None:
    with pytest.raises(CommandError):
        parse_grace(text)
