"""API keys: how they look, how they are checked, what is stored.

A key is `afk_priv_` or `afk_pub_` (its type), 22 base62 characters of randomness (131 bits) and a
6-character base62 CRC32 checksum of everything before it. The checksum lets the service refuse a
mistyped or made-up key without touching the database, and lets secret scanners recognise keys.
Only a SHA-256 digest (the lookup key) and a short display prefix are stored, so a leaked database
does not leak usable keys. The digest found in the database is compared again with
`hmac.compare_digest`, so no comparison on the secret depends on where the strings first differ.
"""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
import zlib
from dataclasses import dataclass
from typing import Literal

KeyType = Literal["private", "public"]

PREFIXES: dict[KeyType, str] = {"private": "afk_priv_", "public": "afk_pub_"}
ALPHABET = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
RANDOM_LENGTH = 22
CHECKSUM_LENGTH = 6
DISPLAY_LENGTH = 4  # random characters kept in the display prefix
# Anything shaped like a whole key, wherever it turns up in text (checksum not checked).
FULL_KEY = re.compile(r"afk_(?:priv|pub)_[0-9A-Za-z]{28}")


@dataclass(frozen=True)
class ParsedKey:
    """A key whose shape and checksum are right; it may still be unknown to the database."""

    type: KeyType
    digest: str


def _base62(number: int, width: int) -> str:
    chars = []
    for _ in range(width):
        number, rest = divmod(number, 62)
        chars.append(ALPHABET[rest])
    return "".join(reversed(chars))


def _checksum(body: str) -> str:
    return _base62(zlib.crc32(body.encode("ascii")), CHECKSUM_LENGTH)


def digest(key: str) -> str:
    """The SHA-256 hex digest stored for a key."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def generate(key_type: KeyType) -> str:
    """A new random key of the given type."""
    body = PREFIXES[key_type] + "".join(secrets.choice(ALPHABET) for _ in range(RANDOM_LENGTH))
    return body + _checksum(body)


def display_prefix(key: str) -> str:
    """The part of a key that may be shown again later (type prefix and four characters)."""
    for prefix in PREFIXES.values():
        if key.startswith(prefix):
            return key[: len(prefix) + DISPLAY_LENGTH]
    return key[:DISPLAY_LENGTH]


def parse(key: str) -> ParsedKey | None:
    """Check a presented key's shape and checksum; None when it cannot be a key of ours."""
    found = [(kind, prefix) for kind, prefix in PREFIXES.items() if key.startswith(prefix)]
    if not found:
        return None
    key_type, prefix = found[0]
    if len(key) != len(prefix) + RANDOM_LENGTH + CHECKSUM_LENGTH:
        return None
    if not all(char in ALPHABET for char in key[len(prefix) :]):
        return None
    body, checksum = key[:-CHECKSUM_LENGTH], key[-CHECKSUM_LENGTH:]
    if not hmac.compare_digest(_checksum(body), checksum):
        return None
    return ParsedKey(type=key_type, digest=digest(key))


def digests_match(stored: str, presented: str) -> bool:
    """Constant-time comparison of two hex digests."""
    return hmac.compare_digest(stored.encode("ascii"), presented.encode("ascii"))


def redact(text: str) -> str:
    """`text` with every whole key cut down to its display prefix and an ellipsis.

    Applied to log records and error bodies: a client that pastes its key into a URL, a field
    name or a filter must not see it echoed, nor find it in the server's logs.
    """
    return FULL_KEY.sub(lambda match: display_prefix(match.group()) + "…", text)
