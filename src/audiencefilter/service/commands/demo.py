"""`demo`: everything needed to try the service in one command (what `make serve` runs).

It first makes sure the address can be listened on: a busy port fails before anything is written
or printed, so no keys are made for a server that never starts. Then it migrates the database,
makes sure a `demo` account exists, replaces its keys with a fresh private and public key (printed
once: only digests are stored, so a second run cannot show the old ones; the old ones are deleted,
so every run leaves exactly the two it printed), seeds a demo list with a few contacts the first
time, and serves.

The demo account is on the `pro` plan: one person exploring the API from the terminal and the
`/docs` page should not meet the free plan's 100 requests a minute, which exists to protect a
shared service from one tenant; the plan's limit still applies and is shown in the headers.
"""

from __future__ import annotations

import errno
import secrets
import socket

from ..db import migrate
from ..db.engine import Database
from ..db.models import List
from ..domain.use_cases import contacts, keys, lists
from ..domain.use_cases.unit import in_transaction
from ..settings import Plan, Settings
from .errors import CommandError
from .server import serve

DEMO_ACCOUNT = "demo"
DEMO_PLAN: Plan = "pro"
DEMO_CONTACTS = (
    ("ada@example.com", "Ada", "Lovelace", 120, True, "London"),
    ("grace@example.com", "Grace", "Hopper", 95, True, "New York"),
    ("alan@example.com", "Alan", "Turing", 80, False, "Manchester"),
    ("edsger@example.com", "Edsger", "Dijkstra", 40, True, "Eindhoven"),
    ("barbara@example.com", "Barbara", "Liskov", 40, False, "Boston"),
)


def _seed(database: Database, settings: Settings, account_id: str) -> List:
    """The demo list (the account's first), created with its contacts on the first run."""
    found = lists.oldest(database, account_id)
    if found is not None:
        return found
    values = {"name": "Demo waitlist", "url": f"demo-{secrets.token_hex(3)}"}
    values.update(title="Join the demo waitlist", color="#3355ff")
    lst = lists.create(account_id, values, in_transaction(database))
    for email, first, last, points, verified, city in DEMO_CONTACTS:
        contact = {"email": email, "firstName": first, "lastName": last, "points": points}
        contact.update(isVerified=verified, city=city)
        contacts.create(settings, account_id, lst.id, contact, in_transaction(database))
    return lst


def check_address(host: str, port: int) -> None:
    """Fail now, with what to do, when nothing could listen on `host:port`.

    The probe binds as uvicorn does (SO_REUSEADDR, so a port in TIME_WAIT is free) and lets go at
    once; a server that takes the port in between still fails in uvicorn, but no longer the
    common case of a demo already running.

    Raises:
        CommandError: the port is in use, or the address is not one of this machine's.
    """
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except socket.gaierror as exc:
        raise CommandError(f"cannot listen on {host}: {exc.strerror}; set HOST=127.0.0.1") from None
    family, kind, proto, _, address = infos[0]
    with socket.socket(family, kind, proto) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind(address)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise CommandError(
                    f"port {port} on {host} is already in use (is a demo already running?); "
                    f"stop it, or choose another port: make serve PORT={port + 1}"
                ) from None
            raise CommandError(f"cannot listen on {host}:{port}: {exc.strerror}") from None


def run_demo(settings: Settings, *, host: str, port: int, seed: bool = True) -> None:
    check_address(host, port)
    database = Database.from_settings(settings)
    try:
        migrate.upgrade(database.engine)
        # Earlier runs' keys are revoked: only this run's remain.
        private, public = keys.replace_all(database, DEMO_ACCOUNT, DEMO_PLAN)
        private_key, public_key = private.plaintext, public.plaintext
        lst = _seed(database, settings, private.account.id) if seed else None
    finally:
        database.dispose()
    base = f"http://{host}:{port}"
    print(f"Demo account '{DEMO_ACCOUNT}' (plan {DEMO_PLAN}) on {settings.database_url}")
    print(f"  private key: {private_key}")
    print(f"  public key:  {public_key}")
    print("  (shown once: only their digests are stored; the keys of earlier runs are revoked)")
    if lst is not None:
        print(f"  demo list:   {lst.id} ({lst.name})")
        print(f'\n  curl -H "apiKey: {private_key}" "{base}/v4/contacts?listId={lst.id}&limit=3"')
    print(f"\n  API docs: {base}/docs")
    # The two pages a newcomer wants first, which nothing else in the terminal names.
    print(f"  audience builder (paste the private key): {base}/builder")
    print(f"  sign-up form (paste the public key):      {base}/signup\n", flush=True)
    serve(settings, host=host, port=port)
