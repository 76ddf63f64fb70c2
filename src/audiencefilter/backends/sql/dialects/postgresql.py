"""PostgreSQL: the base dialect as it is.

Text cannot hold NUL (a value with NUL never matches), backslashes go in `E'...'` strings,
numbers bind as `numeric` (never `float8`, which would round the bigint column too), and JSON
is read as `jsonb`, whose `->` reads object keys only.
"""

from __future__ import annotations

from .base import Dialect


class PostgreSQL(Dialect):
    """The base dialect as it is."""
