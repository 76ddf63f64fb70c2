"""Which URLs a webhook may call: http(s) only, and only public addresses unless allowed.

A webhook makes the service send requests where its owner says: pointed at `127.0.0.1`, a
private network or the cloud metadata address (`169.254.169.254`), it would reach what only the
service should reach (server-side request forgery). So the host is resolved and every address
it resolves to must be public (`_public`) or inside a network the settings allow
(`AUDIENCEFILTER_WEBHOOK_ALLOWED_NETWORKS`, for example `["127.0.0.1/32"]` for a local
receiver; read at start). Public means what `ipaddress` says (`is_global`, and none of
`is_private`, `is_loopback`, `is_link_local`, `is_site_local`, `is_multicast`, `is_reserved`,
`is_unspecified`) and outside `_NOT_PUBLIC`, IANA's special-purpose blocks that are not globally
reachable, listed here because `is_global` forgets some of them depending on the Python
version (`192.0.0.0/24`, `fec0::/10` on 3.11). An IPv4 address carried inside IPv6 (mapped,
6to4, NAT64, Teredo...) must be public itself (`embedded_ipv4`).
The check runs when the URL is registered and again before each attempt, and the attempt
connects to an address that passed it: a name that resolves elsewhere later (DNS rebinding)
reaches nothing it should not.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from urllib.parse import urlsplit

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
Network = ipaddress.IPv4Network | ipaddress.IPv6Network
MAX_URL = 2048


class TargetRefused(ValueError):
    """A URL a webhook may not call; the message says why."""


@dataclass(frozen=True)
class Target:
    """A checked URL: where to connect (`address`), and what to ask for there."""

    scheme: str
    host: str
    port: int
    path: str
    address: str


def networks(allowed: Sequence[str]) -> tuple[Network, ...]:
    return tuple(ipaddress.ip_network(item, strict=False) for item in allowed)


_NAT64 = (ipaddress.ip_network("64:ff9b::/96"), ipaddress.ip_network("64:ff9b:1::/48"))
_COMPATIBLE = ipaddress.ip_network("::/96")  # IPv4-compatible (deprecated), `::127.0.0.1`
_SIIT = ipaddress.ip_network("::ffff:0:0:0/96")  # IPv4-translated, `::ffff:0:127.0.0.1`
_UNSAFE_URL = frozenset(" \t\r\n\x0b\x0c\x00\x7f")


def embedded_ipv4(address: IPAddress) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 one carries, however it carries it.

    A gateway translating IPv6 to IPv4 (NAT64, SIIT, 6to4) would deliver a request for
    `64:ff9b::a9fe:a9fe` to 169.254.169.254: the IPv4 inside must pass the same check.
    """
    if not isinstance(address, ipaddress.IPv6Address):
        return None
    if address.ipv4_mapped is not None:
        return address.ipv4_mapped
    if address.sixtofour is not None:
        return address.sixtofour
    if address.teredo is not None:
        return address.teredo[1]
    low32 = ipaddress.IPv4Address(int(address) & 0xFFFFFFFF)
    if any(address in network for network in (*_NAT64, _COMPATIBLE, _SIIT)):
        return low32
    return None


_NOT_PUBLIC = tuple(
    ipaddress.ip_network(block)
    for block in (
        "0.0.0.0/8",  # "this network"
        "100.64.0.0/10",  # shared address space (carrier-grade NAT)
        "192.0.0.0/24",  # IETF protocol assignments
        "192.0.2.0/24",  # documentation
        "192.88.99.0/24",  # 6to4 relay anycast (deprecated)
        "198.18.0.0/15",  # benchmarking
        "198.51.100.0/24",  # documentation
        "203.0.113.0/24",  # documentation
        "224.0.0.0/4",  # multicast
        "240.0.0.0/4",  # reserved, and the broadcast address
        "::/128",  # unspecified
        "::1/128",  # loopback
        "100::/64",  # discard-only
        "2001::/23",  # IETF protocol assignments (Teredo inside)
        "2001:db8::/32",  # documentation
        "3fff::/20",  # documentation
        "5f00::/16",  # segment routing (SRv6) identifiers
        "fc00::/7",  # unique local
        "fe80::/10",  # link-local
        "fec0::/10",  # site-local (deprecated)
        "ff00::/8",  # multicast
    )
)
"""IANA's special-purpose blocks that no public receiver is in (RFC 6890 and its registries)."""


def _public(address: IPAddress) -> bool:
    """Whether `address` is a public unicast address, and so is any IPv4 one it carries."""
    inner = embedded_ipv4(address)
    if inner is not None:
        return _public(inner) and _routable(address, carrier=True)
    return _routable(address, carrier=False)


def _routable(address: IPAddress, *, carrier: bool) -> bool:
    """The address itself is public. An IPv6 address carrying an IPv4 one may sit in a block
    `ipaddress` calls reserved (NAT64 and mapped addresses are in `::/8`): its IPv4 address
    decides then."""
    flags = (
        address.is_private,
        address.is_loopback,
        address.is_link_local,
        address.is_multicast,
        address.is_unspecified,
        isinstance(address, ipaddress.IPv6Address) and address.is_site_local,
        address.is_reserved and not carrier,
    )
    if not address.is_global or any(flags):
        return False
    return not any(address in block for block in _NOT_PUBLIC if block.version == address.version)


def _allowed(address: IPAddress, allowed: Sequence[Network]) -> bool:
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allowed):
        return True
    return _public(address)


def parse(url: str) -> tuple[str, str, int, str]:
    """Scheme, host, port and path with query of an http(s) URL; TargetRefused otherwise."""
    if len(url) > MAX_URL:
        raise TargetRefused(f"expected a URL of at most {MAX_URL} characters")
    unsafe = sorted({repr(c) for c in url if c in _UNSAFE_URL})
    if unsafe:
        raise TargetRefused(
            f"expected a URL without spaces or control characters, found {', '.join(unsafe)}; "
            "percent-encode them (a space is %20)"
        )
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError as exc:
        raise TargetRefused(f"expected an http or https URL, found {url!r} ({exc})") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https"):
        raise TargetRefused(f"expected an http or https URL, found the scheme {scheme or 'none'!r}")
    if not parts.hostname:
        raise TargetRefused("expected a URL with a host, such as https://example.com/hooks")
    if parts.username is not None or parts.password is not None:
        raise TargetRefused("expected a URL without user name or password")
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return scheme, parts.hostname, port or (443 if scheme == "https" else 80), path


def resolve(url: str, allowed: Sequence[Network]) -> Target:
    """The URL checked and resolved; TargetRefused when any address it resolves to is refused."""
    scheme, host, port, path = parse(url)
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise TargetRefused(f"the host {host!r} does not resolve ({exc})") from None
    addresses = [ipaddress.ip_address(str(info[4][0]).split("%", 1)[0]) for info in infos]
    if not addresses:
        raise TargetRefused(f"the host {host!r} does not resolve")
    for address in addresses:
        if not _allowed(address, allowed):
            raise TargetRefused(
                f"the host {host!r} resolves to {address}, a private, loopback, link-local or "
                "reserved address; webhooks call public addresses only, or the networks listed "
                "in the environment variable AUDIENCEFILTER_WEBHOOK_ALLOWED_NETWORKS (a JSON "
                'list of CIDR networks, such as ["10.0.0.0/8"]; read at start, so restart the '
                "service after changing it)"
            )
    return Target(scheme, host, port, path, str(addresses[0]))
