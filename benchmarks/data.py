"""Seeded synthetic contacts that look like a real audience, as rows and as columns.

The shape is what makes a filter benchmark honest: emails in mixed case over a handful of
providers (so a case-insensitive `contains` has work to do), about thirty countries and two
hundred cities with a skewed spread, ten per cent nulls in company, city and country (so null
handling is on the hot path), long-tailed points and referrals, and time-zone-aware creation
instants over three years. The same seed always gives the same contacts, so two runs, or two
engines in one run, see identical data.

Columns are generated first (`random.choices` and list comprehensions, a few seconds for a
million contacts) and rows are zipped from them, so the row engines and the column engines
share every value object.
"""

from __future__ import annotations

import json
import random
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from pathlib import Path
from typing import Any

FIELDS = (
    "email",
    "firstName",
    "lastName",
    "company",
    "country",
    "city",
    "points",
    "referrals",
    "isVerified",
    "unsubscribed",
    "createdAt",
)

FIRST_NAMES = (
    "Ann", "Bob", "Chloé", "David", "Emma", "Farid", "Greta", "Hugo", "Inès", "Jonas",
    "Karin", "Liam", "María", "Noah", "Olivia", "Pierre", "Quentin", "Rosa", "Søren", "Tomás",
    "Uma", "Victor", "Wei", "Xavier", "Yusuf", "Zoë", "Élodie", "Ingrid", "Łukasz", "Aylin",
)  # fmt: skip
LAST_NAMES = (
    "Smith", "Müller", "García", "Rossi", "Dubois", "Nowak", "Kowalski", "Johansson",
    "Silva", "Yılmaz", "Nguyen", "Tanaka", "O'Brien", "Schmidt", "Martin", "Bernard",
    "López", "Fischer", "Moreau", "Jensen", "Costa", "Novák", "Horvat", "Kim", "Brown",
)  # fmt: skip
# (domain, weight): a long tail of providers, a few spellings in capitals as people type them.
DOMAINS = (
    ("gmail.com", 30), ("Gmail.com", 2), ("GMAIL.COM", 1), ("yahoo.com", 10),
    ("outlook.com", 10), ("hotmail.com", 8), ("icloud.com", 6), ("proton.me", 3),
    ("gmx.de", 5), ("orange.fr", 4), ("acme.io", 6), ("example.org", 5),
    ("bigcorp.com", 5), ("mail.ru", 3), ("googlemail.com", 2),
)  # fmt: skip
COUNTRIES = (
    "US", "GB", "FR", "DE", "ES", "IT", "NL", "BE", "CH", "AT", "SE", "NO", "DK", "FI", "PL",
    "PT", "IE", "CZ", "TR", "BR", "MX", "AR", "CA", "AU", "NZ", "JP", "KR", "IN", "ZA", "NG",
)  # fmt: skip
COMPANIES = (
    "Acme", "Globex", "Initech", "Umbrella", "Hooli", "Vandelay", "Stark Industries",
    "Wayne Enterprises", "Soylent", "Tyrell", "Cyberdyne", "Aperture", "Black Mesa",
    "Wonka", "Gringotts", "Oceanic", "Massive Dynamic", "Pied Piper", "Dunder Mifflin", "50% Off",
)  # fmt: skip
_CITY_ROOTS = (
    "Francisco", "Diego", "Antonio", "Jose", "Sebastián", "Paulo", "Haven", "Bridge", "Field",
    "Ville", "Mont", "Brook", "Ridge", "Lake", "Dale", "Marina", "Rosa", "Clara", "Lucia", "Pedro",
    "Wood", "Stone", "Water", "Hill", "Ford",
)  # fmt: skip
_CITY_PREFIXES = ("", "San ", "Santa ", "Port ", "New ", "North ", "Saint ", "Zürich-")

CITIES = tuple(prefix + root for prefix in _CITY_PREFIXES for root in _CITY_ROOTS)
"""200 city names; about a quarter start with "San" (San Diego, Santa Rosa...)."""

EPOCH = datetime(2023, 1, 1, tzinfo=UTC)
SPAN_SECONDS = 3 * 365 * 24 * 3600


