"""The request examples of the service's pages run against the service and answer what is shown.

An example is a fenced `http` block (`METHOD /path`, header lines, a blank line, the body)
followed by the block of its answer: `json` (compared as described below) or `text` (compared
line by line, `...` standing for any rest of a line). The examples run in the pages' reading
order for one tenant that owns a list `{list}` with the five demo contacts; `{audience}` is the
id of the last audience an example created.

In a JSON answer, `"..."` stands for any value, a string ending in `...` for any string that
starts with the rest, an object for an object having at least those members, and a list
ending in `"..."` for a list starting with those items.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from audiencefilter.service.commands.demo import DEMO_CONTACTS

from .conftest import ApiClient, Tenant, make_tenant

DOCS = Path(__file__).parents[2] / "docs"
# The pages holding examples, in the order a reader meets them (mkdocs.yml): an example may use
# what an earlier one made (`{audience}`, a custom field declared before an import names it).
PAGES = [
    "service-errors.md",
    "service-audiences.md",
    "service-fields.md",
    "service-import-export.md",
    "service-events.md",
]
_EXAMPLE = re.compile(r"```http\n(.*?)```\n\n```(json|text)\n(.*?)```\n", re.DOTALL)


def examples() -> list[tuple[str, str, str]]:
    text = "\n".join((DOCS / page).read_text("utf-8") for page in PAGES)
    return [m.groups() for m in _EXAMPLE.finditer(text)]  # type: ignore[misc]


def matches(expected: Any, actual: Any) -> bool:
    if expected == "...":
        return True
    if isinstance(expected, str) and expected.endswith("...") and isinstance(actual, str):
        return actual.startswith(expected[:-3])
    if isinstance(expected, dict):
        return isinstance(actual, dict) and all(
            key == "..." or (key in actual and matches(value, actual[key]))
            for key, value in expected.items()
        )
    if isinstance(expected, list):
        if not isinstance(actual, list):
            return False
        if expected and expected[-1] == "...":
            head = expected[:-1]
            return len(actual) >= len(head) and all(map(matches, head, actual))
        return len(expected) == len(actual) and all(map(matches, expected, actual))
    return bool(expected == actual)


def _text_matches(expected: str, actual: str) -> bool:
    want, got = expected.rstrip("\n").split("\n"), actual.rstrip("\n").split("\n")
    return len(want) == len(got) and all(
        g.startswith(w[:-3]) if w.endswith("...") else g == w
        for w, g in zip(want, got, strict=True)
    )


@pytest.fixture(scope="module")
def docs_tenant(client: ApiClient) -> Tenant:
    tenant = make_tenant(client, plan="pro")
    lst = tenant.new_list(name="Demo waitlist")
    for email, first, last, points, verified, city in DEMO_CONTACTS:
        tenant.ok(
            "POST",
            "/v4/contacts",
            201,
            json={
                "listId": lst["id"],
                "email": email,
                "firstName": first,
                "lastName": last,
                "points": points,
                "isVerified": verified,
                "city": city,
            },
        )
    object.__setattr__(tenant, "names", {"list": lst["id"]})
    return tenant


def test_the_page_has_examples() -> None:
    assert len(examples()) >= 4


def test_every_page_holding_examples_is_run() -> None:
    holding = {page.name for page in DOCS.glob("service*.md") if "```http\n" in page.read_text()}
    assert holding == set(PAGES)


def test_examples_answer_what_the_page_shows(docs_tenant: Tenant) -> None:
    names: dict[str, str] = docs_tenant.names  # type: ignore[attr-defined]
    for request, kind, answer in examples():
        for name, value in names.items():
            request = request.replace("{" + name + "}", value)
        head, _, body = request.partition("\n\n")
        first, *header_lines = head.strip().split("\n")
        method, url = first.split(" ", 1)
        headers = dict(line.split(": ", 1) for line in header_lines)
        if body and "Content-Type" not in headers:
            headers["Content-Type"] = "application/json"
        response = docs_tenant.call(method, url, headers=headers, content=body.encode() or None)
        if kind == "json":
            actual = response.json()
            assert matches(json.loads(answer), actual), (first, json.dumps(actual, indent=2))
            audience = (
                (actual.get("data") or {}).get("audience") if isinstance(actual, dict) else None
            )
            if isinstance(audience, dict):
                names["audience"] = audience["id"]
        else:
            assert _text_matches(answer, response.text), (first, response.text)
