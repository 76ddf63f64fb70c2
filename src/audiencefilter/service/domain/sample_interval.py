"""The size of a filter on a list, estimated from a uniform random sample of its contacts.

The sample is drawn without replacement from a finite list, so the number of matches in it is
hypergeometric. The 95 % interval is Wilson's score interval for a proportion with the finite
population correction applied to its variance (z² scaled by (N - n) / (N - 1)): Wilson's keeps
its coverage near the nominal level for proportions close to 0 or 1, where the normal
approximation's interval collapses to a point, and the correction narrows the interval to
nothing as the sample grows to the whole list. Wilson's still falls short when the sample holds
only a handful of matches (or of non-matches): 3 matches of a 2,000-contact sample when the
list holds 5 in 100,000 put its lower bound above the truth one time in ten. With at most
`FEW` of either, the bounds are Clopper and Pearson's exact binomial ones instead, which cover
at least 95 % whatever the share (the binomial is wider than the hypergeometric, so they err
on the safe side). The bounds are scaled to the list's size and clipped to what the sample
proves: at least the matches seen, at most the list less the non-matches seen.

`tests/service/test_audience_estimates.py` checks the coverage by simulation.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

Z_95 = 1.959963984540054
"""The standard normal's 97.5th percentile: a two-sided 95 % interval."""
TAIL = 0.025
FEW = 10
"""Up to this many matches (or non-matches) in the sample, the exact bounds are used."""


@dataclass(frozen=True)
class SizeEstimate:
    """An estimated number of contacts and its 95 % interval (`low` and `high` included)."""

    estimate: int
    low: int
    high: int
    matches: int
    sampled: int
    population: int

    @property
    def exact(self) -> bool:
        """Whether the sample is the whole list, so the estimate is the count itself."""
        return self.sampled >= self.population


def estimate_size(matches: int, sampled: int, population: int) -> SizeEstimate:
    """The estimate of how many of `population` contacts match, from `matches` of `sampled`
    drawn uniformly without replacement."""
    population = max(population, sampled)
    if sampled == 0 or sampled >= population:
        return SizeEstimate(matches, matches, matches, matches, sampled, population)
    share = matches / sampled
    if min(matches, sampled - matches) <= FEW:
        low, high = _clopper_pearson(matches, sampled)
    else:
        low, high = _wilson(share, sampled, Z_95**2 * (population - sampled) / (population - 1))
    return SizeEstimate(
        estimate=round(share * population),
        low=max(matches, math.floor(low * population)),
        high=min(population - (sampled - matches), math.ceil(high * population)),
        matches=matches,
        sampled=sampled,
        population=population,
    )


def _wilson(share: float, sampled: int, z2: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion, for z² = `z2` (already corrected)."""
    scale = 1 + z2 / sampled
    centre = (share + z2 / (2 * sampled)) / scale
    spread = math.sqrt(z2 * (share * (1 - share) / sampled + z2 / (4 * sampled * sampled)))
    return max(0.0, centre - spread / scale), min(1.0, centre + spread / scale)


def _clopper_pearson(matches: int, sampled: int) -> tuple[float, float]:
    """The exact binomial bounds, for few matches or few non-matches (by symmetry)."""
    if matches > sampled - matches:
        low, high = _clopper_pearson(sampled - matches, sampled)
        return 1 - high, 1 - low
    low = 0.0 if matches == 0 else _solve(lambda p: _below(matches, sampled, p) - (1 - TAIL))
    high = _solve(lambda p: _below(matches + 1, sampled, p) - TAIL)
    return low, high


def _below(count: int, sampled: int, share: float) -> float:
    """P(X < count) for X binomial(sampled, share), summed over the few terms below `count`."""
    logs = (
        math.lgamma(sampled + 1)
        - math.lgamma(i + 1)
        - math.lgamma(sampled - i + 1)
        + i * math.log(share)
        + (sampled - i) * math.log1p(-share)
        for i in range(count)
    )
    return sum(math.exp(value) for value in logs)


def _solve(decreasing: Callable[[float], float]) -> float:
    """The root in (0, 1) of a function that falls from positive to negative, by bisection."""
    low, high = 0.0, 1.0
    for _ in range(60):
        middle = (low + high) / 2
        if middle in (low, high):
            break
        low, high = (middle, high) if decreasing(middle) > 0 else (low, middle)
    return (low + high) / 2
