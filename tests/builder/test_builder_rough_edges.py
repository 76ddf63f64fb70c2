"""The builder's rough edges, in Chromium at 1280 and 390 px against a real service: the
behaviour row reads "number of actions ≥ 3", the count's test beside its quantifier; action
names are picked from the names the list has seen; the preview table shows the fields the
filter reads; the explanation names fields by label and actions by name; the text box says
what half-typed text lacks, in place, without a request answered 400; an anniversary starts
as "this week" and says that this week's own dates are in, with a button leaving them out.
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import Any

import httpx
import pytest

import audiencefilter as af
from audiencefilter.service.domain.audience_filters import encode_fields, schema_for

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
    _previewed,
    _root,
    _rules,
    _served,
    _signed_in,
    _text_box,
    _type,
    _wait,
)

SCHEMA = schema_for(encode_fields({"birthday": "date"}))
# email: (points, country, birthday, action names)
PEOPLE = {
    "ann@example.com": (1500, "FR", "1990-05-01", ["share", "share", "purchase"]),
    "bob@example.com": (200, "DE", None, ["share", "like"]),
    "cat@example.com": (3000, "FR", "1985-12-24", ["share"]),
}
WIDTHS = (1280, 390)


class Shop(Service):
    def expected(self, text: str) -> int:
        flt = af.parse_text(text, schema=SCHEMA)
        return sum(flt.matches(record) for record in self.records)


def _seed(url: str, key: str) -> tuple[str, dict[str, str], list[dict[str, Any]]]:
    with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as http:
        list_id = http.post("/v4/lists", json={"name": "Shop"}).json()["data"]["list"]["id"]
        field = {"key": "birthday", "type": "date", "label": "Date of birth"}
        assert http.post(f"/v4/lists/{list_id}/fields", json=field).status_code == 201
        ids, records = {}, []
        for email, (points, country, birthday, names) in PEOPLE.items():
            data = {"birthday": birthday} if birthday else {}
            body = {"listId": list_id, "email": email, "points": points, "country": country}
            made = http.post("/v4/contacts", json={**body, "data": data}).json()["data"]
            ids[email] = made["contact"]["id"]
            actions = []
            for name in names:
                action = {"name": name, "increase": 0, "subId": ids[email]}
                answer = http.post("/v4/actions", json=action)
                assert answer.status_code == 201, answer.text
                created = datetime.fromisoformat(answer.json()["data"]["action"]["createdAt"])
                actions.append({"id": "", "name": name, "increase": 0, "createdAt": created})
            signed_up = datetime.fromisoformat(made["contact"]["createdAt"])
            record = {"email": email, "points": points, "country": country, "data": data}
            records.append({**record, "createdAt": signed_up, "actions": actions})
    return list_id, ids, records


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Shop]:
    with _served(tmp_path_factory, "edges", _seed, Shop) as served:
        yield served


@pytest.fixture(params=WIDTHS, ids=[f"{w}px" for w in WIDTHS])
def width(request: pytest.FixtureRequest, browser: Any) -> Iterator[int]:
    set_viewport(browser, request.param)
    yield int(request.param)
    browser.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})


def _new_audience(driver: Any, service: Shop, width: int) -> str:
    _signed_in(driver, service)
    _wait(driver, lambda: driver.execute_script("return innerWidth") == width)
    _by_id(driver, "new-audience").click()
    return _root(driver)


def _box(driver: Any, element_id: str) -> dict[str, float]:
    return driver.execute_script(  # type: ignore[no-any-return]
        "const r = document.getElementById(arguments[0]).getBoundingClientRect();"
        "return {left: r.left, right: r.right, top: r.top, bottom: r.bottom};",
        element_id,
    )


def _same_line(a: dict[str, float], b: dict[str, float]) -> bool:
    return abs((a["top"] + a["bottom"]) / 2 - (b["top"] + b["bottom"]) / 2) < 6


def _add_behaviour(driver: Any, root: str) -> str:
    before = len(_rules(driver))
    driver.execute_script("arguments[0].click()", _by_id(driver, f"{root}-add-behaviour"))
    _wait(driver, lambda: len(_rules(driver)) == before + 1, "no behaviour added")
    return _rules(driver)[-1]


def _click(driver: Any, element_id: str) -> None:
    """A click that no sticky bar of the phone layout can intercept."""
    driver.execute_script("arguments[0].click()", _by_id(driver, element_id))


def test_the_count_test_sits_with_its_quantifier(browser: Any, service: Shop, width: int) -> None:
    root = _new_audience(browser, service, width)
    shares = _add_behaviour(browser, root)
    _click(browser, f"{shares}-increased")
    _wait(browser, lambda: _all(browser, f"#{shares}-increase"), "no increase test")
    _type(browser, f"{shares}-count-value", "2")
    wanted = 'count(actions where name = "share" and increase >= 1) >= 2'
    _wait(browser, lambda: _text_box(browser) == wanted, f"text box: {_text_box(browser)!r}")
    quantifier, op = _box(browser, f"{shares}-quantifier"), _box(browser, f"{shares}-count-op")
    value = _box(browser, f"{shares}-count-value")
    # "number of actions ≥ 2": the count's test right after its quantifier, on its line...
    assert _same_line(quantifier, op) and _same_line(op, value), (quantifier, op, value)
    assert 0 <= op["left"] - quantifier["right"] <= 16
    assert 0 <= value["left"] - op["right"] <= 16
    # ...and "with an increase ≥ 1" after it, its own test beside its checkbox.
    check, increase_op = (
        _box(browser, f"{shares}-increased"),
        _box(browser, f"{shares}-increase-op"),
    )
    assert _same_line(check, increase_op)
    order = browser.execute_script(
        "return [...document.querySelectorAll(arguments[0])].map(e => e.id)",
        f"#{shares} select, #{shares} input",
    )
    assert order.index(f"{shares}-count-value") < order.index(f"{shares}-increased")
    _fits(browser, width)
    browser.execute_script("window.scrollTo(0, 0)")
    full_page_screenshot(browser, SCREENSHOTS / f"builder-behaviour-{width}.png")


def test_action_names_are_picked_from_those_the_list_has_seen(
    browser: Any, service: Shop, width: int
) -> None:
    root = _new_audience(browser, service, width)
    shares = _add_behaviour(browser, root)
    offered = browser.execute_script(
        "return [...document.querySelectorAll('#action-names option')].map(o => o.value)"
    )
    assert offered == ["share", "like", "purchase"]  # most frequent first, then by name
    name = _by_id(browser, f"{shares}-name")
    assert name.get_attribute("list") == "action-names"
    assert name.get_attribute("value") == "share"  # a new behaviour starts on the most frequent
    hint = _by_id(browser, f"{shares}-name-hint")
    assert hint.text == ""
    _type(browser, f"{shares}-name", "purchse")
    _wait(browser, lambda: "No action named “purchse”" in hint.text, "no hint for a new name")
    _type(browser, f"{shares}-name", "purchase")
    _wait(browser, lambda: hint.text == "", "a hint for a seen name")
    # The preview of the whole name, not of a moment of the typing (a pause after the old name
    # was cleared previews no filter, one after "purch" previews that): the count is read
    # with the filter it counts, and only once that filter names "purchase".
    wanted = 'count(actions where name = "purchase") >= 1'
    _wait(browser, lambda: _previewed(browser)[1] == wanted, f"previewed: {_previewed(browser)}")
    assert _previewed(browser) == (str(service.expected(wanted)), wanted)
    assert service.expected(wanted) == 1  # ann
    _wait(browser, lambda: _text_box(browser) == wanted, "text box")
    _fits(browser, width)


def _headers(driver: Any) -> list[str]:
    return [th.text for th in _all(driver, "#members thead th")]


def test_the_preview_shows_the_fields_the_filter_reads(
    browser: Any, service: Shop, width: int
) -> None:
    _new_audience(browser, service, width)
    _type(browser, "filter-text", 'country = "FR" and birthday is not null and points >= 1000')
    _wait(browser, lambda: _count(browser) == "2", "preview count")
    _wait(browser, lambda: _headers(browser) == ["Email", "Country", "Date of birth", "Points"])
    rows = [
        [td.text for td in row.find_elements("css selector", "td")]
        for row in _all(browser, "#members tbody tr")
    ]
    assert sorted(rows) == [
        ["ann@example.com", "FR", "1990-05-01", "1500"],
        ["cat@example.com", "FR", "1985-12-24", "3000"],
    ]
    _type(browser, "filter-text", 'count(actions where name = "like") >= 1')
    _wait(browser, lambda: _count(browser) == "1", "preview count")
    _wait(browser, lambda: _headers(browser) == ["Email", "Name"], "the name for no field")
    _fits(browser, width)


def test_the_explanation_names_fields_by_label_and_actions_by_name(
    browser: Any, service: Shop, width: int
) -> None:
    _new_audience(browser, service, width)
    text = 'birthday is not null and count(actions where name = "share") >= 2'
    _type(browser, "filter-text", text)
    _wait(browser, lambda: _count(browser) == str(service.expected(text)), "preview count")
    _type(browser, "explain-search", "ann@")
    _wait(browser, lambda: len(_all(browser, "#explain-results button.result")) == 1)
    found = _all(browser, "#explain-results button.result")[0]
    browser.execute_script("arguments[0].click()", found)
    explanation = _by_id(browser, "explanation")
    _wait(browser, lambda: "ann@example.com is in the audience" in explanation.text)
    day = service.records[0]["actions"][0]["createdAt"].date().isoformat()  # ann's shares
    assert 'Date of birth = "1990-05-01"' in explanation.text
    assert "data.birthday" not in explanation.text
    assert f"share on {day}, share on {day}" in explanation.text
    assert "act_" not in explanation.text
    _fits(browser, width)
    full_page_screenshot(browser, SCREENSHOTS / f"builder-preview-{width}.png")


def test_the_text_box_says_what_half_typed_text_lacks(
    browser: Any, service: Shop, width: int
) -> None:
    _new_audience(browser, service, width)
    _console_400s(browser)
    errors = _by_id(browser, "text-errors")
    for half in ("points >", "points >= 1000 and", 'points >= 1000 and country = "F'):
        _type(browser, "filter-text", half)
        _wait(browser, lambda: errors.text.startswith("Unfinished:"), f"nothing said of {half!r}")
        assert _by_id(browser, "filter-text").get_attribute("aria-invalid") == "true"
    whole = 'points >= 1000 and country = "FR"'
    _type(browser, "filter-text", whole)
    _wait(browser, lambda: _count(browser) == str(service.expected(whole)), "preview count")
    assert errors.text == ""
    assert _console_400s(browser) == []  # no request answered 400 while typing
    _type(browser, "filter-text", "points >= lots")
    _wait(browser, lambda: "Line 1, column" in errors.text, "no error in place")
    assert errors.text.splitlines()[-2:] == ["points >= lots", " " * 10 + "^"]
    assert _by_id(browser, "filter-text").get_attribute("aria-invalid") == "true"


def test_an_anniversary_starts_this_week_and_says_who_joined_it(
    browser: Any, service: Shop, width: int
) -> None:
    root = _new_audience(browser, service, width)
    _click(browser, f"{root}-add-rule")
    _wait(browser, lambda: len(_rules(browser)) == 1)
    signed_up = _rules(browser)[0]
    _choose(browser, f"{signed_up}-field", "createdAt")
    _choose(browser, f"{signed_up}-op", "anniversary")
    wanted = "createdAt anniversary within this week"
    _wait(browser, lambda: _text_box(browser) == wanted, f"text box: {_text_box(browser)!r}")
    assert _by_id(browser, f"{signed_up}-dir").get_attribute("value") == "this"
    assert _by_id(browser, f"{signed_up}-unit").get_attribute("value") == "week"
    everyone = service.expected(wanted)
    assert everyone == len(PEOPLE)  # all joined this week, so all have their anniversary in it
    _wait(browser, lambda: _count(browser) == str(everyone), "preview count")
    hint = _by_id(browser, f"{signed_up}-hint")
    assert "joined this week" in hint.text
    if width == 1280:
        full_page_screenshot(browser, SCREENSHOTS / "builder-anniversary-1280.png")
    _click(browser, f"{signed_up}-leave-out")
    left_out = f"{wanted} and createdAt < start of this week"
    _wait(browser, lambda: _text_box(browser) == left_out, f"text box: {_text_box(browser)!r}")
    _wait(browser, lambda: _count(browser) == str(service.expected(left_out)), "preview count")
    assert service.expected(left_out) == 0
    _fits(browser, width)
    if width == 390:
        browser.execute_script("window.scrollTo(0, 0)")
        full_page_screenshot(browser, SCREENSHOTS / "builder-anniversary-390.png")
