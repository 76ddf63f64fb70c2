"""The compiled-statement cache of the engine, bounded by entries and by bound parameters.

SQLAlchemy keeps each distinct statement shape compiled, in an LRU of `query_cache_size`
entries (500). Entries are not alike: a filter with a 5,000-value numeric `in` compiles to a
statement of 5,000 parameters, a few megabytes once compiled, and every length is its own shape.
An attack of large filters whose lengths change from one request to the next filled the LRU with
such entries: 250 MB to 1.3 GB in a dozen requests, kept for good. Counting entries cannot bound
that; counting what makes them large can. This cache evicts the least recently used entries while
the bound parameters of all entries exceed `max_parameters`, and keeps no statement that alone
exceeds `max_single`: those are compiled on every use, which costs little next to running them.

SQLAlchemy calls only `get` and `__setitem__`, from any thread: a lock guards both.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from typing import Any

MAX_ENTRIES = 500
MAX_PARAMETERS = 20_000
MAX_SINGLE = 2_000


def _weight(compiled: Any) -> int:
    """One per entry plus one per bound parameter of the compiled statement."""
    return 1 + len(getattr(compiled, "binds", ()) or ())


class StatementCache:
    """An LRU of compiled statements bounded by entries and by total bound parameters."""

    def __init__(
        self,
        max_entries: int = MAX_ENTRIES,
        max_parameters: int = MAX_PARAMETERS,
        max_single: int = MAX_SINGLE,
    ) -> None:
        self.max_entries = max_entries
        self.max_parameters = max_parameters
        self.max_single = max_single
        self._entries: OrderedDict[Any, tuple[Any, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: Any, default: Any = None) -> Any:
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return default
            self._entries.move_to_end(key)
            return found[0]

    def __setitem__(self, key: Any, compiled: Any) -> None:
        weight = _weight(compiled)
        if weight > self.max_single:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            self._entries[key] = (compiled, weight)
            self._weight += weight
            while len(self._entries) > self.max_entries or self._weight > self.max_parameters:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._weight -= dropped

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def parameters(self) -> int:
        """Bound parameters (plus one per entry) held now; never above `max_parameters`."""
        return self._weight
