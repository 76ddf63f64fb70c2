"""The application's clock in tests that move time by hand, and the service's spelling of an
instant: one copy for every test that builds an app on a clock it holds."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.app import create_app

from .conftest import ApiClient, Tenant, make_tenant, settings_on


class Hands:
    """A clock the test moves: the app reads `at` each time it asks the time."""

    def __init__(self, at: datetime) -> None:
        self.at = at

    def __call__(self) -> datetime:
        return self.at

    def advance(self, **delta: float) -> datetime:
        """Move on by `timedelta(**delta)` and answer the new time."""
        self.at += timedelta(**delta)
        return self.at

    def later(self) -> datetime:
        """Ten minutes on: apart enough for writes a test tells apart by their time."""
        return self.advance(minutes=10)


def stamp(moment: datetime) -> str:
    """An instant as the service writes it: ISO 8601 in UTC with `Z`."""
    return moment.isoformat().replace("+00:00", "Z")


def clocked_world(
    request: pytest.FixtureRequest, path: Path, start: datetime, **options: Any
) -> Iterator[tuple[Tenant, Hands]]:
    """A tenant of an app on the database `request.param` names, on a clock held at `start`,
    with no background sweep or webhook worker to race the test; closed after it."""
    settings = settings_on(
        request, path, **{"membership_sweep_seconds": 0, "webhook_worker": False, **options}
    )
    hands = Hands(start)
    api = ApiClient(create_app(settings, clock=hands))
    yield make_tenant(api), hands
    api.close()
