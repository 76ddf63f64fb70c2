"""Browser origins allowed to create contacts: the field type, and the set a preflight consults.

Origins are stored as browsers send them (lower case, no default port), so a plain string
comparison with the `Origin` header decides; the field's pattern admits exactly what the
validator accepts, so the published schema does not promise more than the service takes.

A preflight carries neither a key nor a body, so it cannot name its list: it is allowed when the
origin is allowed on any list, and the real request is then checked against its own list. That
set is read from the database at most every `REFRESH_SECONDS` per process, and at once after
the list routes say a list was written (`lists_changed`; other processes see the change within
the interval). Each directory compares its generation with the module's, so one call
invalidates every directory of the process; nothing listens to the sessions of the process.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable
from typing import Annotated

from anyio import to_thread
from pydantic import AfterValidator, StringConstraints
from sqlalchemy import String, cast, select

from ..db.engine import Database
from ..db.models import List

MAX_ORIGINS = 50
REFRESH_SECONDS = 5.0
ANY_ORIGIN = "*"
DEFAULT_PORTS = {"http": "80", "https": "443"}

_LABEL = r"[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_PORT = r"(?:6553[0-5]|655[0-2][0-9]|65[0-4][0-9]{2}|6[0-4][0-9]{3}|[1-5][0-9]{4}|[1-9][0-9]{0,3})"
ORIGIN_PATTERN = (
    rf"^[Hh][Tt][Tt][Pp][Ss]?://(?:{_LABEL}(?:\.{_LABEL})*|\[[0-9A-Fa-f:.]+\])(?::{_PORT})?$"
)


def normalise_origin(value: str) -> str:
    """The form a browser sends: lower case, without the scheme's default port."""
    scheme, _, authority = value.lower().partition("://")
    host, port = authority, ""
    if authority.startswith("["):
        end = authority.index("]") + 1
        host, port = authority[:end], authority[end + 1 :]
    elif ":" in authority:
        host, _, port = authority.partition(":")
    if port and port != DEFAULT_PORTS.get(scheme):
        return f"{scheme}://{host}:{port}"
    return f"{scheme}://{host}"


Origin = Annotated[
    str,
    StringConstraints(max_length=255, pattern=ORIGIN_PATTERN),
    AfterValidator(normalise_origin),
]


def unique_origins(origins: list[str]) -> list[str]:
    """The origins in their order, each once (two spellings may normalise alike)."""
    return list(dict.fromkeys(origins))


_generation = 0


def lists_changed() -> None:
    """A list was created, changed or deleted (and committed): read the origins again."""
    global _generation
    _generation += 1


def generation() -> int:
    """How many times lists were said to change in this process (for tests and logs)."""
    return _generation


class OriginDirectory:
    """The origins allowed everywhere (settings), and the union of every list's origins."""

    def __init__(self, database: Database, global_origins: Iterable[str]) -> None:
        self._database = database
        configured = list(global_origins)
        self.any_origin = ANY_ORIGIN in configured
        self.global_origins = frozenset(
            normalise_origin(origin) for origin in configured if origin != ANY_ORIGIN
        )
        self._lock = threading.Lock()
        self._known: frozenset[str] = frozenset()
        self._read_at = float("-inf")
        self._generation = -1

    def allowed_globally(self, origin: str) -> bool:
        return self.any_origin or origin in self.global_origins

    def allowed_for(self, origin: str, list_origins: Iterable[str]) -> bool:
        """Whether `origin` may create contacts in a list allowing `list_origins`."""
        return self.allowed_globally(origin) or origin in list_origins

    def allowed_anywhere(self, origin: str) -> bool:
        """Whether any list, or the settings, allow `origin`: the preflight's question.

        Answered from the last read; `refresh` first keeps that read recent.
        """
        return self.allowed_globally(origin) or origin in self._known

    async def refresh(self) -> None:
        """Read the lists' origins again when the last read is old or a list was written."""
        if self._stale():
            await to_thread.run_sync(self._refresh)

    def _stale(self) -> bool:
        expired = time.monotonic() - self._read_at >= REFRESH_SECONDS
        return expired or self._generation != _generation

    def _refresh(self) -> None:
        with self._lock:
            if not self._stale():
                return  # another thread read it meanwhile
            generation = _generation
            statement = select(List.allowedOrigins).where(cast(List.allowedOrigins, String) != "[]")
            with self._database.reading() as session:
                rows = session.scalars(statement).all()
            self._known = frozenset(origin for origins in rows for origin in origins)
            self._read_at = time.monotonic()
            self._generation = generation
