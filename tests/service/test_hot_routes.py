"""The hot route answers exactly as the FastAPI route it stands before (`api/hot_routes.py`).

Two applications, one with the hot route (the default) and one without
(`AUDIENCEFILTER_HOT_ROUTES=false`), each on a database of its own, are built once for the
module; each test sets up two accounts of its own alike on both and sends both the same
requests in the same order. Their answers (status, body, the headers a client reads) must be
the same once the ids each database drew are named alike. The requests are the plain ones the
hot route takes and every kind it hands on: a bad body, a query, another content type, no key,
a public key, another account's contact, a duplicate or suppressed e-mail, a body past the limit.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiencefilter.service import create_app
from audiencefilter.service.api import hot_routes

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings

READ_HEADERS = ("content-type", "ratelimit", "ratelimit-policy", "retry-after", "connection")
TIME = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?")


@dataclass
class Side:
    """One application, its tenant, and the ids it drew, by the names both sides use."""

    api: ApiClient
    tenant: Tenant
    other: Tenant
    ids: dict[str, str] = field(default_factory=dict)

    def send(self, method: str, path: str, key: str = "private", **kwargs: Any) -> Any:
        for name, value in self.ids.items():
            path = path.replace(f"<{name}>", value)
        headers = dict(kwargs.pop("headers", {}))
        if key in ("private", "public"):
            headers["apiKey"] = getattr(self.tenant, f"{key}_key")
        elif key == "other":
            headers["apiKey"] = self.other.private_key
        elif key != "none":
            headers["apiKey"] = key
        response = self.api.request(method, path, headers=headers, **kwargs)
        return response.status_code, self._named(response.text), self._headers(response)

    def _named(self, text: str) -> Any:
        for name, value in sorted(self.ids.items(), key=lambda item: -len(item[1])):
            text = text.replace(value, f"<{name}>")
        text = TIME.sub("<instant>", text)
        try:
            return json.loads(text)
        except ValueError:
            return text

    @staticmethod
    def _headers(response: Any) -> dict[str, str]:
        """The headers a client reads; the seconds to the window's end move with the clock."""
        read = {name: response.headers[name] for name in READ_HEADERS if name in response.headers}
        return {name: re.sub(r";t=\d+", ";t=<s>", value) for name, value in read.items()}


def _side(api: ApiClient, hot: bool) -> Side:
    """Two fresh accounts on `api`, set up alike on either side: a test reads only its own."""
    assert any(isinstance(r, hot_routes.HotRoute) for r in api.app.router.routes) is hot
    tenant, other = make_tenant(api, plan="pro"), make_tenant(api, plan="pro")
    side = Side(api, tenant, other)
    lst = tenant.new_list()
    side.ids["list"], side.ids["url"] = lst["id"], lst["url"]
    for name in ("ann", "bob"):
        contact = tenant.new_contact(lst["id"], f"{name}@example.com", points=3, country="FR")
        side.ids[name] = contact["id"]
        side.ids[f"{name}'s code"] = contact["referralLink"].rpartition("ref=")[2]
    audience = tenant.ok(
        "POST",
        "/v4/audiences",
        201,
        json={"name": "big", "listId": lst["id"], "filters": {"points": {"gte": 10}}},
    )["audience"]
    side.ids["audience"] = audience["id"]
    theirs = other.new_list()
    side.ids["their list"], side.ids["their url"] = theirs["id"], theirs["url"]
    eve = other.new_contact(theirs["id"], "eve@example.com")
    side.ids["theirs"] = eve["id"]
    side.ids["eve's code"] = eve["referralLink"].rpartition("ref=")[2]
    gone = tenant.new_contact(lst["id"], "gone@example.com")["id"]
    tenant.ok("POST", f"/v4/lists/{lst['id']}/contacts/{gone}/erase")  # suppressed from now on
    side.ids["account"], side.ids["their account"] = tenant.account_id, other.account_id
    return side


@pytest.fixture(scope="module")
def apps(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ApiClient, ApiClient]]:
    """The module's two applications: the tests work in accounts of their own, so they share
    them (an application costs about 0.15 s of CPU to build and warm, a test 0.1 s)."""
    folder = tmp_path_factory.mktemp("hot-routes")
    made = [
        ApiClient(create_app(sqlite_settings(folder / f"{hot}.db", hot_routes=hot,
                                             max_body_bytes=4096)))
        for hot in (True, False)
    ]  # fmt: skip
    try:
        yield made[0], made[1]
    finally:
        for api in made:
            api.close()


@pytest.fixture
def sides(apps: tuple[ApiClient, ApiClient]) -> Iterator[tuple[Side, Side]]:
    yield _side(apps[0], True), _side(apps[1], False)


