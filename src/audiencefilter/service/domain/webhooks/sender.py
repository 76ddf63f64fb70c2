"""One delivery attempt: a POST of the body with its headers, to an address already checked.

The standard library's `http.client`, so the service needs no HTTP client dependency. The
connection goes to the address `targets.resolve` approved, while the `Host` header and, for
https, the certificate check (SNI) use the URL's host name. The attempt as a whole has its time
limit (a timer shuts the socket down at it), and so has every socket operation; the answer's
body is not read beyond a few bytes (only the status counts), redirects are not followed (a 3xx
is a failure), and the connection is closed after each attempt.
"""

from __future__ import annotations

import contextlib
import http.client
import socket
import ssl
import threading
import time
from dataclasses import dataclass

from .targets import Target

USER_AGENT = "audiencefilter-webhooks/1"
READ_LIMIT = 1024


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._address = target.address

    def connect(self) -> None:
        self.sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, target: Target, timeout: float, context: ssl.SSLContext) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._address = target.address
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)


_TLS = ssl.create_default_context()


@dataclass(frozen=True)
class Outcome:
    """What one attempt found: a status code, or the error that prevented one."""

    status_code: int | None
    error: str | None
    duration_ms: int

    @property
    def success(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(target: Target, headers: dict[str, str], body: bytes, timeout: float) -> Outcome:
    """POSTs once; never raises for a network failure, which is an outcome like any other."""
    start = time.perf_counter()
    connection: http.client.HTTPConnection = (
        _PinnedHTTPS(target, timeout, _TLS)
        if target.scheme == "https"
        else _PinnedHTTP(target, timeout)
    )
    all_headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "connection": "close",
        **headers,
    }
    # The socket's timeout bounds each read; the deadline bounds the whole attempt, so a
    # receiver dripping a byte at a time cannot hold a sending thread (or a shutdown) longer.
    deadline = threading.Timer(timeout, _cut, args=(connection,))
    deadline.daemon = True
    deadline.start()
    try:
        connection.request("POST", target.path, body=body, headers=all_headers)
        response = connection.getresponse()
        response.read(READ_LIMIT)
        status: int | None = response.status
        error = None if 200 <= response.status < 300 else f"HTTP {response.status}"
    except (OSError, http.client.HTTPException) as exc:
        status = None
        late = time.perf_counter() - start >= timeout
        error = f"timed out after {timeout:g} s" if late else _describe(exc, timeout)
    finally:
        deadline.cancel()
        connection.close()
    return Outcome(status, error, int((time.perf_counter() - start) * 1000))


def _cut(connection: http.client.HTTPConnection) -> None:
    """End an attempt at its deadline: a blocked read or write returns at once."""
    sock = connection.sock
    if sock is not None:
        with contextlib.suppress(OSError):
            sock.shutdown(socket.SHUT_RDWR)


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return f"timed out after {timeout:g} s"
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
