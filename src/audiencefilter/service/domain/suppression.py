"""Suppression: the e-mails of erased people, which their list no longer takes.

An erasure deletes a person, but the next import of the master file, a sign-up form or a sync
would make them again, with a new id. So erasing a contact also suppresses every e-mail it was
known by in its list, and from then on:

- an import answers `suppressed` for a row with such an e-mail (counted in its summary) and
  writes nothing of it;
- `POST /v4/contacts` with a private key answers 409, naming the way back;
- a sign-up with a public key answers as it does for any e-mail (no oracle of who was erased)
  and creates nothing;
- a `PATCH` that moves a contact to such an e-mail answers 409.

Until an explicit un-suppress (`POST /v4/lists/{listId}/suppressions/remove`), which the
service logs with the account and the key that asked.

What is kept is no address: an HMAC-SHA256 of the e-mail as the list's unique index compares
it (`str.lower()`), keyed by a random key of the list kept in another table. A copy of the
suppressions alone (a backup, a log of the table) names no one, and guessing an address needs
the key. The suppression lives as long as its list (both go with it).
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import secrets
from collections.abc import Iterable

from sqlalchemy import delete, select
from sqlalchemy.orm import Session

from ..db.models import Suppression, SuppressionKey
from ..ground.errors import Conflict

logger = logging.getLogger("audiencefilter.service.suppression")

SUPPRESSED = (
    "This email was erased from the list and is suppressed; to take it again, remove it "
    "from the list's suppressions first (POST /v4/lists/{listId}/suppressions/remove)"
)
"""The 409's message for a private create or an update to a suppressed e-mail."""
CHUNK = 500


def email_key(email: str) -> str:
    """The e-mail as the list's unique index compares it."""
    return email.lower()


def _digest(key: str, email: str) -> str:
    return hmac.new(bytes.fromhex(key), email_key(email).encode(), hashlib.sha256).hexdigest()


def _key(session: Session, list_id: str) -> str | None:
    return session.scalar(select(SuppressionKey.key).where(SuppressionKey.listId == list_id))


def _key_made(session: Session, list_id: str) -> str:
    """The list's key, made now if it has none (under the list's lock: no other writer)."""
    found = _key(session, list_id)
    if found is not None:
        return found
    made = secrets.token_hex(32)
    session.add(SuppressionKey(listId=list_id, key=made))
    session.flush()
    return made


def suppress(session: Session, list_id: str, emails: Iterable[str]) -> int:
    """Suppresses these e-mails in the list (the list's lock held); how many were new."""
    key = _key_made(session, list_id)
    hashes = sorted({_digest(key, email) for email in emails})
    known = _known(session, list_id, hashes)
    for digest in hashes:
        if digest not in known:
            session.add(Suppression(listId=list_id, emailHash=digest))
    session.flush()
    return len(set(hashes) - known)


def _known(session: Session, list_id: str, hashes: list[str]) -> set[str]:
    found: set[str] = set()
    for start in range(0, len(hashes), CHUNK):
        statement = select(Suppression.emailHash).where(
            Suppression.listId == list_id,
            Suppression.emailHash.in_(hashes[start : start + CHUNK]),
        )
        found.update(session.scalars(statement))
    return found


def suppressed(session: Session, list_id: str, emails: Iterable[str]) -> set[str]:
    """The e-mail keys among `emails` the list suppresses (one read of the key, and none of
    the hashes for a list that never erased anyone)."""
    key = _key(session, list_id)
    if key is None:
        return set()
    by_hash = {_digest(key, email): email_key(email) for email in emails}
    return {by_hash[digest] for digest in _known(session, list_id, sorted(by_hash))}


def is_suppressed(session: Session, list_id: str, email: str) -> bool:
    """Whether the list suppresses this e-mail."""
    return bool(suppressed(session, list_id, [email]))


def refuse_suppressed(session: Session, list_id: str, email: str) -> None:
    """A conflict for an e-mail the list suppresses (its person was erased): a contact created
    or changed to it would bring back what the erasure removed."""
    if is_suppressed(session, list_id, email):
        raise Conflict(SUPPRESSED)


def remove(session: Session, list_id: str, email: str, *, asked_by: str) -> bool:
    """Takes the e-mail off the list's suppressions; whether it was on them. Logged with who
    asked (never the address: the log would keep what the erasure removed)."""
    key = _key(session, list_id)
    if key is None:
        return False
    digest = _digest(key, email)
    result = session.execute(
        delete(Suppression).where(Suppression.listId == list_id, Suppression.emailHash == digest)
    )
    removed = bool(getattr(result, "rowcount", 0))
    note = "suppression removed: list %s, hash %s, asked by %s, was suppressed: %s"
    logger.warning(note, list_id, digest[:12], asked_by, removed)
    return removed
