"""The builder follows an audience the service builds in the background.

A service whose lists are "large" above 5 contacts (`AUDIENCE_BUILD_BACKGROUND_ABOVE`), built
3 contacts per step (`AUDIENCE_BUILD_CHUNK`), with the membership scheduler's thread off: the
test moves the build itself, one step at a time, on the service's database, so the page's
states are asserted one after the other and never a duration. Headless Chromium saves an
audience on a list of 8 contacts: the page says it is building, with its progress, follows the
progress, and ends showing it built with the members the library counts.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

import audiencefilter as af
from audiencefilter.service.db.engine import Database
from audiencefilter.service.domain.audience_filters import SCHEMA
from audiencefilter.service.domain.use_cases import membership_builds
from audiencefilter.service.settings import Settings

from .browser import full_page_screenshot
from .helpers import SCREENSHOTS, _all, _by_id, _key, _type, _use_key, _wait
from .served import served

ABOVE = 5
CHUNK = 3
FILTER = "points >= 10"
NAME = "Rich"
# email: points
PEOPLE = {
    "ann@example.com": 50,
    "bob@example.com": 1,
    "cat@example.com": 12,
    "dan@example.com": 3,
    "eve@example.com": 30,
    "fay@example.com": 2,
    "gus@example.com": 0,
    "hal@example.com": 10,
}


@dataclass
class Service:
    url: str
    private_key: str
    list_id: str
    database: Database

    def step(self) -> int | None:
        """One step of the oldest build (what the scheduler's thread would do)."""
        return membership_builds.build_step(self.database, CHUNK)


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    database_url = f"sqlite:///{tmp_path_factory.mktemp('progress') / 'service.db'}"
    private_key = _key(database_url, "private")
    settings = {
        "AUDIENCEFILTER_RATE_LIMIT_FREE": "100000/minute",
        "AUDIENCEFILTER_AUDIENCE_BUILD_BACKGROUND_ABOVE": str(ABOVE),
        "AUDIENCEFILTER_AUDIENCE_BUILD_CHUNK": str(CHUNK),
        "AUDIENCEFILTER_MEMBERSHIP_SWEEP_SECONDS": "0",
    }
    with served(database_url, **settings) as server:
        with httpx.Client(base_url=server.url, headers={"apiKey": private_key}) as http:
            created = http.post("/v4/lists", json={"name": "Large"})
            assert created.status_code == 201, created.text
            list_id = created.json()["data"]["list"]["id"]
            for email, points in PEOPLE.items():
                body = {"listId": list_id, "email": email, "points": points}
                assert http.post("/v4/contacts", json=body).status_code == 201
        database = Database.from_settings(Settings(database_url=database_url))
        try:
            yield Service(server.url, private_key, list_id, database)
        finally:
            database.dispose()


def _progress(driver: Any) -> tuple[str, str, str]:
    """The build's status line and its bar's value and maximum."""
    bar = _by_id(driver, "build-progress")
    return (
        _by_id(driver, "build-status").text,
        str(bar.get_attribute("value")),
        str(bar.get_attribute("max")),
    )


def _listed(driver: Any) -> list[str]:
    return [b.text for b in _all(driver, "#audience-list button") if b.text.startswith(NAME)]


def test_saving_on_a_large_list_shows_the_build_until_it_is_built(
    browser: Any, service: Service
) -> None:
    expected = sum(
        af.parse_text(FILTER, schema=SCHEMA).matches({"points": p}) for p in PEOPLE.values()
    )
    assert expected == 4  # ann, cat, eve, hal

    browser.get(f"{service.url}/builder")
    _wait(browser, lambda: _by_id(browser, "api-key").is_displayed())
    _use_key(browser, service.private_key)
    _wait(browser, lambda: _by_id(browser, "workspace").is_displayed(), "no workspace")
    assert not _by_id(browser, "build").is_displayed()
    _type(browser, "filter-text", FILTER)
    count = _by_id(browser, "preview-count")
    _wait(browser, lambda: count.get_attribute("data-count") == str(expected), "preview count")
    _type(browser, "audience-name", NAME)
    _by_id(browser, "save").click()

    # Answered `building` at once: nothing judged yet, and the list says so too.
    status = _by_id(browser, "save-status")
    _wait(browser, lambda: "building its members in the background" in status.text, "not saved")
    _wait(browser, lambda: _by_id(browser, "build").is_displayed(), "no progress shown")
    assert _progress(browser) == ("Building… 0 of 8 contacts", "0", "8")
    _wait(browser, lambda: _listed(browser) == [f"{NAME} (building…)"], "the list")

    # One step of the build: the page, asking again, shows it.
    assert service.step() == 0
    _wait(browser, lambda: _progress(browser)[0] == "Building… 3 of 8 contacts", "no progress")
    assert _progress(browser) == ("Building… 3 of 8 contacts", "3", "8")
    assert "Built" not in status.text
    full_page_screenshot(browser, SCREENSHOTS / "builder-building-1280.png")  # for the docs

    # The rest of it: the page ends showing the audience built, with the library's count.
    while service.step() is not None:
        pass
    _wait(browser, lambda: "Built" in status.text, "never shown built")
    assert status.text == f"Built “{NAME}”: {expected} members."
    assert not _by_id(browser, "build").is_displayed()
    _wait(browser, lambda: _listed(browser) == [f"{NAME} ({expected} members)"], "the list")
    entered = '#events li[data-type="audience.entered"]'
    _wait(browser, lambda: len(_all(browser, entered)) == expected, "the members' events")


def test_following_a_build_stops_when_another_audience_is_opened(
    browser: Any, service: Service
) -> None:
    # A change of filter restarts the build; starting a new audience stops following it, and
    # the answer it would have had is not shown.
    _type(browser, "filter-text", "points >= 30")
    count = _by_id(browser, "preview-count")
    _wait(browser, lambda: count.get_attribute("data-count") == "2", "preview count")
    _by_id(browser, "save").click()
    status = _by_id(browser, "save-status")
    _wait(browser, lambda: "building its members" in status.text, "not saved")
    _wait(browser, lambda: _by_id(browser, "build").is_displayed(), "no progress shown")
    _by_id(browser, "new-audience").click()
    _wait(browser, lambda: not _by_id(browser, "build").is_displayed(), "still following")
    while service.step() is not None:
        pass
    # Opened again, it is built: no progress, and its rules as saved.
    _all(browser, "#audience-list button")[0].click()
    _wait(browser, lambda: _by_id(browser, "filter-text").get_attribute("value") == "points >= 30")
    assert not _by_id(browser, "build").is_displayed()
    assert status.text == ""
