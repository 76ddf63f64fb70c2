"""Webhook targets in special-purpose address blocks are refused as a family, whatever the
Python version's `is_global` says (3.11 calls `192.0.0.8` and `fec0::1` global), and IPv4
carried inside IPv6 is judged by its IPv4 address. The refusal names the environment variable
that opens a network, and that it is read at start."""

from __future__ import annotations

import pytest

from audiencefilter.service.domain.webhooks import targets

from .conftest import Tenant

REFUSED = [
    "192.0.0.8",  # IETF protocol assignments, 192.0.0.0/24
    "192.0.0.9",
    "192.0.0.170",
    "192.0.2.1",  # documentation
    "198.51.100.7",
    "203.0.113.9",
    "192.88.99.1",  # 6to4 relay anycast
    "100.64.0.1",  # shared address space
    "100.127.255.254",
    "198.18.0.1",  # benchmarking
    "198.19.255.255",
    "0.1.2.3",  # this network
    "0.0.0.0",
    "10.0.0.1",
    "172.31.255.255",
    "192.168.1.1",
    "127.0.0.1",
    "169.254.169.254",
    "224.0.0.1",  # multicast
    "239.255.255.250",
    "240.0.0.1",  # reserved
    "255.255.255.255",
    "[fec0::1]",  # site-local, fec0::/10
    "[feff::1]",
    "[fe80::1]",
    "[fc00::1]",
    "[fd12:3456::1]",
    "[::]",
    "[::1]",
    "[ff02::1]",  # multicast
    "[ff0e::1]",
    "[2001:db8::1]",  # documentation
    "[3fff::1]",
    "[5f00::1]",  # SRv6
    "[100::1]",  # discard-only
    "[2001:2::1]",  # IETF protocol assignments
    "[2001:0:4136:e378:8000:63bf:3fff:fdd2]",  # Teredo
    "[::ffff:192.0.0.8]",  # IPv4-mapped
    "[::ffff:100.64.0.1]",
    "[64:ff9b::c000:8]",  # NAT64 embedding 192.0.0.8
    "[64:ff9b::6440:1]",  # NAT64 embedding 100.64.0.1
    "[64:ff9b::c612:1]",  # NAT64 embedding 198.18.0.1
    "[64:ff9b:1::a00:1]",  # local-use NAT64 embedding 10.0.0.1
    "[2002:c000:0008::1]",  # 6to4 embedding 192.0.0.8
    "[2002:6440:0001::1]",  # 6to4 embedding 100.64.0.1
    "[::c000:8]",  # IPv4-compatible
]
PUBLIC = ["8.8.8.8", "1.1.1.1", "[2606:4700::1111]", "[2001:4860:4860::8888]"]
PUBLIC += ["[::ffff:8.8.8.8]", "[64:ff9b::808:808]", "[2002:808:808::1]"]


@pytest.mark.parametrize("host", REFUSED)
def test_a_special_purpose_address_is_refused_as_a_target(tenant: Tenant, host: str) -> None:
    lst = tenant.new_list()
    url = f"http://{host}/hook"
    response = tenant.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
    assert response.status_code == 400, response.text
    assert response.json()["errors"][0]["pointer"] == "/body/url"


@pytest.mark.parametrize("host", PUBLIC)
def test_a_public_address_is_a_target(host: str) -> None:
    assert targets.resolve(f"https://{host}/hook", ()).port == 443


def test_the_refusal_names_the_environment_variable_and_the_restart(tenant: Tenant) -> None:
    lst = tenant.new_list()
    url = "http://192.0.0.8/hook"
    response = tenant.call("POST", "/v4/webhooks", json={"listId": lst["id"], "url": url})
    message = response.json()["message"]
    assert "AUDIENCEFILTER_WEBHOOK_ALLOWED_NETWORKS" in message
    assert "restart" in message


def test_an_allowed_network_opens_that_network_alone() -> None:
    allowed = targets.networks(["100.64.0.1/32"])
    assert targets.resolve("http://100.64.0.1/hook", allowed).address == "100.64.0.1"
    with pytest.raises(targets.TargetRefused):
        targets.resolve("http://100.64.0.2/hook", allowed)
