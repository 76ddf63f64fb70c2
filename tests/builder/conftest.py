"""The browser the builder's tests share: one headless Chromium per module, started after the
module's `service` (each module seeds its own) and quit before it stops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .browser import chromium


@pytest.fixture(scope="module")
def browser(service: Any) -> Iterator[Any]:
    with chromium() as driver:
        yield driver
