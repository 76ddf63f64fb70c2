"""docs/builder.md's list of what the builder cannot do states the limits the page has: the
audiences it lists per list (`limit=` of the audiences call, api.js) and how many contacts
"why in or out" offers for the text typed (`SEARCH_SHOWN`, app.js). It once said "the first
200 contacts", a limit the page no longer had."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).parent.parent
BUILDER = ROOT / "src" / "audiencefilter" / "service" / "static" / "builder"


def _cannot_do() -> str:
    text = (ROOT / "docs" / "builder.md").read_text(encoding="utf-8")
    return text.split("## What it cannot do yet", 1)[1].split("\n## ", 1)[0]


def test_the_audiences_per_list_are_those_the_page_asks_for() -> None:
    asked = re.search(r"v4/audiences\?listId=\$\{q\(listId\)\}&limit=(\d+)", _api())
    stated = re.search(r"One page of (\d+) audiences", _cannot_do())
    assert asked and stated and asked.group(1) == stated.group(1)


def test_why_in_or_out_offers_the_contacts_the_page_shows() -> None:
    shown = re.search(r"const SEARCH_SHOWN = (\d+);", (BUILDER / "app.js").read_text("utf-8"))
    stated = re.search(r'"Why in or out" shows the first (\d+) contacts', _cannot_do())
    assert shown and stated and shown.group(1) == stated.group(1)
    assert not re.search(r"first \d+ contacts \(for", _cannot_do())


def _api() -> str:
    return (BUILDER / "api.js").read_text(encoding="utf-8")
