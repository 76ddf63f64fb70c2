"""`synthetic:N`: seeded contacts shaped like a real list, for `audiencefilter bench`.

A filter benchmark is only as honest as its data: uniform values and no nulls would let every
engine skip the work real contacts make it do. So countries and cities are skewed (a few
dominate), points are long-tailed, a tenth of company, country and city are null, emails mix
providers and capitals, `createdAt` spreads over three years, `data` holds a plan and tags
(and is missing for some contacts), and each contact has a long-tailed number of actions with
names and dates after its creation. The same `(n, seed, end)` gives the same contacts on every
machine: everything is drawn from one `random.Random`, and every instant is dated back from
`end`, the instant the contacts are drawn at (`bench` gives its `--now`, default the clock), so
that `createdAt >= 30 days ago` finds recent contacts whenever the benchmark runs.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

PREFIX = "synthetic:"
END = datetime(2026, 1, 1, tzinfo=UTC)
"""The default `end`: every generated instant is before it."""
SPAN_DAYS = 3 * 365

# fmt: off
FIRST_NAMES = ("Ann", "Bob", "Chloé", "David", "Emma", "Farid", "Greta", "Hugo", "Inès",
               "Jonas", "Karin", "Liam", "María", "Noah", "Olivia", "Pierre", "Rosa", "Søren",
               "Wei", "Zoë")
LAST_NAMES = ("Smith", "Müller", "García", "Rossi", "Dubois", "Nowak", "Silva", "Yılmaz",
              "Nguyen", "Tanaka", "OBrien", "Schmidt", "Martin", "López", "Kim", "Brown")
DOMAINS = ("gmail.com", "yahoo.com", "outlook.com", "hotmail.com", "icloud.com", "gmx.de",
           "orange.fr", "acme.io", "example.org", "proton.me")
COUNTRIES = ("US", "GB", "FR", "DE", "ES", "IT", "NL", "BR", "CA", "JP", "IN", "AU", "SE",
             "PL", "MX", "KR", "ZA", "NG", "AR", "CH")
CITIES = ("London", "Paris", "Berlin", "San Francisco", "San Diego", "Santa Rosa", "Madrid",
          "São Paulo", "Tokyo", "New York", "Lyon", "Zürich", "Toronto", "Mumbai", "Oslo")
# fmt: on
COMPANIES = ("Acme", "Globex", "Initech", "Umbrella", "Hooli", "Soylent", "Tyrell", "Wonka")
PLANS = ("free", "pro", "team", "enterprise")
TAGS = ("vip", "beta", "newsletter", "churn-risk", "partner", "trial")
ACTIONS = ("login", "visit", "share", "purchase", "signup", "referral")


def is_synthetic(source: str) -> bool:
    """Whether a `--contacts` source names the generator rather than a file or a database."""
    return source.startswith(PREFIX)


def synthetic_size(source: str) -> int:
    """N of `synthetic:N` (`1000`, `1_000`, `1e6`); ValueError with the form expected."""
    text = source.removeprefix(PREFIX).replace("_", "").replace(",", "")
    try:
        number = float(text) if "e" in text.lower() else int(text)
    except ValueError:
        raise ValueError(
            f"expected synthetic:N with N a number of contacts, not {source!r}"
        ) from None
    if number < 1 or number != int(number):
        raise ValueError(f"expected synthetic:N with N a whole number >= 1, not {source!r}")
    return int(number)


def _weights(count: int, skew: float) -> list[float]:
    """Zipf-like weights: the k-th value is 1/(k+1)**skew as likely as the first."""
    return [1 / (k + 1) ** skew for k in range(count)]


_COUNTRY_WEIGHTS = _weights(len(COUNTRIES), 1.1)
_CITY_WEIGHTS = _weights(len(CITIES), 0.8)
_PLAN_WEIGHTS = (60.0, 25.0, 12.0, 3.0)
_ACTION_WEIGHTS = (40.0, 30.0, 10.0, 8.0, 7.0, 5.0)


def synthetic_contacts(count: int, seed: int = 0, end: datetime = END) -> Iterator[dict[str, Any]]:
    """`count` contacts with ids `c0`, `c1`..., identical for identical `(count, seed, end)`,
    every instant in the three years before `end`."""
    rng = random.Random(seed)
    for index in range(count):
        yield _contact(rng, index, end)


def _contact(rng: random.Random, index: int, end: datetime) -> dict[str, Any]:
    first, last = rng.choice(FIRST_NAMES), rng.choice(LAST_NAMES)
    created = end - timedelta(seconds=rng.randrange(SPAN_DAYS * 86_400))
    return {
        "id": f"c{index}",
        "email": _email(rng, first, last, index),
        "firstName": first,
        "lastName": last,
        "company": _maybe(rng, 0.10, rng.choice(COMPANIES)),
        "country": _maybe(rng, 0.10, rng.choices(COUNTRIES, _COUNTRY_WEIGHTS)[0]),
        "city": _maybe(rng, 0.12, rng.choices(CITIES, _CITY_WEIGHTS)[0]),
        "points": _maybe(rng, 0.03, int(rng.lognormvariate(4.0, 1.5))),
        "referrals": int(rng.expovariate(0.6)),
        "isVerified": _maybe(rng, 0.02, rng.random() < 0.6),
        "unsubscribed": rng.random() < 0.07,
        "createdAt": created,
        "data": _data(rng),
        "actions": _actions(rng, index, created, end),
    }


def _maybe(rng: random.Random, null_rate: float, value: Any) -> Any:
    return None if rng.random() < null_rate else value


def _email(rng: random.Random, first: str, last: str, index: int) -> str:
    """`chloé.garcía17@gmail.com`, one in ten typed in capitals as people do."""
    local = f"{first}.{last}{index % 997}"
    address = f"{local}@{rng.choice(DOMAINS)}"
    return address if rng.random() < 0.1 else address.lower()


def _data(rng: random.Random) -> dict[str, Any] | None:
    """The free-form document: a plan and tags; missing for one contact in eight."""
    if rng.random() < 0.125:
        return None
    document: dict[str, Any] = {"plan": rng.choices(PLANS, _PLAN_WEIGHTS)[0]}
    document["tags"] = rng.sample(TAGS, k=min(len(TAGS), int(rng.expovariate(1.0))))
    if rng.random() < 0.3:
        document["seats"] = rng.randint(1, 50)
    return document


def _actions(
    rng: random.Random, index: int, created: datetime, end: datetime
) -> list[dict[str, Any]]:
    """A long-tailed number of actions (most contacts have a few, some none, a few many), each
    dated between the contact's creation and `end`."""
    count = min(int(rng.paretovariate(1.3)) - 1 + (rng.random() < 0.6), 200)
    span = int((end - created).total_seconds())
    names = rng.choices(ACTIONS, _ACTION_WEIGHTS, k=count)
    return [
        {
            "id": f"a{index}.{n}",
            "name": name,
            "increase": rng.randint(1, 20),
            "createdAt": created + timedelta(seconds=rng.randrange(max(span, 1))),
        }
        for n, name in enumerate(names)
    ]
