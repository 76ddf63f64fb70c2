"""Command line: `serve`, `demo`, `worker`, `migrate`, `revision`,
`keys create|list|rotate|disable|enable`.

Settings come from the `AUDIENCEFILTER_*` environment, like the server's; `--database-url`
overrides the database. The embedded SQLite database is migrated by every command that needs it;
other databases must be migrated with `migrate` first. `keys create` and `keys rotate` print the
new key alone on the last line of standard output, so scripts can take it with `tail -n 1`.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from sqlalchemy import inspect

from ..db import migrate
from ..db.engine import Database
from ..domain import accounts
from ..domain.use_cases import keys
from ..settings import PLANS, Settings
from .errors import CommandError


def _settings(args: argparse.Namespace) -> Settings:
    if getattr(args, "database_url", None):
        return Settings(database_url=args.database_url)
    return Settings()


def _database(settings: Settings) -> Database:
    database = Database.from_settings(settings)
    if settings.should_auto_migrate:
        migrate.upgrade(database.engine)
    elif not inspect(database.engine).has_table("api_keys"):
        raise CommandError("the database has no tables yet: run `migrate` first")
    return database


def _parse_expiry(text: str | None) -> datetime | None:
    if text is None:
        return None
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CommandError(f"--expires-at: not an ISO 8601 date-time: {text!r}") from None
    moment = moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    if moment <= datetime.now(UTC):
        print(f"warning: --expires-at {text} is in the past; the key is expired", file=sys.stderr)
    return moment.astimezone(UTC)


GRACE_UNITS = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}


def parse_grace(text: str) -> timedelta:
    """`30m`, `24h`, `7d`, `90s`; a bare `0` ends the old key at once."""
    if text.strip() == "0":
        return timedelta(0)
    match = re.fullmatch(r"([0-9]{1,6})([smhd])", text.strip())  # ASCII digits only
    if match is None:
        raise CommandError(f"--grace: expected a duration like 30m, 24h or 7d (or 0): {text!r}")
    return timedelta(**{GRACE_UNITS[match[2]]: int(match[1])})


def cmd_keys_create(args: argparse.Namespace) -> None:
    expires_at = _parse_expiry(args.expires_at)
    database = _database(_settings(args))
    label = (args.label or "").strip() or None
    issued = keys.issue(database, args.account, args.plan, args.type, expires_at, label)
    account, row = issued.account, issued.key
    print(f"account {account.name} ({account.id}, plan {account.plan})")
    print(f"{row.type} key {row.id}, shown once; store it now:")
    print(issued.plaintext)


def cmd_keys_list(args: argparse.Namespace) -> None:
    database = _database(_settings(args))
    now = datetime.now(UTC)
    rows = keys.listing(database, args.account)
    print(f"{'id':<26} {'account':<20} {'plan':<5} {'type':<8} {'prefix':<16} {'label':<20} status")
    for key, account in rows:
        expires = (
            key.expiresAt.replace(tzinfo=key.expiresAt.tzinfo or UTC) if key.expiresAt else None
        )
        status = "disabled" if key.disabled else "enabled"
        if expires is not None:
            status += f", expire{'d' if expires <= now else 's'} {expires.isoformat()}"
        print(
            f"{key.id:<26} {account.name:<20} {account.plan:<5} {key.type:<8} "
            f"{key.prefix + '...':<16} {key.label or '-':<20} {status}"
        )


def cmd_keys_rotate(args: argparse.Namespace) -> None:
    grace = parse_grace(args.grace)
    database = _database(_settings(args))
    try:
        rotation = keys.rotate(database, args.key, grace)
    except accounts.RotationRefused as exc:
        raise CommandError(str(exc)) from None
    if rotation is None:
        raise CommandError(f"no such key: {args.key}")
    old, new, account = rotation.old, rotation.new, rotation.account
    print(f"key {old.id} ({old.prefix}...) expires {rotation.old_expires_at.isoformat()}")
    print(f"account {account.name} ({account.id}, plan {account.plan})")
    print(f"{new.type} key {new.id} replaces it, shown once; store it now:")
    print(rotation.plaintext)


def _set_disabled(args: argparse.Namespace, disabled: bool) -> None:
    database = _database(_settings(args))
    key = keys.set_disabled(database, args.key, disabled)
    if key is None:
        raise CommandError(f"no such key: {args.key}")
    print(f"key {key.id} ({key.prefix}...) {'disabled' if disabled else 'enabled'}")


def cmd_migrate(args: argparse.Namespace) -> None:
    database = Database.from_settings(_settings(args))
    try:
        migrate.upgrade(database.engine, args.revision)
        print(f"database at revision {migrate.current_revision(database.engine)}")
    finally:
        database.dispose()


def cmd_sweep(args: argparse.Namespace) -> None:
    from ..domain.use_cases.membership_clock import run_due, sweep

    settings = _settings(args)
    database = _database(settings)
    try:
        written = sweep(database) if args.all else run_due(database, settings.audience_build_chunk)
        print(f"{written} membership events written")
    finally:
        database.dispose()


def cmd_revision(args: argparse.Namespace) -> None:
    database = Database.from_settings(_settings(args))
    migrate.new_revision(database.engine, args.message)


def cmd_serve(args: argparse.Namespace) -> None:
    from .server import serve

    serve(
        _settings(args),
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=not args.no_access_log,
    )


def cmd_worker(args: argparse.Namespace) -> None:
    from .worker import run_worker

    settings = _settings(args)
    run_worker(settings, _database(settings))


def cmd_demo(args: argparse.Namespace) -> None:
    from .demo import run_demo

    run_demo(_settings(args), host=args.host, port=args.port, seed=not args.no_seed)


def _server_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=8000)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="audiencefilter-service", description=__doc__)
    parser.add_argument("--database-url", help="overrides AUDIENCEFILTER_DATABASE_URL")
    commands = parser.add_subparsers(dest="command", required=True)

    serve = commands.add_parser("serve", help="run the HTTP service")
    _server_options(serve)
    serve.add_argument("--workers", type=int, default=1)
    serve.add_argument("--no-access-log", action="store_true", help="no request log lines")
    serve.set_defaults(handler=cmd_serve)

    demo = commands.add_parser("demo", help="create a demo account, keys and list, then serve")
    _server_options(demo)
    demo.add_argument("--no-seed", action="store_true", help="no demo list and contacts")
    demo.set_defaults(handler=cmd_demo)

    worker = commands.add_parser("worker", help="deliver webhooks until SIGINT or SIGTERM")
    worker.set_defaults(handler=cmd_worker)

    migrate_cmd = commands.add_parser("migrate", help="upgrade the database schema")
    migrate_cmd.add_argument("--revision", default="head")
    migrate_cmd.set_defaults(handler=cmd_migrate)

    sweep_cmd = commands.add_parser(
        "sweep", help="bring what time has moved in audiences up to the clock, once"
    )
    sweep_cmd.add_argument(
        "--all",
        action="store_true",
        help="evaluate every audience with relative dates, not only what is due (a repair)",
    )
    sweep_cmd.set_defaults(handler=cmd_sweep)

    revision = commands.add_parser("revision", help="write a new migration from model changes")
    revision.add_argument("-m", "--message", required=True)
    revision.set_defaults(handler=cmd_revision)

    keys_cmd = commands.add_parser("keys", help="manage API keys")
    key_commands = keys_cmd.add_subparsers(dest="keys_command", required=True)
    create = key_commands.add_parser("create", help="create a key (printed once)")
    create.add_argument("--type", choices=["private", "public"], required=True)
    create.add_argument("--account", default="default")
    create.add_argument("--plan", choices=PLANS)
    create.add_argument("--expires-at", help="ISO 8601; naive times are UTC")
    create.add_argument(
        "--label", help="what the key is for (crm-sync); shown in audience histories"
    )
    create.set_defaults(handler=cmd_keys_create)
    listing = key_commands.add_parser("list", help="list keys (prefixes only)")
    listing.add_argument("--account")
    listing.set_defaults(handler=cmd_keys_list)
    rotate = key_commands.add_parser(
        "rotate", help="create a replacement key; the old one expires after a grace period"
    )
    rotate.add_argument("key", help="the key id (from `keys list`) or the whole key")
    rotate.add_argument(
        "--grace", default="24h", help="how long the old key keeps working: 30m, 24h, 7d, 0"
    )
    rotate.set_defaults(handler=cmd_keys_rotate)
    for name, disabled in (("disable", True), ("enable", False)):
        toggle = key_commands.add_parser(name, help=f"{name} a key (by id or whole key)")
        toggle.add_argument("key")
        toggle.set_defaults(handler=lambda args, flag=disabled: _set_disabled(args, flag))
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        args.handler(args)
    except CommandError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
