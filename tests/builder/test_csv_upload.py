"""The builder's CSV upload in Chromium against a real service.

A list declares `birthday` (a date) and `plan`. A CRM export whose e-mail column is called
"E-mail address" and which has a "Notes" column is chosen in the page: the columns named as
fields are taken as they are, "Notes" is left out, and "E-mail address" is mapped to `email` in
the page. The check (the service's dry run) shows the valid rows as they would be stored and
names the bad cell (row 2's birthday) and writes nothing; the import then creates the two valid
contacts, with their custom fields in `data`, and says so. Screenshots at 1280 and 390 px.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from .browser import fresh_tab
from .helpers import POLL, _by_id, _key, _screenshots
from .served import served

WAIT = 30  # seconds a condition may take to hold (never asserted as a timing)
EXPORT = (
    "E-mail address,firstName,country,birthday,plan,Notes\n"
    "ada@example.com,Ada,FR,1990-11-23,pro,met at a fair\n"
    "bob@example.com,Bob,DE,1990-13-45,free,\n"
    "cy@example.com,Cy,US,,pro,call back\n"
)


@dataclass
class Service:
    url: str
    key: str
    list_id: str

    def contacts(self) -> dict[str, dict[str, Any]]:
        with httpx.Client(base_url=self.url, headers={"apiKey": self.key}, timeout=30) as http:
            answer = http.get("/v4/contacts", params={"listId": self.list_id})
        assert answer.status_code == 200, answer.text
        return {c["email"]: c for c in answer.json()["data"]["contacts"]}


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    database = f"sqlite:///{tmp_path_factory.mktemp('upload') / 'service.db'}"
    key = _key(database, "private", "crm")
    with served(database) as server:
        with httpx.Client(base_url=server.url, headers={"apiKey": key}, timeout=30) as http:
            made = http.post("/v4/lists", json={"name": "Customers"})
            assert made.status_code == 201, made.text
            list_id = made.json()["data"]["list"]["id"]
            fields = (("birthday", "date", "Birthday"), ("plan", "string", "Plan"))
            for field, kind, label in (*fields, ("lifetimeValue", "number", "Lifetime value")):
                body = {"key": field, "type": kind, "label": label}
                assert http.post(f"/v4/lists/{list_id}/fields", json=body).status_code == 201
        yield Service(server.url, key, list_id)


def _wait(driver: Any, condition: Any, message: str = "") -> Any:
    from selenium.webdriver.support.ui import WebDriverWait

    return WebDriverWait(driver, WAIT, poll_frequency=POLL).until(lambda d: condition(), message)


def _mapping(driver: Any) -> dict[str, str]:
    from selenium.webdriver.common.by import By

    selects = driver.find_elements(By.CSS_SELECTOR, "#import-mapping select")
    return {s.get_attribute("data-column"): s.get_attribute("value") for s in selects}


def _choose(driver: Any, column: str, field: str) -> None:
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    element = driver.find_element(
        By.CSS_SELECTOR, f'#import-mapping select[data-column="{column}"]'
    )
    Select(element).select_by_value(field)


def _choose_file(browser: Any, service: Service, path: Path, text: str) -> None:
    """The builder opened with the service's key, and the file `text` chosen for upload."""
    from selenium.webdriver.common.keys import Keys

    path.write_text(text, encoding="utf-8")
    browser.get(f"{service.url}/builder")
    _wait(browser, lambda: _by_id(browser, "api-key").is_displayed())
    _by_id(browser, "api-key").send_keys(service.key, Keys.ENTER)
    _wait(browser, lambda: _by_id(browser, "import-panel").is_displayed(), "no upload")
    _by_id(browser, "import-file").send_keys(str(path))
    columns = len(text.splitlines()[0].replace(";", ",").split(","))
    _wait(browser, lambda: len(_mapping(browser)) == columns, "no columns")


