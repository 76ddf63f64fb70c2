"""The browser the builder's tests share: one headless Chromium for the whole run of a worker
(starting one costs seconds), a fresh tab of it for each module, opened after the module's
`service` (each module seeds its own) and closed, with what the page stored, before it stops."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from .browser import chromium, fresh_tab


@pytest.fixture(scope="session")
def chromium_session() -> Iterator[Any]:
    with chromium() as driver:
        yield driver


@pytest.fixture(scope="module")
def browser(service: Any, chromium_session: Any) -> Iterator[Any]:
    """The shared browser on a new tab: no session storage, viewport override or console lines
    of an earlier module's page (a service may get a port an earlier one had)."""
    driver = chromium_session
    fresh_tab(driver)
    try:
        yield driver
    finally:
        url = getattr(service, "url", None)
        if url is not None:  # the page's cookies and local storage go with its service
            origin = {"origin": url, "storageTypes": "all"}
            driver.execute_cdp_cmd("Storage.clearDataForOrigin", origin)
        driver.get("about:blank")
