"""The example sign-up form (`GET /signup`) in Chromium against a real service.

A list collects a first name and a birthday (a custom date field) from sign-ups
(`publicFields: ["firstName", "data.birthday"]`) and has a private smart audience "VIP"
(`data.tags = "vip"`). The form, opened with the list's public key, shows exactly those fields
(from `GET /v4/lists/{listId}/signup-form`), and signs a contact up with its birthday, which
the private key then reads through the API. A crafted submission (an input `data.tags` added to
the page) is refused with the service's 403 naming `data.tags`, shown on the page, and the
contact lands neither in the list nor in "VIP". Screenshots at 1280 and 390 px.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import httpx
import pytest

from .helpers import _by_id, _key, _screenshots, _wait
from .served import served

VIP = {"data": {"path": ["tags"], "equals": "vip"}}


@dataclass
class Service:
    url: str
    private_key: str
    public_key: str
    list_id: str
    vip_id: str

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"apiKey": self.private_key}, timeout=30)

    def contacts(self) -> dict[str, dict[str, Any]]:
        """The list's contacts by e-mail, read with the private key."""
        with self.api() as http:
            answer = http.get("/v4/contacts", params={"listId": self.list_id})
        assert answer.status_code == 200, answer.text
        return {c["email"]: c for c in answer.json()["data"]["contacts"]}

    def vip_members(self) -> list[str]:
        with self.api() as http:
            answer = http.get(f"/v4/audiences/{self.vip_id}")
        assert answer.status_code == 200, answer.text
        return [c["email"] for c in answer.json()["data"]["audience"]["subs"]]


def _seed(url: str, key: str) -> tuple[str, str]:
    """A list whose form collects a first name and a birthday, with a private VIP audience."""
    with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as http:
        created = http.post("/v4/lists", json={"name": "Newsletter"})
        assert created.status_code == 201, created.text
        list_id = created.json()["data"]["list"]["id"]
        field = {"key": "birthday", "type": "date", "label": "Birthday"}
        assert http.post(f"/v4/lists/{list_id}/fields", json=field).status_code == 201
        opened = {"publicFields": ["firstName", "data.birthday"]}
        assert http.patch(f"/v4/lists/{list_id}", json=opened).status_code == 200
        body = {"name": "VIP", "listId": list_id, "mode": "smart", "filters": VIP}
        audience = http.post("/v4/audiences", json=body)
        assert audience.status_code == 201, audience.text
        return list_id, audience.json()["data"]["audience"]["id"]


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    database = f"sqlite:///{tmp_path_factory.mktemp('signup') / 'service.db'}"
    private_key, public_key = (
        _key(database, "private", "signup"),
        _key(database, "public", "signup"),
    )
    with served(database) as server:
        list_id, vip_id = _seed(server.url, private_key)
        yield Service(server.url, private_key, public_key, list_id, vip_id)


def _field_labels(driver: Any) -> list[str]:
    from selenium.webdriver.common.by import By

    labels = driver.find_elements(By.CSS_SELECTOR, "#signup-fields label")
    return [label.text for label in labels]


def _input(driver: Any, name: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.CSS_SELECTOR, f'#signup-fields input[name="{name}"]')


def _set_date(driver: Any, element: Any, day: str) -> None:
    """What the native date picker does when a day is chosen (its pop-up is the browser's)."""
    driver.execute_script(
        "arguments[0].value = arguments[1];"
        "arguments[0].dispatchEvent(new Event('input', {bubbles: true}))",
        element,
        day,
    )


def _open_from_fragment(driver: Any, service: Service) -> None:
    driver.get("about:blank")  # the same address with a fragment would not load the page again
    driver.get(f"{service.url}/signup#key={service.public_key}&list={service.list_id}")
    _wait(driver, lambda: _by_id(driver, "signup").is_displayed(), "no form")


def test_the_form_shows_the_fields_the_list_opens_and_signs_up_with_a_birthday(
    browser: Any, service: Service
) -> None:
    # Typed in: the public key and the list id.
    browser.get(f"{service.url}/signup")
    _by_id(browser, "public-key").send_keys(service.public_key)
    _by_id(browser, "list-id").send_keys(service.list_id)
    _by_id(browser, "show-form").click()
    _wait(browser, lambda: _by_id(browser, "signup").is_displayed(), "no form")
    assert _field_labels(browser) == ["Email", "First name (optional)", "Birthday (optional)"]
    assert _input(browser, "data.birthday").get_attribute("type") == "date"
    # Neither the key nor the list went into a request's address.
    assert "?" not in browser.current_url

    _input(browser, "email").send_keys("ann@example.com")
    _input(browser, "firstName").send_keys("Ann")
    _set_date(browser, _input(browser, "data.birthday"), "1990-05-01")
    _by_id(browser, "sign-up").click()
    result = _by_id(browser, "signup-result")
    _wait(browser, lambda: "Signed up ann@example.com" in result.text, "no confirmation")

    ann = service.contacts()["ann@example.com"]
    assert ann["firstName"] == "Ann"
    assert ann["data"] == {"birthday": "1990-05-01"}
    assert service.vip_members() == []


def test_a_crafted_field_is_refused_and_the_page_says_which(browser: Any, service: Service) -> None:
    # From the fragment, which no request carries.
    _open_from_fragment(browser, service)
    _input(browser, "email").send_keys("mallory@example.com")
    # A visitor adds an input the form does not have, hoping to land in "VIP".
    browser.execute_script(
        "const crafted = document.createElement('input');"
        "crafted.name = 'data.tags'; crafted.value = 'vip';"
        "document.getElementById('signup-fields').append(crafted);"
    )
    _by_id(browser, "sign-up").click()
    error = _by_id(browser, "signup-error")
    _wait(browser, lambda: "data.tags" in error.text, "no refusal shown")
    assert _field_labels(browser) == ["Email", "First name (optional)", "Birthday (optional)"]
    assert "Not signed up" in error.text and "publicFields" in error.text
    assert error.get_attribute("role") == "alert"
    assert _by_id(browser, "signup-result").text == ""
    assert "mallory@example.com" not in service.contacts()
    assert service.vip_members() == []


def test_the_form_at_1280_and_390_px(browser: Any, service: Service) -> None:
    _open_from_fragment(browser, service)
    _input(browser, "email").send_keys("cat@example.com")
    _input(browser, "firstName").send_keys("Cat")
    _set_date(browser, _input(browser, "data.birthday"), "1985-11-23")
    _screenshots(browser, "signup")
    logs = browser.get_log("browser")
    assert [e["message"] for e in logs if "Content Security Policy" in e["message"]] == []
