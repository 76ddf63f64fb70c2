"""A PostgreSQL server for one benchmark run: the one named by an env variable, or a throw-away
cluster started (and stopped by PID) with the same helpers the test suite uses.

The database uses the ICU `und` locale so that `lower()` folds like Python's `str.lower()`; the
throw-away cluster runs without fsync, since its data is thrown away.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

from tests.servers import ServerFailed, ServerMissing, create_pg_database, start_postgres

URL_VARIABLE = "AUDIENCEFILTER_BENCH_PG_URL"
F = TypeVar("F")


@contextlib.contextmanager
def postgres(settings: Mapping[str, str] | None = None) -> Iterator[tuple[str | None, str]]:
    """Yields `(url, note)`: a libpq URL to use, or None and the reason there is none.
    `settings`: server settings a throw-away cluster starts with (the server at the variable
    is taken as it is)."""
    url = os.environ.get(URL_VARIABLE)
    if url:
        yield url, f"the server at {URL_VARIABLE}"
        return
    try:
        server = start_postgres(settings=settings)
    except (ServerMissing, ServerFailed, OSError) as exc:
        yield None, f"no throw-away PostgreSQL server ({exc}); set {URL_VARIABLE}"
        return
    try:
        database = create_pg_database(server.url).replace("postgresql+psycopg://", "postgresql://")
        yield database, f"a throw-away server (PID {server.pid})"
    finally:
        server.stop()


def measured_list(
    args: Any,
    measure: Callable[[str, Any], F],
    render: Callable[[F, tuple[float, ...]], str],
    settings: Mapping[str, str] | None = None,
) -> F | None:
    """One whole run of a benchmark over a list of `args.contacts` contacts and
    `args.audiences` audiences on a throw-away PostgreSQL: `measure` on its URL, then
    `render`'s table (given the load average before the run) printed; None without a server."""
    with postgres(settings) as (url, note):
        if url is None:
            print(f"PostgreSQL: {note}")
            return None
        print(f"PostgreSQL: {note}; {args.contacts:,} contacts, {args.audiences} audiences")
        before = os.getloadavg()
        figures = measure(url, args)
        print(render(figures, before))
    return figures
