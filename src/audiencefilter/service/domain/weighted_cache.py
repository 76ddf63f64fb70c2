"""A least-recently-used cache bounded by entries and by the total weight of what it holds.

The stored-filter caches of `audience_filters` held 1,024 filters by count. Filters are not
alike: one with a 5,000-value `in` list is most of a megabyte once parsed, lowered and compiled,
and an account can store two such filters per list in as many lists as it likes, then read
them. A bound by count alone let the caches reach near a gigabyte. Each entry here carries a
weight (for a filter, its conditions and array values, the measures of `filter_budget`), and
the least recently used entries go while the total exceeds `max_weight`; an entry heavier than
the whole bound is made and returned but never kept.

Values are made outside the lock (making one may take milliseconds); two threads missing the
same key at once both make it, and the second store wins, which is harmless for pure values.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class WeightedCache(Generic[V]):
    """An LRU of values keyed by hashables, bounded by entries and by the sum of weights."""

    def __init__(self, max_entries: int, max_weight: int) -> None:
        self.max_entries = max_entries
        self.max_weight = max_weight
        self._entries: OrderedDict[Hashable, tuple[V, int]] = OrderedDict()
        self._weight = 0
        self._lock = threading.Lock()

    def get(self, key: Hashable, make: Callable[[], V], weigh: Callable[[V], int]) -> V:
        """The value of `key`, made by `make` (and weighed by `weigh`) when not held."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found[0]
        value = make()
        weight = max(1, weigh(value))
        if weight > self.max_weight:
            return value
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self._weight -= previous[1]
            self._entries[key] = (value, weight)
            self._weight += weight
            while len(self._entries) > self.max_entries or self._weight > self.max_weight:
                _, (_, dropped) = self._entries.popitem(last=False)
                self._weight -= dropped
        return value

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._weight = 0

    def __len__(self) -> int:
        return len(self._entries)

    @property
    def weight(self) -> int:
        """The total weight held now; never above `max_weight`."""
        return self._weight
