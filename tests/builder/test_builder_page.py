"""The audience builder (`GET /builder`) in a real browser against a real service.

The service runs as `python -m audiencefilter.service serve` on 127.0.0.1 with a temporary
SQLite database; a list is seeded through the API; headless Chromium builds "VIP in France who
shared 3 times in 30 days" by clicking and typing, and the preview must say what the library
says over the same contacts. Then: save, reload, find it, break a rule and see the error at
that rule, drive the builder from the text box and the text box from the builder, screenshots
at 1280 and 390 px wide, and delete. One browser session for the module.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest

import audiencefilter as af

from .browser import full_page_screenshot, set_viewport
from .helpers import (
    SCREENSHOTS,
    Service,
    _all,
    _by_id,
    _choose,
    _console_400s,
    _count,
    _fits,
    _open_page,
    _press,
    _root,
    _rules,
    _screenshots,
    _served,
    _signed_in,
    _text_box,
    _type,
    _use_key,
    _wait,
)

VIP_FRANCE_SHARERS = (
    'points >= 1000 and country = "FR" and '
    'count(actions where name = "share" and createdAt >= 30 days ago) >= 3'
)
NAME = "VIP France sharers"

# email: (points, country, recent shares, shares 40 days ago)
PEOPLE = {
    "ann@example.com": (1500, "FR", 3, 0),
    "bob@example.com": (2000, "FR", 2, 2),
    "cat@example.com": (1200, "FR", 4, 0),
    "dan@example.com": (900, "FR", 5, 0),
    "eve@example.com": (3000, "DE", 3, 0),
    "fay@example.com": (1000, "FR", 3, 0),
    "gus@example.com": (5000, None, 3, 0),
    "hal@example.com": (1100, "FR", 0, 0),
}


def _seed(url: str, key: str) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    headers = {"apiKey": key}
    now = datetime.now(UTC)
    with httpx.Client(base_url=url, headers=headers, timeout=30) as http:
        created = http.post("/v4/lists", json={"name": "Shop"})
        assert created.status_code == 201, created.text
        list_id = created.json()["data"]["list"]["id"]
        ids: dict[str, str] = {}
        records = []
        for email, (points, country, recent, old) in PEOPLE.items():
            body = {"listId": list_id, "email": email, "points": points, "country": country}
            contact = http.post("/v4/contacts", json=body)
            assert contact.status_code == 201, contact.text
            made = contact.json()["data"]["contact"]
            ids[email] = made["id"]
            signed_up = datetime.fromisoformat(made["createdAt"].replace("Z", "+00:00"))
            actions: list[dict[str, Any]] = []
            for days in [1] * recent + [40] * old + [2]:
                name = "share" if len(actions) < recent + old else "like"
                when = now - timedelta(days=days)
                action = {"name": name, "increase": 0, "subId": ids[email]}
                answer = http.post("/v4/actions", json={**action, "createdAt": when.isoformat()})
                assert answer.status_code == 201, answer.text
                actions.append({"id": "", "name": name, "increase": 0, "createdAt": when})
            record = {"email": email, "points": points, "country": country}
            record["referrals"] = made["referrals"]
            records.append({**record, "createdAt": signed_up, "actions": actions})
    return list_id, ids, records


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with _served(tmp_path_factory, "builder", _seed, Service) as served:
        yield served


# ---- helpers ---------------------------------------------------------------------------------


def _csp_violations(driver: Any) -> list[str]:
    logs = driver.get_log("browser")
    return [e["message"] for e in logs if "Content Security Policy" in e["message"]]


# ---- tests ---------------------------------------------------------------------------------


def test_a_public_key_is_refused_with_a_clear_message(browser: Any, service: Service) -> None:
    _open_page(browser, service)
    _use_key(browser, service.public_key)
    status = _by_id(browser, "key-status")
    _wait(browser, lambda: "public key" in status.text, "no refusal shown")
    assert "private key" in status.text
    assert not _by_id(browser, "workspace").is_displayed()
    assert browser.execute_script("return sessionStorage.length") == 0
    assert service.public_key not in browser.current_url


def test_build_preview_save_reload_and_keep_text_and_rules_in_step(
    browser: Any, service: Service
) -> None:
    from selenium.webdriver.common.keys import Keys

    _open_page(browser, service)
    _use_key(browser, service.private_key)
    _wait(browser, lambda: _by_id(browser, "workspace").is_displayed(), "no workspace")
    # The key is in this tab's session storage, and nowhere a link or a cookie would carry it.
    stored = browser.execute_script("return Object.values(Object.assign({}, sessionStorage))")
    assert service.private_key in stored
    assert browser.execute_script("return document.cookie") == ""
    assert service.private_key not in browser.current_url

    # VIP: points >= 1000 (a condition added from the keyboard: Space on "+ Condition").
    root = _root(browser)
    _press(browser, f"{root}-add-rule", Keys.SPACE)
    _wait(browser, lambda: len(_rules(browser)) == 1)
    points = _rules(browser)[0]
    _choose(browser, f"{points}-field", "points")
    _choose(browser, f"{points}-op", "gte")
    _type(browser, f"{points}-value", "1000")
    # In France (Enter on "+ Condition").
    _press(browser, f"{root}-add-rule", Keys.ENTER)
    _wait(browser, lambda: len(_rules(browser)) == 2)
    country = _rules(browser)[1]
    _choose(browser, f"{country}-field", "country")
    _choose(browser, f"{country}-op", "equals")
    _type(browser, f"{country}-value", "FR")
    # Who shared 3 times in the last 30 days (a behaviour condition, by clicking).
    _by_id(browser, f"{root}-add-behaviour").click()
    _wait(browser, lambda: len(_rules(browser)) == 3)
    shares = _rules(browser)[2]
    _choose(browser, f"{shares}-quantifier", "count")
    _type(browser, f"{shares}-name", "share")
    _choose(browser, f"{shares}-window", "last")
    _type(browser, f"{shares}-window-n", "30")
    _choose(browser, f"{shares}-window-unit", "day")
    _choose(browser, f"{shares}-count-op", "gte")
    _type(browser, f"{shares}-count-value", "3")

    expected = service.expected(VIP_FRANCE_SHARERS)
    assert expected == 3  # ann, cat, fay: the seed is what the test thinks it is
    _wait(browser, lambda: _count(browser) == str(expected), "preview count")
    _wait(browser, lambda: "count(actions where" in _text_box(browser), "text box")
    assert service.expected(_text_box(browser)) == expected
    members = [row.text for row in _all(browser, "#members tbody tr")]
    assert sorted(m.split()[0] for m in members) == [
        "ann@example.com",
        "cat@example.com",
        "fay@example.com",
    ]

    # Why bob is out: found by part of his e-mail, then the library's explanation.
    _type(browser, "explain-search", "bob@")
    _wait(browser, lambda: len(_all(browser, "#explain-results button.result")) == 1, "search")
    _all(browser, "#explain-results button.result")[0].click()
    verdict = "bob@example.com is not in the audience"
    _wait(browser, lambda: verdict in _by_id(browser, "explanation").text, "explanation")
    assert "FALSE" in _by_id(browser, "explanation").text

    # Save; the activity panel shows the change's events.
    _type(browser, "audience-name", NAME)
    _by_id(browser, "save").click()
    _wait(browser, lambda: "Saved" in _by_id(browser, "save-status").text, "not saved")
    _wait(browser, lambda: len(_all(browser, '#events li[data-type="audience.entered"]')) == 3)
    assert _all(browser, '#events li[data-type="audience.created"]')

    # Screenshots at 1280 and 390 px wide; at 390 nothing is wider than the screen.
    _screenshots(browser, "builder")

    # Reload: the key is still there, and so is the audience.
    browser.refresh()
    _wait(browser, lambda: _by_id(browser, "workspace").is_displayed(), "no workspace")

    def saved() -> list[Any]:
        return [b for b in _all(browser, "#audience-list button") if b.text.startswith(NAME)]

    _wait(browser, lambda: len(saved()) == 1 and "(3 members)" in saved()[0].text, "not saved")
    _wait(browser, lambda: saved()[0].click() is None)
    _wait(browser, lambda: len(_rules(browser)) == 3, "the saved rules")
    _wait(browser, lambda: _count(browser) == str(expected))
    points = _rules(browser)[0]
    assert _by_id(browser, f"{points}-value").get_attribute("value") == "1000"

    # Break a rule: a text value in a number field; the library's error is shown at that rule.
    _type(browser, f"{points}-value", "lots")
    error = _by_id(browser, f"{points}-error")
    _wait(browser, lambda: "expected a number" in error.text, "no error at the rule")
    assert not error.text.lstrip().startswith("{")  # words, not a JSON dump
    assert _by_id(browser, f"{points}-value").get_attribute("aria-invalid") == "true"
    for other in _rules(browser)[1:]:
        assert _by_id(browser, f"{other}-error").text == ""
    _type(browser, f"{points}-value", "1000")
    _wait(browser, lambda: error.text == "" and _count(browser) == str(expected))

    # The text box drives the builder...
    _type(browser, "filter-text", 'points >= 500 and country = "FR"')
    _wait(browser, lambda: len(_rules(browser)) == 2, "the builder did not follow the text")
    first, second = _rules(browser)
    _wait(browser, lambda: _by_id(browser, f"{first}-value").get_attribute("value") == "500")
    assert _by_id(browser, f"{second}-value").get_attribute("value") == "FR"
    _wait(
        browser,
        lambda: _count(browser) == str(service.expected('points >= 500 and country = "FR"')),
    )
    # ...and the builder drives the text box.
    _type(browser, f"{second}-value", "DE")
    _wait(browser, lambda: 'country = "DE"' in _text_box(browser), "the text did not follow")
    assert _text_box(browser) == 'points >= 500 and country = "DE"'
    # A problem in the text is shown under the box, by line and column.
    _type(browser, "filter-text", "points >= lots")
    text_errors = _by_id(browser, "text-errors")
    _wait(browser, lambda: "Line 1, column" in text_errors.text, "no error under the text box")
    assert len(_rules(browser)) == 2  # the rules stay as they were
    _type(browser, "filter-text", 'points >= 500 and country = "DE"')
    _wait(browser, lambda: text_errors.text == "")

    # Rename only: the list and the feed follow.
    _type(browser, "audience-name", "VIP sharers")
    _by_id(browser, "rename").click()
    _wait(browser, lambda: "Renamed" in _by_id(browser, "save-status").text, "not renamed")
    _wait(
        browser,
        lambda: any(
            b.text.startswith("VIP sharers") for b in _all(browser, "#audience-list button")
        ),
        "the list did not follow the rename",
    )
    _wait(browser, lambda: _all(browser, '#events li[data-type="audience.updated"]'))

    # Delete it (with a confirmation); it leaves the list and the feed says so.
    _by_id(browser, "delete").click()
    _by_id(browser, "confirm-delete-yes").click()
    _wait(browser, lambda: "Deleted" in _by_id(browser, "save-status").text)
    _wait(browser, lambda: _all(browser, '#events li[data-type="audience.deleted"]'))
    _wait(
        browser, lambda: not [b for b in _all(browser, "#audience-list button") if "VIP" in b.text]
    )
    assert _csp_violations(browser) == []


def test_an_audience_reference_and_a_calendar_condition_from_the_builder(
    browser: Any, service: Service
) -> None:
    _signed_in(browser, service)
    with httpx.Client(base_url=service.url, headers={"apiKey": service.private_key}) as http:
        body = {"name": "Big spenders", "listId": service.list_id, "filtersText": "points >= 2000"}
        assert http.post("/v4/audiences", json=body).status_code == 201
    browser.refresh()
    _wait(browser, lambda: _by_id(browser, "workspace").is_displayed(), "no workspace")
    root = _root(browser)
    _by_id(browser, f"{root}-add-audience").click()
    _wait(browser, lambda: len(_rules(browser)) == 1)
    _by_id(browser, f"{root}-add-rule").click()
    _wait(browser, lambda: len(_rules(browser)) == 2)
    signed_up = _rules(browser)[1]
    _choose(browser, f"{signed_up}-field", "createdAt")
    _choose(browser, f"{signed_up}-op", "within")
    _choose(browser, f"{signed_up}-dir", "this")
    _choose(browser, f"{signed_up}-unit", "month")
    _type(browser, f"{signed_up}-zone", "Europe/Paris")
    # The zone is typed after the unit: the text box shows it once its input reached the tree.
    zoned = 'createdAt within this month in "Europe/Paris"'
    _wait(browser, lambda: zoned in _text_box(browser), "text box")
    text = _text_box(browser)
    assert re.fullmatch(
        r'audiences some \(name = "Big spenders"\) and createdAt within this month in '
        r'"Europe/Paris"',
        text,
    )
    # Members of "Big spenders" who signed up this month: what the library says of them.
    expected = service.expected('points >= 2000 and createdAt within this month in "Europe/Paris"')
    assert expected == 3  # bob, eve, gus
    _wait(browser, lambda: _count(browser) == str(expected), "preview count")


def test_a_custom_list_field_offers_only_the_tests_the_library_takes(
    browser: Any, service: Service
) -> None:
    # A list kept inside `data` takes has, has some and has every, case-sensitive, and has no
    # items / has items (a missing key, null and [] read as docs/semantics-json.md says): no
    # "ignoring case". The test signs in itself: run alone, no earlier test left the key.
    with httpx.Client(base_url=service.url, headers={"apiKey": service.private_key}) as http:
        body = {"key": "tags", "type": "string[]"}
        declared = http.post(f"/v4/lists/{service.list_id}/fields", json=body)
        assert declared.status_code == 201, declared.text
    _signed_in(browser, service)
    root = _root(browser)
    _by_id(browser, f"{root}-add-rule").click()
    _wait(browser, lambda: len(_rules(browser)) == 1)
    tags = _rules(browser)[0]
    _choose(browser, f"{tags}-field", "tags")
    options = _all(browser, f"#{tags}-op option")
    offered = [option.get_attribute("value") for option in options]
    assert offered == ["has", "hasSome", "hasEvery", "isEmpty", "notEmpty", "null", "notnull"]
    assert not _all(browser, f"#{tags}-case")
    _type(browser, f"{tags}-value", "vip")
    _wait(browser, lambda: _text_box(browser) == 'tags has "vip"', "text box")


# ---- the picker, the search, undo, typing without 400s --------------------------------------


def _fresh_rule(driver: Any, service: Service) -> str:
    """A new audience with one condition, in a tab holding the private key."""
    _signed_in(driver, service)
    _by_id(driver, "new-audience").click()
    root = _root(driver)
    _by_id(driver, f"{root}-add-rule").click()
    _wait(driver, lambda: len(_rules(driver)) == 1)
    return _rules(driver)[0]


def test_the_zone_picker_offers_the_library_zones(browser: Any, service: Service) -> None:
    signed_up = _fresh_rule(browser, service)
    _choose(browser, f"{signed_up}-field", "createdAt")
    _choose(browser, f"{signed_up}-op", "within")
    _choose(browser, f"{signed_up}-dir", "this")
    _choose(browser, f"{signed_up}-unit", "year")
    zone = _by_id(browser, f"{signed_up}-zone")
    assert zone.get_attribute("list") == "time-zones"
    offered = browser.execute_script(
        "return [...document.querySelectorAll('#time-zones option')].map(o => o.value)"
    )
    assert offered == sorted(af.zone_names())
    _console_400s(browser)
    # A misspelt zone is caught in the page, at the rule, without asking the service.
    _type(browser, f"{signed_up}-zone", "Europe/Pariss")
    error = _by_id(browser, f"{signed_up}-error")
    _wait(browser, lambda: "unknown time zone" in error.text, "no zone error at the rule")
    # A long name is kept whole.
    _type(browser, f"{signed_up}-zone", "America/New_York")
    wanted = 'createdAt within this year in "America/New_York"'
    _wait(browser, lambda: _text_box(browser) == wanted, "text box")
    assert error.text == ""
    expected = service.expected(wanted)
    _wait(browser, lambda: _count(browser) == str(expected), "preview count")
    assert _console_400s(browser) == []


def test_typing_a_rule_asks_the_service_nothing_it_would_refuse(
    browser: Any, service: Service
) -> None:
    from selenium.webdriver.common.keys import Keys

    points = _fresh_rule(browser, service)
    _choose(browser, f"{points}-field", "points")
    _choose(browser, f"{points}-op", "gte")
    _console_400s(browser)
    value = _by_id(browser, f"{points}-value")
    for key in "lots":  # one key at a time, as a person types
        value.send_keys(key)
    error = _by_id(browser, f"{points}-error")
    _wait(browser, lambda: "expected a number" in error.text, "no error at the rule")
    for _ in "lots":
        value.send_keys(Keys.BACKSPACE)
    for key in "1200":
        value.send_keys(key)
    expected = service.expected("points >= 1200")
    _wait(browser, lambda: _count(browser) == str(expected), "preview count")
    assert error.text == ""
    assert _console_400s(browser) == []


def test_why_in_or_out_finds_a_contact_by_searching(browser: Any, service: Service) -> None:
    points = _fresh_rule(browser, service)
    _choose(browser, f"{points}-field", "points")
    _choose(browser, f"{points}-op", "gte")
    _type(browser, f"{points}-value", "1000")
    _wait(browser, lambda: _count(browser) == str(service.expected("points >= 1000")))
    # Part of an address, any case: only the contacts whose e-mail holds it.
    _type(browser, "explain-search", "DA")
    _wait(browser, lambda: _all(browser, "#explain-results button.result"), "no results")
    found = [b.text for b in _all(browser, "#explain-results button.result")]
    assert found == ["dan@example.com"]
    _type(browser, "explain-search", "nobody-here")
    _wait(browser, lambda: "No contact" in _by_id(browser, "explain-results").text)
    _type(browser, "explain-search", "dan@")
    _wait(browser, lambda: len(_all(browser, "#explain-results button.result")) == 1)
    _all(browser, "#explain-results button.result")[0].click()
    explanation = _by_id(browser, "explanation")
    _wait(browser, lambda: "dan@example.com is not in the audience" in explanation.text)
    assert "Points = 900" in explanation.text  # the field by its label
    assert service.contacts["dan@example.com"] not in explanation.text  # the e-mail, not the id


def test_undo_takes_back_the_last_changes(browser: Any, service: Service) -> None:
    from selenium.webdriver.common.keys import Keys

    points = _fresh_rule(browser, service)
    assert _by_id(browser, "undo").is_enabled()
    _choose(browser, f"{points}-field", "points")
    _choose(browser, f"{points}-op", "gte")
    _type(browser, f"{points}-value", "1000")
    _wait(browser, lambda: _text_box(browser) == "points >= 1000", "text box")
    root = _root(browser)
    _by_id(browser, f"{root}-add-rule").click()
    _wait(browser, lambda: len(_rules(browser)) == 2)
    # Undo the second condition: the first is as it was, and so are the text and the count.
    _by_id(browser, "undo").click()
    _wait(browser, lambda: len(_rules(browser)) == 1, "the condition was not undone")
    _wait(browser, lambda: _text_box(browser) == "points >= 1000", "text box after undo")
    assert _by_id(browser, f"{points}-value").get_attribute("value") == "1000"
    _wait(browser, lambda: _count(browser) == str(service.expected("points >= 1000")))
    # Ctrl+Z outside a text field: the typing of "1000" goes back in one step.
    browser.execute_script("document.activeElement.blur()")
    browser.find_element("tag name", "body").send_keys(Keys.CONTROL, "z")
    _wait(browser, lambda: _by_id(browser, f"{points}-value").get_attribute("value") == "")
    # Undo down to the empty builder, then no further.
    while _by_id(browser, "undo").is_enabled():
        _by_id(browser, "undo").click()
    _wait(browser, lambda: _rules(browser) == [], "not back to the start")
    assert _text_box(browser) == ""


def test_the_new_controls_at_1280_and_390_px(browser: Any, service: Service) -> None:
    # A field reference, the start of a period in a zone, a sum over actions filtered on
    # their increase; what the library says of them; screenshots for the docs.
    referral = _fresh_rule(browser, service)
    root = _root(browser)
    _choose(browser, f"{referral}-field", "points")
    _choose(browser, f"{referral}-op", "gt")
    _choose(browser, f"{referral}-kind", "field")
    _choose(browser, f"{referral}-ref", "referrals")
    _by_id(browser, f"{root}-add-rule").click()
    _wait(browser, lambda: len(_rules(browser)) == 2)
    since = _rules(browser)[1]
    _choose(browser, f"{since}-field", "createdAt")
    _choose(browser, f"{since}-op", "gte")
    _choose(browser, f"{since}-kind", "startOf")
    _choose(browser, f"{since}-start-offset", "-1")
    _choose(browser, f"{since}-start-unit", "month")
    _type(browser, f"{since}-start-zone", "Europe/Paris")
    _by_id(browser, f"{root}-add-behaviour").click()
    _wait(browser, lambda: len(_rules(browser)) == 3)
    shares = _rules(browser)[2]
    _choose(browser, f"{shares}-quantifier", "count")
    _by_id(browser, f"{shares}-increased").click()
    _choose(browser, f"{shares}-increase-op", "gte")
    _type(browser, f"{shares}-increase", "0")
    _type(browser, f"{shares}-count-value", "2")
    wanted = (
        'points > referrals and createdAt >= start of last month in "Europe/Paris" and '
        'count(actions where name = "share" and increase >= 0) >= 2'
    )
    _wait(browser, lambda: _text_box(browser) == wanted, "text box")
    _wait(browser, lambda: _count(browser) == str(service.expected(wanted)), "preview count")
    _type(browser, "explain-search", "eve")
    _wait(browser, lambda: len(_all(browser, "#explain-results button.result")) == 1)
    _all(browser, "#explain-results button.result")[0].click()
    _wait(browser, lambda: "eve@example.com is" in _by_id(browser, "explanation").text)
    for width in (1280, 390):
        set_viewport(browser, width)
        _wait(browser, lambda w=width: browser.execute_script("return innerWidth") == w)
        _fits(browser, width)
        jump = _by_id(browser, "jump-preview")
        assert jump.is_displayed() == (width < 1000)  # the bar to the preview, on phones
        full_page_screenshot(browser, SCREENSHOTS / f"builder-controls-{width}.png")
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def test_a_date_is_picked_not_typed(browser: Any, service: Service) -> None:
    signed_up = _fresh_rule(browser, service)
    _choose(browser, f"{signed_up}-field", "createdAt")
    _choose(browser, f"{signed_up}-op", "lt")
    picker = _by_id(browser, f"{signed_up}-date")
    assert picker.get_attribute("type") == "date"
    # What the native picker does when a day is chosen (its pop-up is the browser's own).
    browser.execute_script(
        "arguments[0].value = '2020-01-31';"
        "arguments[0].dispatchEvent(new Event('change', {bubbles: true}))",
        picker,
    )
    value = _by_id(browser, f"{signed_up}-value")
    _wait(browser, lambda: value.get_attribute("value") == "2020-01-31", "the day was not set")
    expected = service.expected('createdAt < "2020-01-31"')
    _wait(browser, lambda: _count(browser) == str(expected), "preview count")
    _wait(browser, lambda: _text_box(browser).startswith("createdAt < 2020-01-31"), "text box")
    # E-mails in the members' table break after "@" or a dot only, never inside a word.
    _choose(browser, f"{signed_up}-op", "gte")
    _wait(browser, lambda: _all(browser, "#members .email"), "no members")
    wraps = browser.execute_script(
        "const e = document.querySelector('#members .email');"
        "const s = getComputedStyle(e); return [s.overflowWrap, s.wordBreak]"
    )
    assert wraps == ["normal", "normal"]
