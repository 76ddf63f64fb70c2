"""Public keys: sign-ups counted per key and client address, X-Forwarded-For from proxies only."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest

from audiencefilter.service.http.client_address import TrustedProxies
from audiencefilter.service.http.ratelimit import address_bucket

from .conftest import ApiClient, Tenant, make_tenant

PROXIES = ["10.0.0.0/8", "2001:db8:ffff::1"]


def post_from(api: ApiClient, peer: str, headers: dict[str, str], **kwargs: Any) -> httpx.Response:
    """POST /v4/contacts as if the TCP peer were `peer`."""

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=api.app, client=(peer, 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            return await http.post("/v4/contacts", headers=headers, **kwargs)

    return api.run(call)


class SignUps:
    """Creates contacts with fresh emails on one list."""

    def __init__(self, api: ApiClient, tenant: Tenant) -> None:
        self.api, self.tenant = api, tenant
        self.list_id = tenant.new_list()["id"]
        self.count = 0

    def __call__(self, peer: str, *, key: str | None = None, forwarded: str | None = None) -> int:
        return self.response(peer, key=key, forwarded=forwarded).status_code

    def response(
        self, peer: str, *, key: str | None = None, forwarded: str | None = None
    ) -> httpx.Response:
        self.count += 1
        headers = {"apiKey": key or self.tenant.public_key}
        if forwarded is not None:
            headers["X-Forwarded-For"] = forwarded
        body = {"email": f"person{self.count}@example.com", "listId": self.list_id}
        return post_from(self.api, peer, headers, json=body)


@pytest.fixture
def sign_ups(app_factory: Callable[..., ApiClient]) -> SignUps:
    api = app_factory(public_contact_limit="3/minute", trusted_proxies=PROXIES)
    return SignUps(api, make_tenant(api))


def test_a_public_key_gets_three_sign_ups_per_address_then_429(sign_ups: SignUps) -> None:
    first = [sign_ups.response("203.0.113.5") for _ in range(3)]
    assert [response.status_code for response in first] == [201] * 3
    assert first[0].headers["ratelimit-policy"] == '"free";q=100000;w=60, "address";q=3;w=60'
    assert first[2].headers["ratelimit"].endswith('"address";r=0;t=60')
    account_before = first[2].headers["ratelimit"].split(",")[0]

    refused = sign_ups.response("203.0.113.5")
    assert refused.status_code == 429
    message = (
        "Rate limit of 3 contacts per 60 s from one client address with this public key exceeded"
    )
    assert refused.json() == {"error": 429, "message": message, "status": 429, "detail": message}
    assert 1 <= int(refused.headers["retry-after"]) <= 60
    assert refused.headers["ratelimit-policy"] == '"free";q=100000;w=60, "address";q=3;w=60'
    # the refusal spent nothing of the account's quota
    assert refused.headers["ratelimit"].split(",")[0] == account_before

    assert sign_ups("203.0.113.6") == 201  # another address
    assert sign_ups("203.0.113.5", key=sign_ups.tenant.private_key) == 201  # private keys: no
    # another public key at the same address has its own count: past the limits, only the
    # (empty) body is refused
    other_key = make_tenant(sign_ups.api).public_key
    assert post_from(sign_ups.api, "203.0.113.5", {"apiKey": other_key}, json={}).status_code == 400


def test_forwarded_for_is_ignored_from_untrusted_peers(sign_ups: SignUps) -> None:
    for index in range(3):
        assert sign_ups("203.0.113.9", forwarded=f"198.51.100.{index}") == 201
    assert sign_ups("203.0.113.9", forwarded="198.51.100.200") == 429


def test_forwarded_for_from_a_trusted_proxy_names_the_client(sign_ups: SignUps) -> None:
    # client, then an inner proxy of ours, as a two-proxy chain writes it
    chain = "192.0.2.1, 198.51.100.7, 10.9.9.9"
    assert [sign_ups("10.1.2.3", forwarded=chain) for _ in range(4)] == [201] * 3 + [429]
    # the proxy itself is not limited: another client behind it still signs up
    assert sign_ups("10.1.2.3", forwarded="198.51.100.8") == 201
    assert sign_ups("10.1.2.3", forwarded="198.51.100.8:5555") == 201
    # and the client coming directly is the same client
    assert sign_ups("198.51.100.7") == 429


def test_ipv6_clients_are_counted_per_64(sign_ups: SignUps) -> None:
    statuses = [sign_ups(f"2001:db8:1:2::{index}") for index in range(1, 5)]
    assert statuses == [201] * 3 + [429]
    assert sign_ups("2001:db8:1:3::1") == 201
    assert address_bucket("2001:db8:1:2::99") == "2001:db8:1:2::/64"
    assert address_bucket("192.0.2.1") == "192.0.2.1"


def _scope(peer: str | None, *forwarded: str) -> dict[str, Any]:
    return {
        "type": "http",
        "client": (peer, 1234) if peer else None,
        "headers": [(b"x-forwarded-for", value.encode()) for value in forwarded],
    }


@pytest.mark.parametrize(
    ("peer", "forwarded", "expected"),
    [
        ("203.0.113.1", ["192.0.2.1"], "203.0.113.1"),  # untrusted peer: header ignored
        ("10.0.0.1", [], "10.0.0.1"),  # a proxy without the header
        ("10.0.0.1", ["192.0.2.1"], "192.0.2.1"),
        ("10.0.0.1", ["192.0.2.1, 10.0.0.2"], "192.0.2.1"),
        ("10.0.0.1", ["6.6.6.6, 192.0.2.1, 10.0.0.2"], "192.0.2.1"),  # the client's lie
        ("10.0.0.1", ["6.6.6.6", "192.0.2.1"], "192.0.2.1"),  # two headers, one list
        ("10.0.0.1", ["10.0.0.3, 10.0.0.2"], "10.0.0.3"),  # all ours: the farthest
        ("10.0.0.1", ["192.0.2.1, garbage, 10.0.0.2"], "10.0.0.2"),  # stop at the garbage
        ("10.0.0.1", ["192.0.2.1, "], "10.0.0.1"),
        ("10.0.0.1", ["[2001:db8::5]:443"], "2001:db8::5"),
        ("10.0.0.1", ["[2001:db8::5"], "10.0.0.1"),
        ("10.0.0.1", ["192.0.2.1:80:90"], "10.0.0.1"),
        ("::ffff:10.0.0.1", ["192.0.2.1"], "192.0.2.1"),  # IPv4-mapped peer
        ("2001:db8:ffff::1", ["2001:db8::7"], "2001:db8::7"),
        ("testclient", ["192.0.2.1"], "testclient"),  # not an IP peer
        (None, ["192.0.2.1"], "unknown"),
    ],
)
def test_client_address(peer: str | None, forwarded: list[str], expected: str) -> None:
    assert TrustedProxies(PROXIES).client_address(_scope(peer, *forwarded)) == expected


def test_no_trusted_proxies_means_the_peer_and_bad_entries_fail_at_start() -> None:
    assert TrustedProxies([]).client_address(_scope("10.0.0.1", "192.0.2.1")) == "10.0.0.1"
    with pytest.raises(ValueError, match="TRUSTED_PROXIES: not an IP address or CIDR"):
        TrustedProxies(["10.0.0.0/33"])
