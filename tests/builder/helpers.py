"""What the builder's browser tests share: a seeded service started for a module, the page opened
with a key, and the reads and waits of its controls.

Every wait is on a condition the page shows (an element's text, a control's value, the preview
count's `data-count` and the filter it counts, `data-filters-text`), up to `WAIT` seconds, and
never asserts a time. A test opens the page with the key itself (`_signed_in`): none relies on
an earlier test of its module having left the key in the tab.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import pytest

import audiencefilter as af
from audiencefilter.service.domain.audience_filters import SCHEMA

from .browser import full_page_screenshot, set_viewport
from .served import served

ROOT = Path(__file__).resolve().parents[2]
SCREENSHOTS = ROOT / "build" / "screenshots"
WAIT = 20  # seconds a condition may take to hold (never asserted as a timing)
POLL = 0.05
"""Seconds between two reads of a condition: selenium's own half second, paid by nearly every
wait of a test for a condition that holds a moment later, added up to most of a test's time."""
RATE = {"AUDIENCEFILTER_RATE_LIMIT_FREE": "100000/minute"}


@dataclass
class Service:
    url: str
    private_key: str
    public_key: str
    list_id: str
    contacts: dict[str, str]  # email -> id
    records: list[dict[str, Any]]  # what the library judges

    def expected(self, text: str) -> int:
        flt = af.parse_text(text, schema=SCHEMA)
        return sum(flt.matches(record) for record in self.records)


S = TypeVar("S", bound=Service)
Seeded = tuple[str, dict[str, str], list[dict[str, Any]]]


def _key(database: str, kind: str, account: str = "builder") -> str:
    """A new API key of `kind` (private or public) made by the CLI's `keys create`, as an
    operator makes one; run in this process, which has the service imported already (a child
    interpreter importing it costs seconds a key; tests/service/test_cli.py runs the command
    as its own process)."""
    from audiencefilter.service.commands.main import main

    argv = ["--database-url", database, "keys", "create", "--type", kind, "--account", account]
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = main(argv)
    assert status == 0, err.getvalue()
    return out.getvalue().strip().splitlines()[-1]


@contextmanager
def _served(
    tmp_path_factory: pytest.TempPathFactory,
    name: str,
    seed: Callable[[str, str], Seeded],
    kind: type[S],
    **settings: str,
) -> Iterator[S]:
    """The service on a fresh SQLite database, seeded by `seed(url, private key)`, for a module."""
    database = f"sqlite:///{tmp_path_factory.mktemp(name) / 'service.db'}"
    private_key, public_key = _key(database, "private"), _key(database, "public")
    with served(database, **{**RATE, **settings}) as server:
        list_id, ids, records = seed(server.url, private_key)
        yield kind(server.url, private_key, public_key, list_id, ids, records)


def _wait(driver: Any, condition: Any, message: str = "") -> Any:
    """Until `condition()` holds; an element replaced while it was read (the page renders
    the list again) counts as not yet."""
    from selenium.common.exceptions import StaleElementReferenceException
    from selenium.webdriver.support.ui import WebDriverWait

    waiting = WebDriverWait(
        driver, WAIT, poll_frequency=POLL, ignored_exceptions=(StaleElementReferenceException,)
    )
    return waiting.until(lambda d: condition(), message)


def _by_id(driver: Any, element_id: str) -> Any:
    from selenium.webdriver.common.by import By

    return driver.find_element(By.ID, element_id)


def _all(driver: Any, css: str) -> list[Any]:
    from selenium.webdriver.common.by import By

    return list(driver.find_elements(By.CSS_SELECTOR, css))


def _choose(driver: Any, element_id: str, value: str) -> None:
    from selenium.webdriver.support.ui import Select

    Select(_by_id(driver, element_id)).select_by_value(value)


def _type(driver: Any, element_id: str, text: str) -> None:
    from selenium.webdriver.common.keys import Keys

    field = _by_id(driver, element_id)
    field.send_keys(Keys.CONTROL, "a")
    field.send_keys(Keys.DELETE)
    field.send_keys(text)


def _press(driver: Any, element_id: str, key: str) -> None:
    """Focus a control and press a key on it, as a keyboard user does."""
    element = _by_id(driver, element_id)
    driver.execute_script("arguments[0].focus()", element)
    element.send_keys(key)


def _rules(driver: Any) -> list[str]:
    return [element.get_attribute("id") for element in _all(driver, "#rules .rule")]


def _root(driver: Any) -> str:
    return str(_all(driver, "#rules > fieldset.root")[0].get_attribute("id"))


def _count(driver: Any) -> str | None:
    return _by_id(driver, "preview-count").get_attribute("data-count")  # type: ignore[no-any-return]


def _previewed(driver: Any) -> tuple[str | None, str | None]:
    """The preview's count and the filter it counts (as the service read it), in one read: the
    two come from one answer, never a count of one filter beside the text of the next."""
    count, counted = driver.execute_script(
        "const e = document.getElementById('preview-count');"
        "return [e.dataset.count ?? null, e.dataset.filtersText ?? null];"
    )
    return count, counted


def _text_box(driver: Any) -> str:
    return str(_by_id(driver, "filter-text").get_attribute("value"))


def _open_page(driver: Any, service: Any) -> None:
    driver.get(f"{service.url}/builder")
    _wait(driver, lambda: _by_id(driver, "api-key").is_displayed())


def _use_key(driver: Any, key: str) -> None:
    from selenium.webdriver.common.keys import Keys

    _type(driver, "api-key", key)
    _by_id(driver, "api-key").send_keys(Keys.ENTER)  # the form submits on Enter


def _signed_in(driver: Any, service: Any) -> None:
    """The page open on its workspace with the private key, entered unless this tab holds one."""
    _open_page(driver, service)
    if not driver.execute_script("return sessionStorage.length"):
        _use_key(driver, service.private_key)
    _wait(driver, lambda: _by_id(driver, "workspace").is_displayed(), "no workspace")


def _console_400s(driver: Any) -> list[str]:
    """The browser's log lines of requests answered 400 (read once: the log is drained)."""
    logs = driver.get_log("browser")
    return [e["message"] for e in logs if "status of 400" in e["message"]]


def _fits(driver: Any, width: int) -> None:
    """Nothing on the page is wider than the viewport."""
    overflow = driver.execute_script("return document.documentElement.scrollWidth")
    assert overflow <= width, f"the page is {overflow} px wide at {width}"


def _screenshots(driver: Any, name: str, widths: tuple[int, ...] = (1280, 390)) -> None:
    """The whole page at each width as `name-<width>.png`, nothing wider than the screen at
    any; the window's own size after."""
    for width in widths:
        set_viewport(driver, width)
        _wait(driver, lambda w=width: driver.execute_script("return innerWidth") == w)
        _fits(driver, width)
        full_page_screenshot(driver, SCREENSHOTS / f"{name}-{width}.png")
    driver.execute_cdp_cmd("Emulation.clearDeviceMetricsOverride", {})
