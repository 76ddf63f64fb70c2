"""The service's ASGI application called in place, on this thread, with no HTTP client between.

A harness that sets the service beside hand-written SQL should charge the service for its own
work. Called through httpx (`service_audiences.InProcessClient`: httpx's `ASGITransport` on an
event loop in a background thread, reached through an anyio blocking portal), every request
also pays httpx's building and parsing of the request and the answer and the hop to the
portal's thread and back: 1-2 ms of CPU a request that no deployment of the service spends in
its process (a real client runs elsewhere, and the server's side of HTTP is uvicorn's).

`exchange` is one ASGI exchange: the scope of the request, a `receive` that gives the body once
and then waits for the answer's end to report the disconnect (as httpx's transport does, so a
streamed answer's listener does not spin), and a `send` that collects the status, the headers
and the body. `InPlaceClient` owns an event loop and one long-lived task on it that enters the
application's lifespan and then runs every request handed to it; `request` hands it one and
runs the loop on this thread until the answer has been sent. One task for every request, not a
task each: anyio binds the worker threads that FastAPI runs sync endpoints on to the root task,
and stops them when it ends; a task a request would start a new thread for each (a server's
loop keeps them). Those thread hops are the service's own cost and stay in. Between requests
the loop is idle: the service's background work (the membership sweeper, the webhook worker)
runs on threads of its own.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any
from urllib.parse import unquote

from audiencefilter.service import Settings, create_app

Asgi = Callable[..., Any]


@dataclass
class Answer:
    """What the harness reads of a response: as much of `httpx.Response` as it uses."""

    status_code: int
    headers: dict[str, str] = field(default_factory=dict)
    content: bytes = b""

    @property
    def text(self) -> str:
        return self.content.decode("utf-8")

    def json(self) -> Any:
        return json.loads(self.content)


def scope(
    method: str, path: str, query: bytes, headers: list[tuple[bytes, bytes]]
) -> dict[str, Any]:
    """The ASGI scope of one HTTP request (`path` as sent, percent-encoded)."""
    return {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1",
            "method": method, "scheme": "http", "path": unquote(path),
            "raw_path": path.encode(), "root_path": "", "query_string": query,
            "headers": headers, "client": ("127.0.0.1", 5000),
            "server": ("127.0.0.1", 80)}  # fmt: skip


async def exchange(app: Asgi, request: dict[str, Any], body: bytes) -> Answer:
    """Send `request` (a scope) with `body` through `app`; the answer collected."""
    answer = Answer(0)
    chunks: list[bytes] = []
    ended = asyncio.Event()
    given = False

    async def receive() -> dict[str, Any]:
        nonlocal given
        if not given:
            given = True
            return {"type": "http.request", "body": body, "more_body": False}
        await ended.wait()
        return {"type": "http.disconnect"}

    async def send(message: dict[str, Any]) -> None:
        if message["type"] == "http.response.start":
            answer.status_code = int(message["status"])
            for name, value in message.get("headers", []):
                key = name.decode("latin-1").lower()
                text = value.decode("latin-1")
                answer.headers[key] = (
                    f"{answer.headers[key]}, {text}" if key in answer.headers else text
                )
        elif message["type"] == "http.response.body":
            chunks.append(message.get("body", b""))
            if not message.get("more_body", False):
                ended.set()

    try:
        await app(request, receive, send)
    finally:
        ended.set()
    answer.content = b"".join(chunks)
    return answer


def encode(
    url: str, headers: Mapping[str, str] | None, body: Any, content: bytes | None
) -> tuple[str, bytes, list[tuple[bytes, bytes]], bytes]:
    """Path, query, headers and body of a request as httpx would send them (`body` as JSON
    the way httpx writes it)."""
    path, _, query = url.partition("?")
    sent: list[tuple[bytes, bytes]] = [(b"host", b"bench")]
    if body is not None:
        written = json.dumps(body, ensure_ascii=False, separators=(",", ":"), allow_nan=False)
        content = written.encode()
        sent.append((b"content-type", b"application/json"))
    if content is not None:
        sent.append((b"content-length", str(len(content)).encode()))
    sent += [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in (headers or {}).items()]
    return path, query.encode(), sent, content or b""


class InPlaceClient:
    """The application with its lifespan entered on a loop of this thread's, called in place
    (`request` has the shape of `service_audiences.InProcessClient.request`)."""

    def __init__(self, settings: Settings, clock: Callable[[], datetime] | None = None) -> None:
        self.app = create_app(settings, clock=clock)
        self.loop = asyncio.new_event_loop()
        self._jobs: asyncio.Queue[tuple[dict[str, Any], bytes, asyncio.Future[Answer]] | None]
        self._jobs = asyncio.Queue()
        ready: asyncio.Future[None] = self.loop.create_future()
        self._host = self.loop.create_task(self._serve(ready))
        try:
            self.loop.run_until_complete(ready)
        except BaseException:
            self.loop.close()
            raise

    async def _serve(self, ready: asyncio.Future[None]) -> None:
        """The task every request runs in: the lifespan around them."""
        try:
            async with self.app.router.lifespan_context(self.app):
                ready.set_result(None)
                while (job := await self._jobs.get()) is not None:
                    request, body, answered = job
                    try:
                        answered.set_result(await exchange(self.app, request, body))
                    except Exception as error:  # the caller's to raise
                        answered.set_exception(error)
        except BaseException as error:
            if not ready.done():
                ready.set_exception(error)
            raise

    def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        json: Any = None,
        content: bytes | None = None,
    ) -> Answer:
        if self._host.done():  # its lifespan failed or was closed: nothing would answer
            raise RuntimeError("the application is not running")
        path, query, sent, body = encode(url, headers, json, content)
        answered: asyncio.Future[Answer] = self.loop.create_future()
        self._jobs.put_nowait((scope(method, path, query, sent), body, answered))
        return self.loop.run_until_complete(answered)

    def close(self) -> None:
        """The lifespan ended (the engine disposed), the loop closed."""
        try:
            self._jobs.put_nowait(None)
            self.loop.run_until_complete(self._host)
        finally:
            self.loop.close()
