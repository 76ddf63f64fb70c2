"""Schemathesis hooks for the service's run (loaded through `SCHEMATHESIS_HOOKS`).

Clients are told to send a fresh `Idempotency-Key` per operation, and the same key with another
request is a 422 by design. Generated keys repeat a lot (hypothesis favours short strings such as
`"0"`), which would turn most POSTs into that 422 and keep the run from ever creating anything.
So in valid requests every key gets a unique suffix, and stays valid; negative cases are sent as
generated, so the rejection of invalid keys is still checked. Key reuse itself is the business
of the idempotency tests.

JSON Lines bodies (`application/x-ndjson`, the bulk import's) are sent as the text they are.
"""

from __future__ import annotations

import re
from typing import Any
from uuid import uuid4

import schemathesis

HEADER = "Idempotency-Key"
VALID_KEY = re.compile(r"[\x20-\x7e]{1,255}")
KEPT = 200


@schemathesis.hook
def before_call(
    context: schemathesis.HookContext, case: schemathesis.Case[Any], kwargs: Any
) -> None:
    if case.meta is not None and case.meta.generation.mode.is_negative:
        # Editing a negative case makes schemathesis revalidate it, and a case that left out a
        # required header would then be sent with it.
        return
    headers = case.headers
    key = headers.get(HEADER) if headers else None
    if isinstance(key, str) and VALID_KEY.fullmatch(key):
        assert headers is not None
        headers[HEADER] = f"{key[:KEPT]}.{uuid4().hex}"


# The bulk import also takes JSON Lines, described as a string: sent as the text it is.
schemathesis.serializer.alias("application/x-ndjson", "text/plain")


INT64 = range(-(2**63), 2**63)


def _refused_data(value: Any) -> bool:
    """Whether `value` holds what the service refuses in `data` by design (docs/service-fields.md,
    "Stored values"): NUL in a string or key, or an integer beyond 64 bits. JSON Schema cannot
    say this of a free-form nested object compactly, so valid cases that hold it are skipped."""
    if isinstance(value, str):
        return "\x00" in value
    if isinstance(value, bool) or value is None or isinstance(value, float):
        return False
    if isinstance(value, int):
        return value not in INT64
    if isinstance(value, list):
        return any(_refused_data(item) for item in value)
    if isinstance(value, dict):
        return any("\x00" in key or _refused_data(item) for key, item in value.items())
    return False


@schemathesis.hook
def filter_body(context: schemathesis.HookContext, body: Any) -> bool:
    operation = context.operation
    if operation is not None and operation.path.endswith("/contacts/import"):
        # A JSON Lines body is text whose every line gets its own result, an invalid line
        # included (by design): a body that is not text at all is not a useful case.
        return isinstance(body, str | list)
    if isinstance(body, dict) and _refused_data(body.get("data")):
        return False
    return True