def test_an_export_is_mapped_checked_and_imported(
    browser: Any, service: Service, tmp_path: Path
) -> None:
    from selenium.webdriver.common.by import By

    fresh_tab(browser)
    _choose_file(browser, service, tmp_path / "crm-export.csv", EXPORT)
    assert _mapping(browser) == {
        "E-mail address": "",
        "firstName": "firstName",
        "country": "country",
        "birthday": "birthday",
        "plan": "plan",
        "Notes": "",
    }
    _choose(browser, "E-mail address", "email")

    _by_id(browser, "import-check").click()
    status = _by_id(browser, "import-status")
    _wait(browser, lambda: "3 rows: 2 would be imported" in status.text, status.text)
    problems = browser.find_elements(By.CSS_SELECTOR, "#import-problems li")
    assert [p.text.split(":")[0] for p in problems] == ["Row 2, birthday"]
    assert "YYYY-MM-DD" in problems[0].text
    preview = browser.find_elements(By.CSS_SELECTOR, "#import-preview tbody tr")
    assert [row.text.split()[:2] for row in preview] == [
        ["1", "ada@example.com"],
        ["3", "cy@example.com"],
    ]
    assert "data.birthday" in _by_id(browser, "import-preview").text
    assert service.contacts() == {}

    _screenshots(browser, "builder-import")

    _by_id(browser, "import-run").click()
    _wait(browser, lambda: status.text.startswith("Imported"), status.text)
    assert "3 rows read, 2 created" in status.text and "1 rejected" in status.text
    logs = browser.get_log("browser")
    assert [e["message"] for e in logs if "Content Security Policy" in e["message"]] == []

    stored = service.contacts()
    assert sorted(stored) == ["ada@example.com", "cy@example.com"]
    assert stored["ada@example.com"]["data"] == {"birthday": "1990-11-23", "plan": "pro"}
    assert stored["cy@example.com"]["data"] == {"plan": "pro"}


EUROPEAN = (
    "email;Plan;Birthday;Lifetime value\n"
    "maelle@example.fr;pro;26/11/1990;1\u00a0234,56\n"
    "jorg@example.de;free;01/02/1985;12,5\n"
    "MAELLE@example.fr;pro;26/11/1990;1\u00a0234,56\n"
)


def test_a_european_file_is_read_as_the_check_proposes(
    browser: Any, service: Service, tmp_path: Path
) -> None:
    """A file of French Excel: `;` between cells, dates day first, decimal commas, and headers
    that are the fields' labels. The columns are mapped by their labels, the check proposes
    the format, the page takes it and checks again, and the import stores what was meant."""
    from selenium.webdriver.support.ui import Select

    fresh_tab(browser)
    _choose_file(browser, service, tmp_path / "export-fr.csv", EUROPEAN)
    assert _mapping(browser) == {
        "email": "email",
        "Plan": "plan",
        "Birthday": "birthday",
        "Lifetime value": "lifetimeValue",
    }
    shown = Select(_by_id(browser, "map-3")).first_selected_option.text
    assert shown == "Lifetime value"

    _by_id(browser, "import-check").click()
    status = _by_id(browser, "import-status")
    _wait(browser, lambda: "3 rows: 3 would be imported" in status.text, status.text)
    assert "1 repeat an earlier row's e-mail" in status.text
    repeated = _by_id(browser, "import-duplicates").text
    assert "Row 3: MAELLE@example.fr, as row 1" in repeated
    assert _by_id(browser, "import-date-order").get_attribute("value") == "DMY"
    assert _by_id(browser, "import-decimal").get_attribute("value") == ","
    assert "DD/MM/YYYY" in _by_id(browser, "import-proposal").text

    _by_id(browser, "import-run").click()
    _wait(browser, lambda: status.text.startswith("Imported"), status.text)
    assert "3 rows read, 2 created" in status.text and "1 repeated" in status.text

    stored = service.contacts()
    assert stored["maelle@example.fr"]["data"] == {
        "plan": "pro",
        "birthday": "1990-11-26",
        "lifetimeValue": 1234.56,
    }
    assert stored["jorg@example.de"]["data"]["birthday"] == "1985-02-01"
    assert stored["jorg@example.de"]["data"]["lifetimeValue"] == 12.5