@dataclass(frozen=True)
class Contacts:
    """Generated contacts: `columns[field]` lists, `ids` 0..n-1, and the rows built from them."""

    columns: dict[str, list[Any]]

    def __len__(self) -> int:
        return len(self.columns["email"])

    @cached_property
    def rows(self) -> list[dict[str, Any]]:
        """One dict per contact; a null is stored as None (the key is present)."""
        names = ("id", *FIELDS)
        values = zip(range(len(self)), *(self.columns[f] for f in FIELDS), strict=True)
        return [dict(zip(names, row, strict=True)) for row in values]

    def json_lines(self) -> Iterator[str]:
        """The contacts as JSON Lines, date-times in ISO 8601 with their offset."""
        for row in self.rows:
            created = row["createdAt"]
            yield json.dumps({**row, "createdAt": created.isoformat()}, ensure_ascii=False)

    def write_jsonl(self, path: Path) -> None:
        with path.open("w", encoding="utf-8") as out:
            for line in self.json_lines():
                out.write(line + "\n")


def _nullify(values: list[Any], rate: float, rng: random.Random) -> list[Any]:
    return [None if rng.random() < rate else v for v in values]


def _weighted(rng: random.Random, population: tuple[Any, ...], n: int, skew: float) -> list[Any]:
    """A Zipf-like pick: the k-th item has weight 1/(k+1)**skew, so a few values dominate."""
    weights = [1 / (k + 1) ** skew for k in range(len(population))]
    return rng.choices(population, weights, k=n)


_NO_DECOMPOSITION = str.maketrans({"Ł": "L", "ł": "l", "Ø": "O", "ø": "o", "ı": "i"})


def _ascii(name: str) -> str:
    """`Łukasz O'Brien` -> `Lukasz OBrien`: what people put in the local part of an address."""
    plain = unicodedata.normalize("NFKD", name.translate(_NO_DECOMPOSITION))
    return plain.encode("ascii", "ignore").decode().replace("'", "").replace(" ", "")


def _emails(rng: random.Random, first: list[str], last: list[str], n: int) -> list[str]:
    domains = rng.choices([d for d, _ in DOMAINS], [w for _, w in DOMAINS], k=n)
    numbers = [rng.randrange(1000) for _ in range(n)]
    shouty = [rng.random() < 0.1 for _ in range(n)]
    plain = {name: _ascii(name) for name in (*FIRST_NAMES, *LAST_NAMES)}
    emails = []
    for f, la, num, dom, up in zip(first, last, numbers, domains, shouty, strict=True):
        local = f"{plain[f]}.{plain[la]}{num}"
        emails.append(f"{local if up else local.lower()}@{dom}")
    return emails


def generate(n: int, seed: int = 20250101) -> Contacts:
    """`n` contacts, identical for identical `(n, seed)`."""
    rng = random.Random(seed)
    first = rng.choices(FIRST_NAMES, k=n)
    last = rng.choices(LAST_NAMES, k=n)
    points = [int(rng.lognormvariate(4.5, 1.6)) for _ in range(n)]
    offsets = [rng.randrange(SPAN_SECONDS * 1_000_000) for _ in range(n)]
    columns: dict[str, list[Any]] = {
        "email": _emails(rng, first, last, n),
        "firstName": first,
        "lastName": last,
        "company": _nullify(_weighted(rng, COMPANIES, n, 0.8), 0.10, rng),
        "country": _nullify(_weighted(rng, COUNTRIES, n, 1.0), 0.10, rng),
        "city": _nullify(_weighted(rng, CITIES, n, 0.7), 0.10, rng),
        "points": _nullify(points, 0.02, rng),
        "referrals": [int(rng.expovariate(0.5)) for _ in range(n)],
        "isVerified": _nullify([rng.random() < 0.6 for _ in range(n)], 0.02, rng),
        "unsubscribed": [rng.random() < 0.08 for _ in range(n)],
        "createdAt": [EPOCH + timedelta(microseconds=o) for o in offsets],
    }
    return Contacts(columns)
