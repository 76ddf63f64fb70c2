"""Headless Chromium through selenium and Debian's chromedriver, for the builder's tests.

One browser per worker (`tests/builder/conftest.py`), a tab of it per test module. When
Chromium, chromedriver or selenium are missing the tests are skipped, unless
`AUDIENCEFILTER_REQUIRE_SERVERS=1` (CI), which turns the skip into a failure, as for the
database servers of `tests/servers.py`.
"""

from __future__ import annotations

import base64
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMEDRIVER = "/usr/bin/chromedriver"
# Headless, and quiet: without the background-networking flags Chromium keeps calling home.
FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--disable-dev-shm-usage",
    "--hide-scrollbars",
)


def unavailable(reason: str) -> None:
    """Skip, or fail in CI, when the browser cannot run."""
    if os.environ.get("AUDIENCEFILTER_REQUIRE_SERVERS") == "1":
        pytest.fail(f"{reason} (AUDIENCEFILTER_REQUIRE_SERVERS=1)", pytrace=False)
    pytest.skip(reason)


@contextmanager
def chromium() -> Iterator[Any]:
    """A headless Chromium session with a fresh profile, quit (and its profile removed) after."""
    try:
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
    except ImportError:
        unavailable("selenium is not installed (the dev extra)")
    for binary in (CHROMIUM, CHROMEDRIVER):
        if not Path(binary).exists():
            unavailable(f"{binary} is missing: apt-get install chromium chromium-driver")
    profile = tempfile.mkdtemp(prefix="builder-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in (*FLAGS, f"--user-data-dir={profile}", "--window-size=1280,1000"):
        options.add_argument(flag)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    try:
        yield driver
    finally:
        driver.quit()
        shutil.rmtree(profile, ignore_errors=True)


def fresh_tab(driver: Any) -> None:
    """The driver moved to a new tab, the old one closed: no session storage, viewport
    override or console lines of an earlier page are left (another service may get the port
    an earlier one had), and downloads are back to the default."""
    previous = driver.current_window_handle
    driver.switch_to.new_window("tab")
    driver.switch_to.window(previous)
    driver.close()
    driver.switch_to.window(driver.window_handles[0])
    driver.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "default"})
    driver.get_log("browser")  # drained: the lines of the tab just closed


def set_viewport(driver: Any, width: int, height: int = 900) -> None:
    """The page laid out for a viewport of exactly this width (a phone's at 390)."""
    driver.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride",
        {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": width < 600},
    )


def full_page_screenshot(driver: Any, path: Path) -> None:
    """The whole page, not only the viewport, as PNG."""
    path.parent.mkdir(parents=True, exist_ok=True)
    shot = driver.execute_cdp_cmd(
        "Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True}
    )
    path.write_bytes(base64.b64decode(shot["data"]))
