"""One delivery attempt: a POST of the body with its headers, to an address already checked.

The standard library's `http.client`, so the service needs no HTTP client dependency. The
connection goes to the address `targets.resolve` approved, while the `Host` header and, for
https, the certificate check (SNI) use the URL's host name. The answer's body is not read beyond
a few bytes (only the status counts), redirects are not followed (a 3xx is a failure), and the
connection is closed after each attempt.

**One deadline for the whole attempt.** Each socket operation has the time limit, and so has
the attempt as a whole: connecting, the TLS handshake, sending, reading the status line, the
headers and the body. A receiver that drips its answer a byte at a time passes every
per-operation limit, so a timer (`_Deadline`) shuts the connection's socket down when the limit
passes, and whatever operation is blocked on it returns at once. The timer holds a duplicate of
the socket, taken as soon as it exists: `http.client` hands the socket from the connection to
the answer when the answer says `connection: close` (or is HTTP/1.0), and wraps it for TLS, so
the connection's own reference may be gone or another object by then. An attempt still under
way at its deadline is a timeout, even when a status had been read: an answer is complete or it
is not one.
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
TIMED_OUT = "timed out after"
REFUSED = "refused:"


class _Deadline:
    """Shuts down every socket it watches when `seconds` have passed since it started.

    It holds duplicates of the sockets (`watch`), closed when the attempt is over; shutting
    them down and closing them take one lock, so a late timer never reaches a closed socket's
    number, which another connection may have by then."""

    def __init__(self, seconds: float) -> None:
        self._lock = threading.Lock()
        self._handles: list[socket.socket] = []
        self._passed = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> _Deadline:
        self._timer.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self._timer.cancel()
        with self._lock:
            for handle in self._handles:
                handle.close()
            self._handles.clear()

    @property
    def passed(self) -> bool:
        with self._lock:
            return self._passed

    def watch(self, sock: socket.socket) -> None:
        """Watches the connection `sock` is one end of, whichever object holds it later."""
        handle = sock.dup()  # the same connection: a shutdown through it reaches every holder
        with self._lock:
            self._handles.append(handle)
            if self._passed:
                _shut(handle)

    def _expire(self) -> None:
        with self._lock:
            self._passed = True
            for handle in self._handles:
                _shut(handle)


def _shut(handle: socket.socket) -> None:
    with contextlib.suppress(OSError):
        handle.shutdown(socket.SHUT_RDWR)


def _open(target: Target, timeout: float, deadline: _Deadline) -> socket.socket:
    """A TCP connection to the approved address, watched by the deadline before it connects."""
    family = socket.AF_INET6 if ":" in target.address else socket.AF_INET
    sock = socket.socket(family, socket.SOCK_STREAM)
    try:
        deadline.watch(sock)
        sock.settimeout(timeout)
        sock.connect((target.address, target.port))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    except BaseException:
        sock.close()
        raise
    return sock


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, target: Target, timeout: float, deadline: _Deadline) -> None:
        super().__init__(target.host, target.port, timeout=timeout)
        self._target, self._limit, self._deadline = target, timeout, deadline

    def connect(self) -> None:
        self.sock = _open(self._target, self._limit, self._deadline)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(
        self, target: Target, timeout: float, deadline: _Deadline, context: ssl.SSLContext
    ) -> None:
        super().__init__(target.host, target.port, timeout=timeout, context=context)
        self._target, self._limit, self._deadline, self._tls = target, timeout, deadline, context

    def connect(self) -> None:
        raw = _open(self._target, self._limit, self._deadline)
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

    @property
    def kind(self) -> str:
        """How it ended, one of a fixed set (the metrics' outcome label): `success`,
        `http_error` (another status), `timeout` (the time limit), `refused` (the URL's address
        is not allowed: nothing sent) or `network_error` (no answer)."""
        if self.success:
            return "success"
        if self.status_code is not None:
            return "http_error"
        if self.error is not None and self.error.startswith(REFUSED):
            return "refused"
        if self.error is not None and self.error.startswith(TIMED_OUT):
            return "timeout"
        return "network_error"


def post(
    target: Target,
    headers: dict[str, str],
    body: bytes,
    timeout: float,
    context: ssl.SSLContext | None = None,
) -> Outcome:
    """POSTs once, within `timeout` seconds all told; never raises for a network failure,
    which is an outcome like any other. `context` is the TLS configuration (the system's
    trusted certificates by default)."""
    start = time.perf_counter()
    all_headers = {
        "content-type": "application/json",
        "user-agent": USER_AGENT,
        "connection": "close",
        **headers,
    }
    with _Deadline(timeout) as deadline:
        connection: http.client.HTTPConnection = (
            _PinnedHTTPS(target, timeout, deadline, context or _TLS)
            if target.scheme == "https"
            else _PinnedHTTP(target, timeout, deadline)
        )
        status: int | None = None
        error: str | None = None
        try:
            connection.request("POST", target.path, body=body, headers=all_headers)
            response = connection.getresponse()
            response.read(READ_LIMIT)
            status = response.status
            response.close()
        except (OSError, http.client.HTTPException) as exc:
            error = _describe(exc, timeout)
        finally:
            connection.close()
        if deadline.passed:
            status, error = None, _timed_out(timeout)
        elif status is not None and not 200 <= status < 300:
            error = f"HTTP {status}"
    return Outcome(status, error, int((time.perf_counter() - start) * 1000))


def _timed_out(timeout: float) -> str:
    return f"{TIMED_OUT} {timeout:g} s"


def _describe(exc: BaseException, timeout: float) -> str:
    if isinstance(exc, TimeoutError | socket.timeout):
        return _timed_out(timeout)
    text = str(exc) or type(exc).__name__
    return f"{type(exc).__name__}: {text}"[:500]
