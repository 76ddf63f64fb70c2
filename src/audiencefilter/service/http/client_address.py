"""The address a request really comes from, believing `X-Forwarded-For` only from known proxies.

The header is whatever the client wrote, plus one entry per proxy it crossed, each appended on
the right. Only entries appended by proxies we run can be believed, so the walk goes from the
right: past the peer and every trusted proxy, the first address that is not ours is the client.
A malformed entry means a proxy did not write it, so the walk stops there and the last hop that
was believed stands in for the client. From a peer that is not a trusted proxy the header is
ignored: anyone can send it.

uvicorn's `ProxyHeadersMiddleware` does a similar walk, but it rewrites the scope's client for
every route (and the scheme), takes a malformed entry for the client itself, and silently turns
a mistyped network into a literal string; the per-address limit needs none of that and one
function of this module does the rest. `serve` therefore runs uvicorn without its own proxy
handling: `TRUSTED_PROXIES` is the only list of proxies.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable

from starlette.types import Scope

from ..ground.digits import ascii_number

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network
UNKNOWN = "unknown"


def parse_address(text: str) -> IPAddress | None:
    """An address as proxies write it: `1.2.3.4`, `1.2.3.4:5678`, `::1` or `[::1]:5678`."""
    text = text.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or (rest and not (rest[:1] == ":" and _port(rest[1:]))):
            return None
        text = host
    elif text.count(":") == 1:
        host, _, port = text.partition(":")
        if not _port(port):
            return None
        text = host
    try:
        address = ipaddress.ip_address(text)
    except ValueError:
        return None
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        return address.ipv4_mapped
    return address


def _port(text: str) -> bool:
    """A port as a proxy writes it: ASCII digits only (`ground/digits.py`)."""
    return ascii_number(text, max_digits=5) is not None


class TrustedProxies:
    """The configured proxies, parsed once; a mistyped entry fails at start, not per request."""

    def __init__(self, entries: Iterable[str]) -> None:
        networks: list[IPNetwork] = []
        for entry in entries:
            try:
                networks.append(ipaddress.ip_network(entry.strip(), strict=False))
            except ValueError:
                raise ValueError(
                    f"TRUSTED_PROXIES: not an IP address or CIDR network: {entry!r}"
                ) from None
        self.networks = tuple(networks)

    def __contains__(self, address: IPAddress) -> bool:
        return any(address in network for network in self.networks)

    def client_address(self, scope: Scope) -> str:
        """The client's address as text; the peer's own when no trusted proxy vouches for more."""
        client = scope.get("client")
        if not client:
            return UNKNOWN
        peer_text = str(client[0])
        peer = parse_address(peer_text)
        if peer is None:
            return peer_text  # not an IP peer (a Unix socket, a test transport): nothing to walk
        if not self.networks or peer not in self:
            return str(peer)
        believed = peer
        for entry in reversed(_forwarded_for(scope)):
            hop = parse_address(entry)
            if hop is None:
                break
            believed = hop
            if hop not in self:
                break
        return str(believed)


def _forwarded_for(scope: Scope) -> list[str]:
    """Every `X-Forwarded-For` entry, several headers read as one list in their order."""
    entries: list[str] = []
    for name, value in scope.get("headers", ()):
        if name == b"x-forwarded-for":
            entries.extend(value.decode("latin-1").split(","))
    return entries
