"""The builder's controls for what it once kept as JSON, in Chromium against a real service:
a behaviour over actions with other conditions (several, or an OR of them), the largest
`createdAt` of the actions compared with a relative date, and a key of `data` holding a dot.
Each is built by clicking and typing, and the preview's count must be the library's answer
over the same contacts (as must the text the page writes).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

from .browser import full_page_screenshot, set_viewport
from .helpers import (
    SCREENSHOTS,
    Service,
    _all,
    _by_id,
    _choose,
    _count,
    _root,
    _served,
    _signed_in,
    _text_box,
    _type,
    _wait,
)

# email: (data, [(action, increase, days ago)])
PEOPLE: dict[str, tuple[dict[str, Any], list[tuple[str, int, int]]]] = {
    "ann@example.com": ({"utm.source": "news"}, [("purchase", 20, 5)]),
    "bob@example.com": ({"utm": {"source": "news"}}, [("purchase", 5, 5), ("purchase", 50, 60)]),
    "cat@example.com": ({"utm.source": "ads"}, [("share", 0, 2), ("buy", 15, 40)]),
    "dan@example.com": ({}, [("like", 1, 100)]),
    "eve@example.com": ({}, []),
}


def _seed(url: str, key: str) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    now = datetime.now(UTC)
    with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as http:
        created = http.post("/v4/lists", json={"name": "Shop"})
        assert created.status_code == 201, created.text
        list_id = created.json()["data"]["list"]["id"]
        ids, records = {}, []
        for email, (data, actions) in PEOPLE.items():
            contact = http.post(
                "/v4/contacts", json={"listId": list_id, "email": email, "data": data}
            )
            assert contact.status_code == 201, contact.text
            ids[email] = contact.json()["data"]["contact"]["id"]
            rows = []
            for name, increase, days in actions:
                when = now - timedelta(days=days)
                body = {"name": name, "increase": increase, "subId": ids[email]}
                answer = http.post("/v4/actions", json={**body, "createdAt": when.isoformat()})
                assert answer.status_code == 201, answer.text
                rows.append({"id": "", "name": name, "increase": increase, "createdAt": when})
            records.append({"email": email, "data": data, "actions": rows})
    return list_id, ids, records


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with _served(tmp_path_factory, "relations", _seed, Service) as served:
        yield served


def _new_audience(driver: Any, service: Service) -> str:
    """A new, empty audience in a tab holding the private key; the root group's id."""
    _signed_in(driver, service)
    _by_id(driver, "new-audience").click()
    return _root(driver)


def _add(driver: Any, button: str, css: str) -> str:
    """Click `button`, then the id of the newest element matching `css`."""
    before = len(_all(driver, css))
    _by_id(driver, button).click()
    _wait(driver, lambda: len(_all(driver, css)) == before + 1, f"nothing added by {button}")
    return str(_all(driver, css)[-1].get_attribute("id"))


def _add_behaviour(driver: Any, root: str) -> str:
    return _add(driver, f"{root}-add-behaviour", "#rules .rule.behaviour")


def _add_other_condition(driver: Any, behaviour: str) -> tuple[str, str]:
    """The behaviour's group of other conditions on the actions, and its first rule."""
    rule = _add(driver, f"{behaviour}-add-more", f"#{behaviour} .rule")
    group = _all(driver, f"#{behaviour} > fieldset.group")[0].get_attribute("id")
    return str(group), rule


def _agrees(driver: Any, service: Service, text: str, expected: int) -> None:
    assert service.expected(text) == expected  # the seed is what the test thinks it is
    _wait(driver, lambda: _text_box(driver) == text, f"text box: {_text_box(driver)!r}")
    _wait(driver, lambda: _count(driver) == str(expected), "preview count")
    assert not _all(driver, "#rules .raw"), "a part was kept as JSON"


