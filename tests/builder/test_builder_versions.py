"""The builder shows the list's time zone and an audience's history: its versions, the line
difference between two of them, and a restore (a new version), in Chromium at 1280 and 390 px.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from .browser import full_page_screenshot, set_viewport
from .helpers import SCREENSHOTS, _by_id, _key, _open_page, _use_key, _wait
from .served import served


@dataclass
class Service:
    url: str
    private_key: str
    list_id: str
    audience_id: str


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    database = f"sqlite:///{tmp_path_factory.mktemp('versions') / 'service.db'}"
    key = _key(database, "private")
    settings = {"AUDIENCEFILTER_RATE_LIMIT_FREE": "100000/minute"}
    with served(database, **settings) as server:
        with httpx.Client(base_url=server.url, headers={"apiKey": key}, timeout=30) as http:
            body = {"name": "Paris shop", "timeZone": "Europe/Paris"}
            list_id = http.post("/v4/lists", json=body).json()["data"]["list"]["id"]
            created = {
                "name": "Big",
                "listId": list_id,
                "filtersText": 'country = "FR" and points >= 10',
            }
            answer = http.post("/v4/audiences", json=created)
            assert answer.status_code == 201, answer.text
            audience_id = answer.json()["data"]["audience"]["id"]
            changed = {"filtersText": 'country = "DE" and points >= 10'}
            assert http.patch(f"/v4/audiences/{audience_id}", json=changed).status_code == 200
        yield Service(server.url, key, list_id, audience_id)


def _open_audience(driver: Any, service: Service) -> None:
    _open_page(driver, service)
    _use_key(driver, service.private_key)
    _wait(driver, lambda: _by_id(driver, "workspace").is_displayed(), "no workspace")
    button = f'#audience-list button[data-id="{service.audience_id}"]'
    _wait(driver, lambda: driver.find_elements("css selector", button), "audience not listed")
    driver.find_element("css selector", button).click()
    _wait(driver, lambda: _by_id(driver, "versions-panel").is_displayed(), "no history")


def _versions(driver: Any) -> list[str]:
    return [item.text for item in driver.find_elements("css selector", "#versions li")]


def test_the_list_zone_and_the_history_with_its_difference(browser: Any, service: Service) -> None:
    _open_audience(browser, service)
    assert "Europe/Paris" in _by_id(browser, "list-zone").text
    _wait(browser, lambda: len(_versions(browser)) == 2, "two versions")
    assert _versions(browser)[0].startswith("v2 ·") and "current" in _versions(browser)[0]
    diff = _by_id(browser, "version-diff").text.splitlines()
    assert '- country = "FR"' in diff and '+ country = "DE"' in diff
    assert "  AND points >= 10" in diff or "  and points >= 10" in diff
    outs = browser.find_elements("css selector", "#version-diff .out")
    assert [o.text.strip() for o in outs] == ['- country = "FR"']
    for width in (1280, 390):
        set_viewport(browser, width, 900)
        full_page_screenshot(browser, SCREENSHOTS / f"builder-history-{width}.png")
    set_viewport(browser, 1280, 900)
    _by_id(browser, "restore").click()
    _wait(browser, lambda: len(_versions(browser)) == 3, "no version after the restore")
    assert "(restores v1)" in _versions(browser)[0]
    assert 'country = "FR"' in _by_id(browser, "filter-text").get_attribute("value")
