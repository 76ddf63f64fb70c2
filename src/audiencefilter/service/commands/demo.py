"""`demo`: everything needed to try the service in one command (what `make serve` runs).

It migrates the database, makes sure a `demo` account exists, gives it a fresh private and public
key (printed once: only digests are stored, so a second run cannot show the old ones and makes new
ones instead), seeds a demo list with a few contacts the first time, and then serves.
"""

from __future__ import annotations

import secrets

from sqlalchemy import select

from ..db import migrate
from ..db.engine import Database
from ..db.models import Contact, List
from ..domain import accounts
from ..settings import Settings
from .server import serve

DEMO_ACCOUNT = "demo"
DEMO_CONTACTS = (
    ("ada@example.com", "Ada", "Lovelace", 120, True, "London"),
    ("grace@example.com", "Grace", "Hopper", 95, True, "New York"),
    ("alan@example.com", "Alan", "Turing", 80, False, "Manchester"),
    ("edsger@example.com", "Edsger", "Dijkstra", 40, True, "Eindhoven"),
    ("barbara@example.com", "Barbara", "Liskov", 40, False, "Boston"),
)


def _seed(database: Database, account_id: str) -> List:
    with database.transaction() as session:
        found = session.scalars(
            select(List).where(List.accountId == account_id).order_by(List.createdAt)
        ).first()
        if found is not None:
            return found
        lst = List(
            accountId=account_id,
            name="Demo waitlist",
            url=f"demo-{secrets.token_hex(3)}",
            title="Join the demo waitlist",
            color="#3355ff",
        )
        session.add(lst)
        session.flush()
        for email, first, last, points, verified, city in DEMO_CONTACTS:
            session.add(
                Contact(
                    listId=lst.id,
                    email=email,
                    emailKey=email.lower(),
                    firstName=first,
                    lastName=last,
                    points=points,
                    isVerified=verified,
                    city=city,
                )
            )
        return lst


def run_demo(settings: Settings, *, host: str, port: int, seed: bool = True) -> None:
    database = Database.from_settings(settings)
    try:
        migrate.upgrade(database.engine)
        with database.transaction() as session:
            account = accounts.ensure_account(session, DEMO_ACCOUNT)
            _, private_key = accounts.issue_key(session, account, "private")
            _, public_key = accounts.issue_key(session, account, "public")
            account_id = account.id
        lst = _seed(database, account_id) if seed else None
    finally:
        database.dispose()
    base = f"http://{host}:{port}"
    print(f"Demo account '{DEMO_ACCOUNT}' on {settings.database_url}")
    print(f"  private key: {private_key}")
    print(f"  public key:  {public_key}")
    print("  (shown once: only their digests are stored)")
    if lst is not None:
        print(f"  demo list:   {lst.id} ({lst.name})")
        print(f'\n  curl -H "apiKey: {private_key}" "{base}/v4/contacts?listId={lst.id}&limit=3"')
    print(f"\n  API docs: {base}/docs\n", flush=True)
    serve(settings, host=host, port=port)
