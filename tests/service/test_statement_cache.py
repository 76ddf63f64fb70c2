"""The engine's compiled-statement cache stays bounded whatever filters arrive.

Numeric `in` lists compile to one bound parameter per value, and each length is its own
statement shape: an attack of large lists of changing lengths filled SQLAlchemy's LRU of 500
entries with megabytes each. The cache is bounded by bound parameters too.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import select

from audiencefilter import parse
from audiencefilter.service.db import migrate
from audiencefilter.service.db.engine import make_engine
from audiencefilter.service.db.models import Contact
from audiencefilter.service.db.statement_cache import MAX_PARAMETERS, MAX_SINGLE, StatementCache

from .conftest import sqlite_settings


def test_distinct_large_filters_never_grow_the_cache_past_its_bound(tmp_path: Path) -> None:
    engine = make_engine(sqlite_settings(tmp_path / "cache.db"))
    try:
        migrate.upgrade(engine)
        cache = engine._execution_options["compiled_cache"]
        assert isinstance(cache, StatementCache)
        migrations = len(cache)  # the migrations' own small statements
        with engine.connect() as connection:
            for length in range(1_000, 1_060):
                where = parse({"points": {"in": list(range(length))}}).to_sqlalchemy(Contact)
                connection.execute(select(Contact.id).where(where)).all()
                assert cache.parameters <= MAX_PARAMETERS
            # a statement over the single-entry bound is compiled, run, and not kept
            before = len(cache)
            big = parse({"points": {"in": list(range(MAX_SINGLE + 1))}}).to_sqlalchemy(Contact)
            connection.execute(select(Contact.id).where(big)).all()
            assert len(cache) == before
            # small statements are kept, and hit
            small = parse({"points": {"equals": 1}}).to_sqlalchemy(Contact)
            connection.execute(select(Contact.id).where(small)).all()
            assert len(cache) == before + 1
        assert MAX_PARAMETERS // 1_000 >= len(cache) - migrations - 1
    finally:
        engine.dispose()


def test_the_cache_evicts_least_recently_used_entries_by_weight() -> None:
    class Compiled:
        def __init__(self, binds: int) -> None:
            self.binds = {f"p{i}": i for i in range(binds)}

    cache = StatementCache(max_entries=10, max_parameters=100, max_single=60)
    cache["a"] = Compiled(40)
    cache["b"] = Compiled(40)
    assert cache.get("a") is not None  # a is now the most recent
    cache["c"] = Compiled(40)  # 123 > 100: b, the least recent, goes
    assert cache.get("b") is None and cache.get("a") is not None and cache.get("c") is not None
    cache["d"] = Compiled(61)  # alone over max_single: never kept
    assert cache.get("d") is None and cache.parameters == 82
    for name in "efghijklmn":
        cache[name] = Compiled(0)
    assert len(cache) == 10
