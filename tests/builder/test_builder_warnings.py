"""The builder's warnings and estimate while a filter is edited, in Chromium at 1280 and 390 px
against a real service: a filter that can never match says so and names the conditions to
blame; one that selects what another audience of the list selects says "the same as" it, one
whose contacts are all in another says "contained in" it, each with example contacts that
the library judges as the warning says; the estimate (with its 95 % interval) follows the
typing, and the exact count follows when typing pauses.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import httpx
import pytest

import audiencefilter as af

from .browser import full_page_screenshot, set_viewport
from .helpers import (
    SCREENSHOTS,
    _all,
    _by_id,
    _count,
    _fits,
    _served,
    _signed_in,
    _type,
    _wait,
)
from .helpers import Service as _Service

POINTS = (50, 200, 900, 1000, 1500, 3000, 4000, 8000)
AUDIENCES = {"Big spenders": {"points": {"gte": 1000}}, "Regulars": {"points": {"gte": 100}}}
SAMPLE = 4  # smaller than the list, so the estimate is an interval
WIDTHS = (1280, 390)


class Service(_Service):
    def expected(self, text: str) -> int:
        flt = af.parse_text(text)
        return sum(flt.matches(record) for record in self.records)


def _seed(url: str, key: str) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as http:
        list_id = http.post("/v4/lists", json={"name": "Club"}).json()["data"]["list"]["id"]
        ids, records = {}, []
        for number, points in enumerate(POINTS):
            body = {"listId": list_id, "email": f"m{number}@example.com", "points": points}
            made = http.post("/v4/contacts", json=body)
            assert made.status_code == 201, made.text
            ids[body["email"]] = made.json()["data"]["contact"]["id"]
            records.append({"email": body["email"], "points": points})
        for name, where in AUDIENCES.items():
            audience = {"listId": list_id, "name": name, "filters": where}
            assert http.post("/v4/audiences", json=audience).status_code == 201
    return list_id, ids, records


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    sample = {"AUDIENCEFILTER_ESTIMATE_SAMPLE_SIZE": str(SAMPLE)}
    with _served(tmp_path_factory, "warnings", _seed, Service, **sample) as served:
        yield served


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request: pytest.FixtureRequest, browser: Any, service: Service) -> Iterator[int]:
    set_viewport(browser, request.param)
    _signed_in(browser, service)
    _wait(browser, lambda: len(_all(browser, "#audience-list button.audience")) == len(AUDIENCES))
    _by_id(browser, "new-audience").click()
    yield int(request.param)
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _warnings(driver: Any) -> list[tuple[str, str]]:
    found = _all(driver, "#algebra-warnings > li")
    return [(item.get_attribute("data-kind"), item.text) for item in found]


def _examples(driver: Any, kind: str) -> list[str]:
    return [e.text for e in _all(driver, f'#algebra-warnings li[data-kind="{kind}"] li.example')]


def _points(example: str) -> int:
    """The points of an example contact shown as "label: points: 1000, ..."."""
    return int(example.split("points: ", 1)[1].split(",", 1)[0])


def test_a_filter_that_can_never_match_names_the_conditions_to_blame(
    browser: Any, service: Service, width: int
) -> None:
    _type(browser, "filter-text", "points > 5000 and points < 100")
    _wait(browser, lambda: [k for k, _ in _warnings(browser)] == ["never"], "no warning")
    text = _warnings(browser)[0][1]
    assert text.startswith("Can never match") and "points gt 5000" in text
    assert "points lt 100" in text
    _type(browser, "filter-text", "points > 5000")
    _wait(browser, lambda: _warnings(browser) == [], "the warning stays")
    _fits(browser, width)


def test_the_same_as_and_contained_in_another_audience_with_example_contacts(
    browser: Any, service: Service, width: int
) -> None:
    _type(browser, "filter-text", "points >= 1000")
    _wait(browser, lambda: sorted(k for k, _ in _warnings(browser)) == ["same", "within"])
    shown = dict(_warnings(browser))
    assert "The same as “Big spenders”" in shown["same"]
    assert "Contained in “Regulars”" in shown["within"]
    same, within = _examples(browser, "same"), _examples(browser, "within")
    assert len(same) == 1 and _points(same[0]) >= 1000
    both, only_regulars = within
    assert both.startswith("In both") and _points(both) >= 1000
    assert only_regulars.startswith("Only in “Regulars”") and 100 <= _points(only_regulars) < 1000
    _type(browser, "filter-text", "points >= 5000")
    _wait(browser, lambda: [k for k, _ in _warnings(browser)] == ["within", "within"])
    assert sorted(text.split(":")[0] for _, text in _warnings(browser)) == [
        "Contained in “Big spenders”",
        "Contained in “Regulars”",
    ]
    exact = str(service.expected("points >= 5000"))
    _wait(browser, lambda: _count(browser) == exact, "no exact count")
    _fits(browser, width)
    full_page_screenshot(browser, SCREENSHOTS / f"builder-warnings-{width}.png")


def test_the_estimate_follows_the_typing_and_the_exact_count_the_pause(
    browser: Any, service: Service, width: int
) -> None:
    estimate = _by_id(browser, "estimate")
    for text in ("points >= 900", "points < 1000"):
        _type(browser, "filter-text", "")
        _wait(browser, lambda: estimate.get_attribute("data-estimate") is None, "a stale estimate")
        _type(browser, "filter-text", text)
        exact = str(service.expected(text))
        _wait(browser, lambda e=exact: _count(browser) == e, f"no exact count for {text}")
        _wait(browser, lambda: estimate.get_attribute("data-estimate") is not None)
        low, high, guess = (
            int(estimate.get_attribute(f"data-{name}")) for name in ("low", "high", "estimate")
        )
        assert 0 <= low <= guess <= high <= len(POINTS)
        assert "95 %" in estimate.text and f"{high:,}" in estimate.text
