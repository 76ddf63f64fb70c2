"""A webhook receiver on 127.0.0.1 for drills, benchmarks and tests: a threaded `http.server`.

It records every request (headers, body, when) and answers with the status a `respond`
function chooses per request, so a test can make it fail for a while, fail some messages, or
be slow. It never verifies signatures itself: whoever reads `received` does, independently.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any


@dataclass(frozen=True)
class Received:
    """One request as the receiver saw it, and the status it answered."""

    headers: dict[str, str]
    body: bytes
    status: int
    at: float

    @property
    def id(self) -> str:
        return self.headers.get("webhook-id", "")

    def payload(self) -> Any:
        return json.loads(self.body)


Respond = Callable[[dict[str, str], bytes], int]


class _Server(ThreadingHTTPServer):
    # http.server's backlog of 5 drops the connections of a worker sending 8 at once, and
    # the kernel retries them a second later: a receiver must not be what is measured.
    request_queue_size = 128


class Receiver:
    """Serves on a free port of 127.0.0.1 until `close`."""

    def __init__(self, respond: Respond | None = None) -> None:
        self.respond: Respond = respond or (lambda _headers, _body: 200)
        self.received: list[Received] = []
        self._lock = threading.Lock()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self) -> None:  # noqa: N802 (the http.server naming)
                length = int(self.headers.get("content-length") or 0)
                body = self.rfile.read(length)
                if len(body) < length:
                    # The sender went away mid-request (killed, or cut at its deadline): no
                    # delivery to count, and nobody to answer.
                    self.close_connection = True
                    return
                headers = {key.lower(): value for key, value in self.headers.items()}
                status = receiver.respond(headers, body)
                with receiver._lock:
                    receiver.received.append(Received(headers, body, status, time.monotonic()))
                self.send_response(status)
                self.send_header("content-length", "0")
                self.end_headers()

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                return

        self.server = _Server(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/hooks"

    def snapshot(self) -> list[Received]:
        with self._lock:
            return list(self.received)

    def succeeded(self) -> list[Received]:
        return [item for item in self.snapshot() if 200 <= item.status < 300]

    def wait_for(self, condition: Callable[[list[Received]], bool], timeout: float) -> bool:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if condition(self.snapshot()):
                return True
            time.sleep(0.02)
        return condition(self.snapshot())

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self._thread.join(timeout=5)