JSON = {"content-type": "application/json"}
PATCHES: list[tuple[str, dict[str, Any]]] = [
    ("private", {"json": {"points": 12}}),
    ("private", {"json": {"points": 2, "country": "US", "firstName": "Ann"}}),
    ("private", {"json": {}}),
    ("private", {"json": {"email": "Ann.New@example.com"}}),
    ("private", {"json": {"email": "bob@example.com"}}),  # another contact's: 409
    ("private", {"json": {"email": "gone@example.com"}}),  # suppressed: 409
    ("private", {"json": {"firstName": None, "data": {"plan": "gold"}}}),
    ("private", {"json": {"points": "5"}}),  # strict: a string is no number
    ("private", {"json": {"points": True}}),
    ("private", {"json": {"misspelt": 1}}),
    ("private", {"json": {"points": 2**70}}),
    ("private", {"json": [1, 2]}),
    ("private", {"json": "points"}),
    ("private", {"content": b"{", "headers": JSON}),
    ("private", {"content": b"", "headers": JSON}),
    ("private", {"content": b'{"points": NaN}', "headers": JSON}),
    ("private", {"content": b'{"points": 1, "points": 2}', "headers": JSON}),
    ("private", {"content": b'{"points": 4}', "headers": {"content-type": "text/plain"}}),
    ("private", {"content": b'{"points": 4}', "headers": {}}),
    ("private", {"content": b'{"points": 4}', "headers": {"content-type": "application/x+json"}}),
    (
        "private",
        {
            "content": b'{"points": 4}',
            "headers": {"content-type": "Application/JSON; charset=utf-8"},
        },
    ),
    ("private", {"content": b'{"firstName": "' + b"x" * 5000 + b'"}', "headers": JSON}),
    ("none", {"json": {"points": 1}}),
    ("afk_priv_not-a-key", {"json": {"points": 1}}),
    ("public", {"json": {"points": 1}}),
    ("other", {"json": {"points": 1}}),
]


@pytest.mark.parametrize(("key", "sent"), PATCHES, ids=[str(n) for n in range(len(PATCHES))])
@pytest.mark.parametrize("target", ["ann", "theirs", "nobody"])
def test_a_patch_is_answered_alike_with_and_without_the_hot_route(
    sides: tuple[Side, Side], key: str, sent: dict[str, Any], target: str
) -> None:
    path = f"/v4/contacts/<{target}>" if target != "nobody" else "/v4/contacts/con_nobody"
    hot, plain = sides
    assert hot.send("PATCH", path, key, **sent) == plain.send("PATCH", path, key, **sent)
    # The contact as both now hold it, audiences and all.
    read = f"/v4/contacts/<{target}>" if target != "nobody" else path
    assert hot.send("GET", read) == plain.send("GET", read)


@pytest.mark.parametrize("query", ["?points=1", "?a=1&a=2", "?"])
def test_a_patch_with_a_query_is_handed_on(sides: tuple[Side, Side], query: str) -> None:
    hot, plain = sides
    path = f"/v4/contacts/<ann>{query}"
    sent = {"json": {"points": 20}}
    assert hot.send("PATCH", path, **sent) == plain.send("PATCH", path, **sent)


@pytest.mark.parametrize("method", ["GET", "DELETE", "PUT", "POST"])
def test_other_methods_on_the_path_are_the_fastapi_routes(
    sides: tuple[Side, Side], method: str
) -> None:
    hot, plain = sides
    assert hot.send(method, "/v4/contacts/<bob>") == plain.send(method, "/v4/contacts/<bob>")


def test_the_plain_patch_is_answered_by_the_hot_route(sides: tuple[Side, Side]) -> None:
    """Not a test of nothing: a plain PATCH is taken by the hot route, a bad one handed on."""
    hot, _ = sides
    route = next(r for r in hot.api.app.router.routes if isinstance(r, hot_routes.HotRoute))
    answered: list[Any] = []
    original = route.app.answer

    def spy(*args: Any) -> Any:
        answered.append(args[-1])
        return original(*args)

    route.app.answer = spy
    try:
        assert hot.send("PATCH", "/v4/contacts/<ann>", json={"points": 30})[0] == 200
        assert hot.send("PATCH", "/v4/contacts/<ann>", json={"points": "30"})[0] == 400
    finally:
        route.app.answer = original
    assert len(answered) == 1


FIELDS = ["points", "referrals", "country", "firstName", "email", "website", "isVerified",
          "data", "phoneNumber", "unknown"]  # fmt: skip
NUMBERS = st.integers(-(2**64), 2**64) | st.floats(allow_nan=False, allow_infinity=False)
VALUES = st.recursive(
    st.none() | st.booleans() | NUMBERS
    | st.text(max_size=12) | st.sampled_from(["x@example.com", "https://example.com", "+33 1"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner,
                                                                 max_size=3),
    max_leaves=6,
)  # fmt: skip


@settings(suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(body=st.dictionaries(st.sampled_from(FIELDS), VALUES, max_size=4))
def test_random_bodies_are_answered_alike(
    apps: tuple[ApiClient, ApiClient], body: dict[str, Any]
) -> None:
    hot, plain = _pair(apps)
    assert hot.send("PATCH", "/v4/contacts/<ann>", json=body) == plain.send(
        "PATCH", "/v4/contacts/<ann>", json=body
    )


_PAIRS: dict[int, tuple[Side, Side]] = {}


def _pair(apps: tuple[ApiClient, ApiClient]) -> tuple[Side, Side]:
    """The two sides of the test, set up once for all its examples (their state moves alike)."""
    key = id(apps)
    if key not in _PAIRS:
        _PAIRS.clear()
        _PAIRS[key] = (_side(apps[0], True), _side(apps[1], False))
    return _PAIRS[key]
