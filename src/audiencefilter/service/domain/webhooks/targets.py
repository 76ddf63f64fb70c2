"""Which URLs a webhook may call: http(s) only, and only public addresses unless allowed.

A webhook makes the service send requests where its owner says: pointed at `127.0.0.1`, a
private network or the cloud metadata address (`169.254.169.254`), it would reach what only the
service should reach (server-side request forgery). So the host is resolved and every address
it resolves to must be global (`ipaddress.is_global`, and not multicast) or inside a network the
settings allow (`webhook_allowed_networks`, for example `127.0.0.1/32` for a local receiver).
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


def _public(address: IPAddress) -> bool:
    inner = embedded_ipv4(address)
    if inner is not None and not _public(inner):
        return False
    return address.is_global and not address.is_multicast


def _allowed(address: IPAddress, allowed: Sequence[Network]) -> bool:
    inner = embedded_ipv4(address)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if any(address in network for network in allowed):
        return True
    if inner is not None and inner != address:
        return _public(inner) and address.is_global and not address.is_multicast
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
                "reserved address; webhooks call public addresses only (or the networks in the "
                "webhook_allowed_networks setting)"
            )
    return Target(scheme, host, port, path, str(addresses[0]))
