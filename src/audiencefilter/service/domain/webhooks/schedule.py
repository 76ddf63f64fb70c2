"""When a failed delivery is tried again: exponential backoff with full jitter.

After the n-th failed attempt of a delivery the next one waits a random time, uniform between
zero and `min(cap, base * 2^(n-1))` (base 5 s and cap 6 h by default): the expected waits double
(2.5 s, 5 s, 10 s, ... 1.4 h, then 3 h on average), and the randomness spreads the retries of
many deliveries that failed together (a receiver that comes back is not hit by all of them at
once). After `max_attempts` (15) the delivery is marked failed; a redelivery starts it again.
"""

from __future__ import annotations

import random
from datetime import timedelta


def backoff(failures: int, base: float, cap: float, rng: random.Random | None = None) -> timedelta:
    """The wait after the `failures`-th failed attempt (1 for the first)."""
    ceiling = min(cap, base * 2.0 ** min(max(failures - 1, 0), 60))
    return timedelta(seconds=(rng or random).uniform(0.0, ceiling))