def test_actions_with_several_other_conditions(browser: Any, service: Service) -> None:
    root = _new_audience(browser, service)
    bought = _add_behaviour(browser, root)
    _choose(browser, f"{bought}-quantifier", "some")
    _type(browser, f"{bought}-name", "purchase")
    group, increase = _add_other_condition(browser, bought)
    _choose(browser, f"{increase}-field", "increase")
    _choose(browser, f"{increase}-op", "gt")
    _type(browser, f"{increase}-value", "10")
    recent = _add(browser, f"{group}-add-rule", f"#{group} .rule")
    _choose(browser, f"{recent}-field", "createdAt")
    _choose(browser, f"{recent}-op", "within")
    _choose(browser, f"{recent}-dir", "last")
    _type(browser, f"{recent}-n", "30")
    _choose(browser, f"{recent}-unit", "day")
    wanted = 'actions some (name = "purchase" and increase > 10 and createdAt within last 30 days)'
    _agrees(browser, service, wanted, 1)  # ann: bob's big purchase is 60 days old
    for width in (1280, 390):
        set_viewport(browser, width)
        _wait(browser, lambda w=width: browser.execute_script("return innerWidth") == w)
        overflow = browser.execute_script("return document.documentElement.scrollWidth")
        assert overflow <= width, f"the page is {overflow} px wide at {width}"
        browser.execute_script("window.scrollTo(0, 0)")  # the phone's bar at the top
        full_page_screenshot(browser, SCREENSHOTS / f"builder-actions-{width}.png")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_an_or_inside_the_actions_filter(browser: Any, service: Service) -> None:
    root = _new_audience(browser, service)
    never = _add_behaviour(browser, root)
    _choose(browser, f"{never}-quantifier", "none")
    _type(browser, f"{never}-name", "")
    group, share = _add_other_condition(browser, never)
    _choose(browser, f"{group}-combinator", "OR")
    _choose(browser, f"{share}-field", "name")
    _choose(browser, f"{share}-op", "equals")
    _type(browser, f"{share}-value", "share")
    buy = _add(browser, f"{group}-add-rule", f"#{group} .rule")
    _choose(browser, f"{buy}-field", "name")
    _choose(browser, f"{buy}-op", "equals")
    _type(browser, f"{buy}-value", "buy")
    _agrees(browser, service, 'actions none (name = "share" or name = "buy")', 4)


def test_the_largest_created_at_compared_with_a_relative_date(
    browser: Any, service: Service
) -> None:
    root = _new_audience(browser, service)
    latest = _add_behaviour(browser, root)
    _type(browser, f"{latest}-name", "")
    _choose(browser, f"{latest}-quantifier", "max")
    _choose(browser, f"{latest}-count-field", "createdAt")
    _choose(browser, f"{latest}-count-op", "gte")
    _type(browser, f"{latest}-count-value", "30 days ago")
    # ann, bob, cat; dan's last action is 100 days old, eve has none (no largest: not true)
    _agrees(browser, service, "max(actions.createdAt) >= 30 days ago", 3)
    _choose(browser, f"{latest}-count-op", "null")
    _agrees(browser, service, "max(actions.createdAt) is null", 1)


def test_a_data_key_holding_a_dot(browser: Any, service: Service) -> None:
    root = _new_audience(browser, service)
    source = _add(browser, f"{root}-add-rule", "#rules .rule")
    _choose(browser, f"{source}-field", "data")
    _type(browser, f"{source}-path-0", "utm.source")
    _choose(browser, f"{source}-op", "equals")
    _type(browser, f"{source}-value", "news")
    # ann alone: bob's `utm` holds a `source` one level down, another path
    _agrees(browser, service, 'data.`utm.source` = "news"', 1)
    _by_id(browser, f"{source}-path-add").click()
    _wait(browser, lambda: _all(browser, f"#{source}-path-1"), "no second key")
    _type(browser, f"{source}-path-0", "utm")
    _type(browser, f"{source}-path-1", "source")
    _agrees(browser, service, 'data.utm.source = "news"', 1)  # bob
