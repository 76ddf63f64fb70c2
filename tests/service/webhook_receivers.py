"""Webhook receivers on 127.0.0.1 that misbehave on purpose, each an `http.server` in a thread.

- `Healthy` answers 200 at once.
- `Silent` reads the request and never answers; it holds each connection until the test
  releases it (`release_one`), so a test decides when a sending thread frees, not a clock.
- `Drip` answers a byte at a time, from the status line, the headers or the body on, and notes
  whether the sender closed the connection before the answer ended; `Drips` does so for every
  request it gets (the floods drill's dripping receiver).

The healthy and silent receivers write every request they get to one shared `Arrivals` log, in
the order they got them: tests assert orderings ("the healthy account's delivery came before
the silent account's third"), never durations.
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

HANG_GUARD = 30.0  # seconds; only ever reached when something is broken


def until(condition: Callable[[], bool], what: str) -> None:
    """Waits until `condition` holds; fails (never hangs) when it does not."""
    deadline = time.monotonic() + HANG_GUARD
    while not condition():
        assert time.monotonic() < deadline, f"gave up waiting for {what}"
        time.sleep(0.01)


class Arrivals:
    """Requests in the order they arrived, across receivers: (receiver name, webhook-id)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.log: list[tuple[str, str]] = []

    def add(self, name: str, webhook_id: str) -> None:
        with self._lock:
            self.log.append((name, webhook_id))

    def of(self, name: str) -> list[str]:
        with self._lock:
            return [msg for who, msg in self.log if who == name]

    def snapshot(self) -> list[tuple[str, str]]:
        with self._lock:
            return list(self.log)


class _Server(ThreadingHTTPServer):
    request_queue_size = 128
    daemon_threads = True


class _Base:
    name = ""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = _Server(("127.0.0.1", 0), handler)
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/hooks"

    def close(self) -> None:
        if not self._thread.is_alive():
            return
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=HANG_GUARD)


class _Quiet(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        return

    def read_request(self) -> str:
        self.rfile.read(int(self.headers.get("content-length") or 0))
        return str(self.headers.get("webhook-id", ""))


class Healthy(_Base):
    name = "healthy"

    def __init__(self, arrivals: Arrivals) -> None:
        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                arrivals.add(Healthy.name, self.read_request())
                self.send_response(200)
                self.send_header("content-length", "0")
                self.end_headers()

        super().__init__(Handler)


class Silent(_Base):
    """Accepts, reads the request, never answers; a connection ends when the test releases it
    (or at `close`): the sender sees it closed without an answer."""

    name = "silent"

    def __init__(self, arrivals: Arrivals) -> None:
        self._lock = threading.Lock()
        self._held: list[threading.Event] = []
        self._closing = threading.Event()
        receiver = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                released = threading.Event()
                with receiver._lock:
                    receiver._held.append(released)
                arrivals.add(Silent.name, self.read_request())
                while not (released.wait(0.05) or receiver._closing.is_set()):
                    pass
                self.close_connection = True

        super().__init__(Handler)

    def release_one(self) -> None:
        """Ends the oldest request still held: its sending thread is free again."""
        with self._lock:
            waiting = [event for event in self._held if not event.is_set()]
        assert waiting, "no request is held"
        waiting[0].set()

    def close(self) -> None:
        self._closing.set()
        super().close()


DRIP_PHASES = ("status line", "headers", "body", "chunked body")
DRIP_ENDINGS = ("HTTP/1.1 kept alive", "HTTP/1.1 connection: close", "HTTP/1.0")


def drip_answer(phase: str, ending: str) -> tuple[bytes, int]:
    """A 200 answer of a few hundred bytes, and where its dripping starts."""
    version = "HTTP/1.0" if ending == "HTTP/1.0" else "HTTP/1.1"
    close = "connection: close\r\n" if ending == "HTTP/1.1 connection: close" else ""
    status = f"{version} 200 OK\r\n".encode()
    body = b"x" * 300
    if phase == "chunked body":
        framing = "transfer-encoding: chunked\r\n"
        body = b"".join(b"1\r\n" + bytes([byte]) + b"\r\n" for byte in body) + b"0\r\n\r\n"
    else:
        framing = f"content-length: {len(body)}\r\n"
    headers = f"{framing}{close}x-padding: {'p' * 300}\r\n\r\n".encode()
    start = {"status line": 0, "headers": len(status)}.get(phase, len(status) + len(headers))
    return status + headers + body, start


class Drip(_Base):
    """Answers a byte every `every` seconds from `phase` on; `ended` is how the answer ended:
    "sent" (all of it) or "closed" (the sender closed the connection first)."""

    name = "drip"

    def __init__(self, phase: str, ending: str, every: float = 0.1) -> None:
        answer, start = drip_answer(phase, ending)
        self.ended: str | None = None
        self.done = threading.Event()
        receiver = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                self.read_request()
                self.close_connection = True
                try:
                    receiver.ended = _drip(self.connection, answer, start, every)
                finally:
                    receiver.done.set()

        super().__init__(Handler)


def _drip(connection: socket.socket, answer: bytes, start: int, every: float) -> str:
    """Sends `answer`, the part from `start` one byte every `every` seconds; between two bytes,
    an end of stream from the sender (it closed or shut the connection) ends the drip."""
    try:
        connection.sendall(answer[:start])
        for index in range(start, len(answer)):
            readable, _, _ = select.select([connection], [], [], every)
            if readable and connection.recv(1) == b"":
                return "closed"
            connection.sendall(answer[index : index + 1])
    except OSError:
        return "closed"
    return "sent"


class Drips(_Base):
    """`Drip` for many requests: each answer drips from `phase` on, and `endings` holds how
    each ended ("sent" or "closed"), in the order they ended; `started` counts the requests."""

    name = "drips"

    def __init__(self, phase: str, ending: str, every: float = 0.1) -> None:
        answer, start = drip_answer(phase, ending)
        self._lock = threading.Lock()
        self.started = 0
        self.endings: list[str] = []
        receiver = self

        class Handler(_Quiet):
            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                self.read_request()
                self.close_connection = True
                with receiver._lock:
                    receiver.started += 1
                ended = _drip(self.connection, answer, start, every)
                with receiver._lock:
                    receiver.endings.append(ended)

        super().__init__(Handler)

    def counts(self) -> tuple[int, list[str]]:
        """Requests started, and the endings of those that ended."""
        with self._lock:
            return self.started, list(self.endings)
