"""The Standard Webhooks signature (https://www.standardwebhooks.com/).

A secret is `whsec_` and the base64 of 24 random bytes; the key is those bytes. Each attempt
sends `webhook-id` (the delivery's id: the same on every retry, the receiver's key to drop
duplicates), `webhook-timestamp` (Unix seconds of the attempt, so a receiver can refuse old
replays) and `webhook-signature`: `v1,` and the base64 of HMAC-SHA256 over
`{webhook-id}.{webhook-timestamp}.{body}`, one such value per secret that signs, separated by
spaces (two during a rotation's grace period).
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from collections.abc import Iterable

PREFIX = "whsec_"
KEY_BYTES = 24


def new_secret() -> str:
    return PREFIX + base64.b64encode(secrets.token_bytes(KEY_BYTES)).decode()


def key_of(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(PREFIX))


def sign(secret: str, message_id: str, timestamp: int, body: bytes) -> str:
    """One `v1,<base64>` signature of the body under the secret."""
    content = f"{message_id}.{timestamp}.".encode() + body
    digest = hmac.new(key_of(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode()


def headers(
    secrets_: Iterable[str], message_id: str, timestamp: int, body: bytes
) -> dict[str, str]:
    """The three Standard Webhooks headers of one attempt."""
    signature = " ".join(sign(secret, message_id, timestamp, body) for secret in secrets_)
    return {
        "webhook-id": message_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": signature,
    }
