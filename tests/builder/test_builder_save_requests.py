"""Saving an audience does not flood the service: the Activity panel draws only the events it
shows, and asks for the e-mails of those contacts in one request, however many members the
audience gains.

Headless Chromium saves an audience of every contact of a list of 300; the page's own record of
its requests (the Resource Timing entries, whose buffer the test enlarges first) is counted once
every shown event has its e-mail. Before, the panel drew (and looked up) every `audience.entered`
event of the save before trimming to the ones it shows.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from .helpers import _all, _by_id, _key, _type, _use_key, _wait
from .served import served

CONTACTS = 300
EVENTS_SHOWN = 30  # the panel's length (EVENTS_SHOWN in builder/app.js)
LOOKUP = re.compile(r"/v4/contacts/[^/?]+$")
BY_IDS = re.compile(r"/v4/contacts\?.*\bids=")


@dataclass
class Service:
    url: str
    private_key: str


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    database_url = f"sqlite:///{tmp_path_factory.mktemp('save') / 'service.db'}"
    private_key = _key(database_url, "private")
    settings = {
        "AUDIENCEFILTER_RATE_LIMIT_FREE": "100000/minute",
        "AUDIENCEFILTER_MEMBERSHIP_SWEEP_SECONDS": "0",
    }
    with served(database_url, **settings) as server:
        with httpx.Client(base_url=server.url, headers={"apiKey": private_key}) as http:
            created = http.post("/v4/lists", json={"name": "Everyone"})
            assert created.status_code == 201, created.text
            list_id = created.json()["data"]["list"]["id"]
            rows = [{"email": f"p{index}@example.com", "points": 5} for index in range(CONTACTS)]
            imported = http.post("/v4/contacts/import", params={"listId": list_id}, json=rows)
            assert imported.status_code == 200, imported.text
        yield Service(server.url, private_key)


def _lookups(driver: Any, pattern: re.Pattern[str] = LOOKUP) -> list[str]:
    """The URLs of the contact look-ups (`GET /v4/contacts/{id}`, or by `ids`) the page made."""
    names = driver.execute_script(
        "return performance.getEntriesByType('resource').map((entry) => entry.name)"
    )
    return [name for name in names if pattern.search(name)]


def test_saving_a_large_audience_looks_up_at_most_the_shown_events(
    browser: Any, service: Service
) -> None:
    browser.get(f"{service.url}/builder")
    _wait(browser, lambda: _by_id(browser, "api-key").is_displayed())
    browser.execute_script("performance.setResourceTimingBufferSize(100000)")
    _use_key(browser, service.private_key)
    _wait(browser, lambda: _by_id(browser, "workspace").is_displayed(), "no workspace")
    _type(browser, "filter-text", "points >= 1")
    count = _by_id(browser, "preview-count")
    _wait(browser, lambda: count.get_attribute("data-count") == str(CONTACTS), "preview count")
    _type(browser, "audience-name", "Everyone with points")
    _by_id(browser, "save").click()
    _wait(browser, lambda: "Saved" in _by_id(browser, "save-status").text, "not saved")
    entered = '#events li[data-type="audience.entered"]'
    _wait(browser, lambda: len(_all(browser, entered)) == EVENTS_SHOWN, "the shown events")
    labels = f"{entered} .contact"
    _wait(browser, lambda: all("@" in label.text for label in _all(browser, labels)), "e-mails")
    # The shown events' e-mails are asked in one request, none of them one by one.
    assert _lookups(browser) == []
    assert len(_lookups(browser, BY_IDS)) == 1, _lookups(browser, BY_IDS)
