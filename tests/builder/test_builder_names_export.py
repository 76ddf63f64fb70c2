"""The builder names audiences by name, exports an audience and erases a contact, in Chromium.

A list holds "Big spenders" (points >= 1000), two audiences both called "Twin", and "Fans",
whose stored filter reads "Big spenders" by id. The text box shows "Fans" as
`audiences some (name = "Big spenders")`, not the id; a name typed there previews, and a name
two audiences share is refused in words naming them. "Export CSV" downloads the audience's
members through the export endpoint (with the byte order mark when asked); "Erase this
contact…" asks first, and once confirmed erases the contact and says what the erasure did.
Screenshots at 1280 and 390 px (`builder-export-*.png`).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from .helpers import (
    Seeded,
    Service,
    _all,
    _by_id,
    _count,
    _screenshots,
    _served,
    _signed_in,
    _text_box,
    _type,
    _wait,
)

PEOPLE = {"ann@example.com": 10, "bob@example.com": 2000, "cy@example.com": 2500}
BIG = "Big spenders"


def _seed(url: str, key: str) -> Seeded:
    with httpx.Client(base_url=url, headers={"apiKey": key}, timeout=30) as http:
        made = http.post("/v4/lists", json={"name": "Shop"})
        assert made.status_code == 201, made.text
        list_id = made.json()["data"]["list"]["id"]
        ids = {}
        for email, points in PEOPLE.items():
            body = {"listId": list_id, "email": email, "points": points}
            ids[email] = http.post("/v4/contacts", json=body).json()["data"]["contact"]["id"]
        audiences = [(BIG, "points >= 1000"), ("Twin", "points >= 1"), ("Twin", "points >= 2")]
        made_ids = []
        for name, text in audiences:
            body = {"name": name, "listId": list_id, "filtersText": text}
            answer = http.post("/v4/audiences", json=body)
            assert answer.status_code == 201, answer.text
            made_ids.append(answer.json()["data"]["audience"]["id"])
        where = {"audiences": {"some": {"id": {"equals": made_ids[0]}}}}
        fans = {"name": "Fans", "listId": list_id, "filters": where}
        assert http.post("/v4/audiences", json=fans).status_code == 201
    return list_id, ids, []


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with _served(tmp_path_factory, "names", _seed, Service) as served:
        yield served


def _open_audience(browser: Any, name: str) -> None:
    _wait(browser, lambda: _all(browser, "#audience-list button"), "no audiences")
    [button] = [b for b in _all(browser, "#audience-list button") if b.text.startswith(name)]
    button.click()
    title = _by_id(browser, "editor-title")
    _wait(browser, lambda: title.text == f"Audience “{name}”", "not opened")


def test_the_text_names_an_audience_by_its_name(browser: Any, service: Service) -> None:
    _signed_in(browser, service)
    _open_audience(browser, "Fans")
    named = f'audiences some (name = "{BIG}")'
    _wait(browser, lambda: _text_box(browser) == named, f"text box: {_text_box(browser)}")
    _type(browser, "filter-text", f"{named} and points >= 2100")
    _wait(browser, lambda: _count(browser) == "1", "preview of the name typed")
    _type(browser, "filter-text", 'audiences some (name = "Twin")')
    errors = _by_id(browser, "text-errors")
    _wait(browser, lambda: '"Twin" names 2 audiences' in errors.text, errors.text)
    assert "aud_" in errors.text  # the candidates' ids, to write one instead


def _downloaded(folder: Path) -> Path | None:
    done = [p for p in folder.iterdir() if not p.name.endswith(".crdownload")]
    return done[0] if done else None


def test_export_downloads_the_audience_as_csv(
    browser: Any, service: Service, tmp_path: Path
) -> None:
    browser.execute_cdp_cmd(
        "Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(tmp_path)}
    )
    _signed_in(browser, service)
    _open_audience(browser, BIG)
    assert _by_id(browser, "export").is_enabled()
    _by_id(browser, "export-bom").click()
    _by_id(browser, "export").click()
    status = _by_id(browser, "export-status")
    _wait(browser, lambda: f"Downloaded {BIG}.csv" in status.text, status.text)
    _wait(browser, lambda: _downloaded(tmp_path) is not None, "no file")
    content = _file(tmp_path)
    assert content.startswith(b"\xef\xbb\xbfid,email,"), content[:80]
    emails = {line.split(b",")[1] for line in content.splitlines()[1:]}
    assert emails == {b"bob@example.com", b"cy@example.com"}


def _file(folder: Path) -> bytes:
    """The downloaded file's bytes, once Chromium finished writing it."""
    path = _downloaded(folder)
    assert path is not None and path.name == f"{BIG}.csv", path
    for _ in range(50):
        if path.stat().st_size:
            break
        time.sleep(0.1)
    return path.read_bytes()


def test_erase_asks_first_then_erases_and_says_what_it_did(browser: Any, service: Service) -> None:
    _signed_in(browser, service)
    assert _by_id(browser, "erase-area").is_displayed() is False
    _type(browser, "explain-search", "ann@")
    _wait(browser, lambda: _all(browser, "#explain-results button.result"), "no contact found")
    _all(browser, "#explain-results button.result")[0].click()
    _wait(browser, lambda: _by_id(browser, "erase-area").is_displayed())
    _by_id(browser, "erase").click()
    question = _by_id(browser, "confirm-erase-text")
    _wait(browser, lambda: "Erase ann@example.com for good?" in question.text, question.text)
    _by_id(browser, "confirm-erase-no").click()
    assert _contact_status(service, "ann@example.com") == 200
    _by_id(browser, "erase").click()
    _by_id(browser, "confirm-erase-yes").click()
    status = _by_id(browser, "erase-status")
    _wait(browser, lambda: status.text.startswith("Erased ann@example.com"), status.text)
    assert "the contact was deleted" in status.text and "suppressed" in status.text
    assert _contact_status(service, "ann@example.com") == 404
    assert not _by_id(browser, "erase-area").is_displayed()
    _screenshots(browser, "builder-export")  # nothing wider than the screen at 1280 and 390 px


def _contact_status(service: Service, email: str) -> int:
    with httpx.Client(base_url=service.url, headers={"apiKey": service.private_key}) as http:
        return http.get(f"/v4/contacts/{service.contacts[email]}").status_code
