"""A comparison reads both filters over the schema of its own list, whatever other lists of the
process declare, on SQLite and PostgreSQL: a filter read once in a list with custom fields
(by a preview, a saved audience, an estimate or a compare) is the same canonical JSON as one of a
list without them, and the parsed filters kept per process must never lend the one list's schema
to the other's comparison (the library compares filters of one schema)."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from .conftest import BOTH_DATABASES, ApiClient, Tenant, make_tenant, module_app

_FRESH = itertools.count(1_000)


def _texts() -> tuple[str, str]:
    """Two filters no earlier test of the process has read (the kept filters are per process):
    the first a superset of the second."""
    low = next(_FRESH) * 10
    return f"points >= {low}", f"points >= {low + 3}"


@pytest.fixture(scope="module", params=BOTH_DATABASES)
def api(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[ApiClient]:
    """One app a database for the module: each test makes accounts, lists and filter texts of
    its own (`_texts`), so none reads what another left."""
    with module_app(
        request, tmp_path_factory, "compare_schemas", membership_sweep_seconds=0
    ) as client:
        yield client


def _declare(tenant: Tenant, list_id: str, key: str, kind: str) -> None:
    body = {"key": key, "type": kind}
    tenant.ok("POST", f"/v4/lists/{list_id}/fields", 201, json=body)


def _compare(tenant: Tenant, list_id: str, texts: tuple[str, str]) -> Any:
    a, b = ({"filtersText": text} for text in texts)
    return tenant.ok("POST", "/v4/audiences/compare", json={"listId": list_id, "a": a, "b": b})


def _preview(tenant: Tenant, list_id: str, text: str) -> None:
    tenant.ok("POST", "/v4/audiences/preview", json={"listId": list_id, "filtersText": text})


def _estimate(tenant: Tenant, list_id: str, text: str) -> None:
    tenant.ok("POST", "/v4/audiences/estimate", json={"listId": list_id, "filtersText": text})


def _saved(tenant: Tenant, list_id: str, text: str) -> None:
    body = {"name": f"Saved {text}", "listId": list_id, "mode": "smart", "filtersText": text}
    tenant.ok("POST", "/v4/audiences", 201, json=body)


def _compared(tenant: Tenant, list_id: str, text: str) -> None:
    a, b = {"filtersText": text}, {"filtersText": "points < 0"}
    tenant.ok("POST", "/v4/audiences/compare", json={"listId": list_id, "a": a, "b": b})


READINGS: dict[str, Callable[[Tenant, str, str], None]] = {
    "preview": _preview,
    "estimate": _estimate,
    "saved": _saved,
    "compare": _compared,
}


@pytest.mark.parametrize("reading", sorted(READINGS))
@pytest.mark.parametrize("declared", ["number", "string[]"])
@pytest.mark.parametrize("which", [0, 1])
def test_a_list_with_custom_fields_never_breaks_another_accounts_compare(
    api: ApiClient, reading: str, declared: str, which: int
) -> None:
    """One side's filter (either) read first in another account's list with a custom field of
    each kind, by each request that reads a filter: the plain list's compare still answers,
    and so does the custom list's."""
    owner, other = make_tenant(api), make_tenant(api)
    texts = _texts()
    plain = owner.new_list()["id"]
    custom = other.new_list()["id"]
    _declare(other, custom, "score", declared)
    READINGS[reading](other, custom, texts[which])
    assert _compare(owner, plain, texts)["relation"] == "superset"
    assert _compare(other, custom, texts)["relation"] == "superset"


def test_lists_of_one_account_with_other_fields_compare_alike(api: ApiClient) -> None:
    """Lists declaring different custom fields, and none, each compare one filter, read first
    in another of them, with one read in itself, in every order."""
    owner = make_tenant(api)
    lists = [owner.new_list()["id"] for _ in range(3)]
    _declare(owner, lists[1], "score", "number")
    _declare(owner, lists[2], "birthday", "date")
    low = _texts()[0]
    for list_id in [*lists[1:], lists[0], *reversed(lists)]:
        _preview(owner, list_id, low)
        texts = (low, _texts()[1])  # the second side read here first
        assert _compare(owner, list_id, texts)["relation"] == "superset"
