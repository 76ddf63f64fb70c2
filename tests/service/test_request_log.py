"""The request log: one JSON line per request, request ids, and no whole API key anywhere.

A key may be shown only by its display prefix; these tests make keys the ways an operator does
(`keys create`, `demo`), use them well and badly, break things on purpose, and then look for the
whole keys in every place they could end up: log records, a live server's output, error bodies,
the database file and the key listing.
"""

from __future__ import annotations

import io
import json
import logging
import re
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import closing, contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from sqlalchemy import event, select, update

from audiencefilter.service.api.routes import lists as list_routes
from audiencefilter.service.commands.main import main
from audiencefilter.service.db.engine import Database
from audiencefilter.service.db.models import ApiKey
from audiencefilter.service.ground import keys
from audiencefilter.service.http.request_log import (
    REQUEST_FIELDS,
    REQUEST_LOGGER,
    JsonFormatter,
    KeyRedactionFilter,
    TextFormatter,
    install_redaction,
    logging_config,
    redact,
)
from tests.waiting import wait_until

from .conftest import ApiClient, Tenant, make_tenant, sqlite_settings
from .live import cli_env, live_server, run_cli

Line = dict[str, Any]
GENERATED_ID = re.compile(r"[0-9a-f]{32}")


@pytest.fixture
def lines(caplog: pytest.LogCaptureFixture) -> Callable[[], list[Line]]:
    """The request records captured so far, rendered by the JSON formatter and parsed back."""
    caplog.set_level(logging.INFO, logger="audiencefilter")
    formatter = JsonFormatter()

    def read() -> list[Line]:
        rendered = [formatter.format(r) for r in caplog.records if r.name == REQUEST_LOGGER]
        assert all("\n" not in text for text in rendered)
        return [json.loads(text) for text in rendered]

    return read


def line_of(read: Callable[[], list[Line]], response: httpx.Response) -> Line:
    """The one line written for this response, found by the request id it carries."""
    request_id = response.headers["x-request-id"]
    found = [line for line in read() if line["request_id"] == request_id]
    assert len(found) == 1, found
    return found[0]


def key_id(client: ApiClient, key: str) -> str:
    database: Database = client.app.state.db
    with database.reading() as session:
        found = session.scalar(select(ApiKey.id).where(ApiKey.digest == keys.digest(key)))
    assert found is not None
    return found


def tampered(key: str) -> str:
    """The key with its last character changed: the right shape, a wrong checksum."""
    return key[:-1] + ("x" if key[-1] != "x" else "y")


def disable(client: ApiClient, key: str) -> None:
    database: Database = client.app.state.db
    with database.transaction() as session:
        session.execute(
            update(ApiKey).where(ApiKey.digest == keys.digest(key)).values(disabled=True)
        )


def test_a_request_is_one_line_with_every_field_and_no_query(
    tenant: Tenant, lines: Callable[[], list[Line]]
) -> None:
    response = tenant.call("GET", "/v4/lists", params={"limit": 5, "q": "ada@example.com"})
    assert response.status_code == 200
    line = line_of(lines, response)
    assert list(line) == list(REQUEST_FIELDS)
    assert line["method"] == "GET" and line["path"] == "/v4/lists"
    assert "ada@example.com" not in json.dumps(line)
    assert line["status"] == 200
    assert line["key_prefix"] == keys.display_prefix(tenant.private_key)
    assert line["key_id"] == key_id(tenant.client, tenant.private_key)
    assert line["account_id"] == tenant.account_id
    assert line["client"] == "127.0.0.1"
    assert line["bytes"] == len(response.content) > 0
    latency = line["latency_ms"]
    assert isinstance(latency, float) and latency >= 0 and round(latency, 1) == latency
    moment = datetime.fromisoformat(line["time"])
    assert moment.utcoffset() == timedelta(0) and line["time"].endswith("Z")
    assert abs(datetime.now(UTC) - moment) < timedelta(minutes=1)
    assert GENERATED_ID.fullmatch(line["request_id"])


def test_failed_requests_are_logged_with_what_is_known_of_the_key(
    client: ApiClient, lines: Callable[[], list[Line]]
) -> None:
    tenant = make_tenant(client)
    disabled = make_tenant(client)
    disable(client, disabled.private_key)
    unknown, off = keys.generate("private"), disabled.private_key
    private, public = tenant.private_key, tenant.public_key
    account = tenant.account_id
    shown = keys.display_prefix
    cases: list[tuple[str, str | None, int, str | None, str | None, str | None]] = [
        # path, key sent, status, key_prefix, key_id, account_id
        ("/v4/lists", None, 401, None, None, None),
        ("/v4/lists", "", 401, None, None, None),
        ("/v4/lists", "hunter2 is my password", 401, "invalid", None, None),
        ("/v4/lists", tampered(private), 401, "invalid", None, None),
        ("/v4/lists", unknown, 401, shown(unknown), None, None),
        ("/v4/lists", off, 401, shown(off), None, None),
        ("/v4/lists", public, 403, shown(public), key_id(client, public), account),
        ("/v4/lists/lst_x", private, 404, shown(private), key_id(client, private), account),
        ("/v4/nowhere", private, 404, shown(private), None, None),
    ]
    for path, key, status, prefix, expected_key_id, expected_account in cases:
        headers = {} if key is None else {"apiKey": key}
        response = client.get(path, headers=headers)
        assert response.status_code == status, (path, key, response.text)
        line = line_of(lines, response)
        assert list(line) == list(REQUEST_FIELDS)
        assert (line["path"], line["status"], line["bytes"]) == (
            path,
            status,
            len(response.content),
        )
        assert (line["key_prefix"], line["key_id"], line["account_id"]) == (
            prefix,
            expected_key_id,
            expected_account,
        ), (path, key)
        assert "hunter2" not in json.dumps(line)


def test_rate_limited_requests_name_the_key_and_account(
    app_factory: Callable[..., ApiClient], lines: Callable[[], list[Line]]
) -> None:
    api = app_factory(rate_limit_free="2/minute")
    tenant = make_tenant(api)
    responses = [tenant.call("GET", "/v4/lists") for _ in range(3)]
    assert [r.status_code for r in responses] == [200, 200, 429]
    line = line_of(lines, responses[2])
    assert line["status"] == 429 and line["bytes"] == len(responses[2].content)
    assert line["key_id"] == key_id(api, tenant.private_key)
    assert line["account_id"] == tenant.account_id
    assert len(lines()) == 3


def test_a_body_over_the_limit_is_logged_as_413(
    app_factory: Callable[..., ApiClient], lines: Callable[[], list[Line]]
) -> None:
    api = app_factory(max_body_bytes=64)
    tenant = make_tenant(api)
    response = tenant.call(
        "POST", "/v4/lists", content=b"x" * 100, headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 413
    line = line_of(lines, response)
    assert (line["method"], line["status"], line["bytes"]) == ("POST", 413, len(response.content))
    assert line["key_prefix"] == keys.display_prefix(tenant.private_key)
    assert line["key_id"] is None  # refused before authentication


@contextmanager
def json_stream(logger_name: str) -> Iterator[io.StringIO]:
    """A real handler with the JSON formatter, as `serve` installs, for the block's records."""
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    handler.addFilter(KeyRedactionFilter())
    target = logging.getLogger(logger_name)
    target.addHandler(handler)
    try:
        yield stream
    finally:
        target.removeHandler(handler)


def test_an_unhandled_exception_is_logged_as_500_with_its_request_id(
    app_factory: Callable[..., ApiClient],
    monkeypatch: pytest.MonkeyPatch,
    lines: Callable[[], list[Line]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    api = app_factory(raise_app_exceptions=False)
    tenant = make_tenant(api)
    leaked = tenant.private_key

    def explode(*_: object) -> dict[str, object]:
        raise RuntimeError(f"driver failed with parameter {leaked!r}")

    monkeypatch.setattr(list_routes, "list_view", explode)
    with json_stream("audiencefilter") as stream:
        response = tenant.call("POST", "/v4/lists", json={"name": "boom"})
    assert response.status_code == 500
    assert response.json() == {
        "error": 500,
        "message": "Internal server error",
        "status": 500,
        "detail": "Internal server error",
    }
    request_id = response.headers["x-request-id"]
    assert GENERATED_ID.fullmatch(request_id)
    line = line_of(lines, response)
    assert (line["status"], line["bytes"]) == (500, len(response.content))
    assert line["key_id"] == key_id(api, leaked)

    written = [json.loads(text) for text in stream.getvalue().splitlines()]
    assert [entry.get("status") for entry in written if "status" in entry] == [500]
    [error] = [entry for entry in written if entry.get("level") == "ERROR"]
    assert error["request_id"] == request_id
    assert "RuntimeError" in error["exception"]
    assert keys.display_prefix(leaked) + "…" in error["exception"]
    assert leaked not in stream.getvalue() and leaked not in caplog.text
    assert keys.display_prefix(leaked) + "…" in caplog.text


def test_request_ids_are_echoed_when_safe_and_made_otherwise(
    client: ApiClient, lines: Callable[[], list[Line]]
) -> None:
    for good in ("req-1.A_b", "a" * 128, "0"):
        response = client.get("/health/live", headers={"X-Request-Id": good})
        assert response.headers["x-request-id"] == good
        assert line_of(lines, response)["request_id"] == good

    whole_key = keys.generate("private")
    hostile: list[str | bytes] = [
        "a" * 129,
        "",
        "has space",
        '"quoted"',
        "<script>",
        "semi;colon",
        b"caf\xe9",
        whole_key,
    ]
    seen = set()
    for value in hostile:
        response = client.get("/health/live", headers={"X-Request-Id": value})
        echoed = response.headers["x-request-id"]
        assert GENERATED_ID.fullmatch(echoed), value
        assert line_of(lines, response)["request_id"] == echoed
        seen.add(echoed)
    assert len(seen) == len(hostile)
    assert whole_key not in json.dumps(lines())


def test_the_text_form_is_one_readable_line(
    client: ApiClient, tenant: Tenant, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger=REQUEST_LOGGER)
    tenant.call("GET", "/v4/lists")
    client.get("/v4/a%20b%0Ac", headers={"X-Request-Id": "text-1"})
    first, second = (TextFormatter().format(r) for r in caplog.records if r.name == REQUEST_LOGGER)
    prefix = keys.display_prefix(tenant.private_key)
    assert re.fullmatch(r"\S+Z GET /v4/lists 200 request_id=[0-9a-f]{32} .*", first)
    assert f"key_prefix={prefix} " in first and f"account_id={tenant.account_id} " in first
    assert "\n" not in second
    assert second.split(" ")[1:4] == ["GET", '"/v4/a', 'b\\nc"']
    assert "request_id=text-1 " in second and "key_prefix=- key_id=- " in second


def test_the_redaction_filter_leaves_only_display_prefixes(
    caplog: pytest.LogCaptureFixture,
) -> None:
    install_redaction()
    private, public = keys.generate("private"), keys.generate("public")
    assert redact(f"a {private}, b {public}.") == (
        f"a {keys.display_prefix(private)}…, b {keys.display_prefix(public)}…."
    )
    service = logging.getLogger("audiencefilter.service")
    try:
        raise ValueError(f"(sqlite3.IntegrityError) [parameters: ('{public}',)]")
    except ValueError:
        service.exception("database error with %s", private)
    assert private not in caplog.text and public not in caplog.text
    assert f"database error with {keys.display_prefix(private)}…" in caplog.text
    assert f"[parameters: ('{keys.display_prefix(public)}…',)]" in caplog.text
    logging.getLogger(REQUEST_LOGGER).warning("plain %s", "text")
    assert "plain text" in caplog.text


def test_serving_silences_uvicorns_access_log_and_no_access_log_means_no_lines() -> None:
    config = logging_config("json")
    assert config["loggers"]["uvicorn.access"]["handlers"] == []
    assert config["loggers"][REQUEST_LOGGER]["level"] == "INFO"
    assert config["handlers"]["stderr"]["filters"] == ["redact"]
    assert logging_config("json", access_log=False)["loggers"][REQUEST_LOGGER]["level"] == "WARNING"
    text = logging_config("text")["formatters"]["service"]["()"]
    assert text.endswith("request_log.TextFormatter")


def _demo_keys(output: str) -> tuple[str, str]:
    private = re.search(r"private key: (\S+)", output)
    public = re.search(r"public key:\s+(\S+)", output)
    assert private and public, output
    return private.group(1), public.group(1)


def _wait_for(server_output: Callable[[], str], text: str) -> str:
    """The server's output once it holds `text` (`tests/waiting.py`: no deadline)."""

    def appeared() -> str | None:
        output = server_output()
        return output if text in output else None

    return wait_until(appeared, f"{text!r} in the server's output", pause=0.05)


def test_no_whole_key_in_logs_error_bodies_database_or_key_listing(
    tmp_path: Path,
    app_factory: Callable[..., ApiClient],
    monkeypatch: pytest.MonkeyPatch,
    caplog: pytest.LogCaptureFixture,
    capsys: pytest.CaptureFixture[str],
) -> None:
    caplog.set_level(logging.INFO, logger="audiencefilter")
    path = tmp_path / "leak.db"
    url = f"sqlite:///{path}"
    created = run_cli(
        "keys", "create", "--type", "private", "--account", "leak",
        env=cli_env(AUDIENCEFILTER_DATABASE_URL=url),
    )  # fmt: skip
    assert created.returncode == 0, created.stderr
    disabled = created.stdout.strip().splitlines()[-1]
    assert main(["--database-url", url, "keys", "disable", disabled]) == 0
    unknown = keys.generate("private")
    error_bodies: list[str] = []
    request_ids: list[str] = []

    def note(response: httpx.Response, status: int) -> httpx.Response:
        assert response.status_code == status, response.text
        request_ids.append(response.headers["x-request-id"])
        if status >= 400:
            error_bodies.append(response.text)
        error_bodies.extend(response.headers.values())
        return response

    with live_server(url, command=("demo", "--no-seed")) as server:
        private, public = _demo_keys(server.output())
        secrets = [private, public, disabled, tampered(private), unknown]
        with httpx.Client(base_url=server.url) as http:
            own = {"apiKey": private}
            lst = note(http.post("/v4/lists", json={"name": "Leak"}, headers=own), 201)
            list_id = lst.json()["data"]["list"]["id"]
            contact = {"email": "ada@example.com", "listId": list_id}
            note(http.post("/v4/contacts", json=contact, headers={"apiKey": public}), 201)
            note(http.post("/v4/contacts", json=contact, headers={"apiKey": private}), 409)
            note(http.get("/v4/contacts", params={"listId": list_id}, headers=own), 200)
            note(http.get("/v4/lists", headers={"apiKey": public}), 403)
            for refused in (
                disabled,
                unknown,
                private + "x",
                f"Bearer {private}",
                tampered(private),
            ):
                note(http.get("/v4/lists", headers={"apiKey": refused}), 401)
            note(http.get("/v4/contacts", params={"listId": private}, headers=own), 404)
            note(http.get(f"/v4/lists/{private}", headers=own), 404)
            note(http.get("/v4/contacts", params={"limit": private}, headers=own), 400)
            note(http.post("/v4/lists", json={"name": "x", "mode": private}, headers=own), 400)
            last = note(http.get("/v4/lists", headers={**own, "X-Request-Id": private}), 200)
        output = _wait_for(server.output, last.headers["x-request-id"])

    banner = ("  private key: ", "  public key:  ")
    for text in output.splitlines():
        if any(secret in text for secret in secrets):
            assert text.startswith(banner), text
    logged = [json.loads(text) for text in output.splitlines() if text.startswith("{")]
    requests = [entry for entry in logged if "latency_ms" in entry]
    assert all(list(entry) == list(REQUEST_FIELDS) for entry in requests)
    logged_ids = [entry["request_id"] for entry in requests]
    assert all(logged_ids.count(request_id) == 1 for request_id in request_ids)
    assert any(entry["key_prefix"] == keys.display_prefix(private) for entry in requests)
    assert any(entry.get("logger", "").startswith("uvicorn") for entry in logged)
    assert '] "GET /' not in output and ' - "GET ' not in output  # no uvicorn access lines

    # In process, on the same database: statements and a failure that quotes a key.
    api = app_factory(sqlite_settings(path), raise_app_exceptions=False)
    parameters: list[str] = []

    @event.listens_for(api.app.state.db.engine, "before_cursor_execute")
    def _record(*args: Any) -> None:
        parameters.append(f"{args[2]} {args[3]!r}")

    assert not api.app.state.db.engine.echo
    for key, status in [(private, 200), (public, 403), (disabled, 401), (unknown, 401)]:
        note(api.get("/v4/lists", headers={"apiKey": key}), status)

    def explode(*_: object) -> dict[str, object]:
        raise RuntimeError(f"driver failed with parameter {private!r}")

    monkeypatch.setattr(list_routes, "list_view", explode)
    note(api.post("/v4/lists", json={"name": "boom"}, headers={"apiKey": private}), 500)
    assert parameters and keys.digest(private) in "".join(parameters)

    formatter = JsonFormatter()
    rendered = "\n".join(formatter.format(record) for record in caplog.records)
    with closing(sqlite3.connect(path)) as connection:
        dump = "\n".join(connection.iterdump())
    assert keys.display_prefix(disabled) in dump and keys.digest(private) in dump
    capsys.readouterr()
    assert main(["--database-url", url, "keys", "list"]) == 0
    listing = capsys.readouterr().out
    assert keys.display_prefix(private) in listing and keys.display_prefix(disabled) in listing

    places = {
        "records": caplog.text,
        "json lines": rendered,
        "statements": "\n".join(parameters),
        "error bodies": "\n".join(error_bodies),
        "database": dump,
        "keys list": listing,
        "keys create stderr": created.stderr,
    }
    for place, text in places.items():
        for secret in secrets:
            assert secret not in text, (place, keys.display_prefix(secret))


def test_the_client_is_the_forwarded_address_only_behind_a_trusted_proxy(
    client: ApiClient, app_factory: Callable[..., ApiClient], lines: Callable[[], list[Line]]
) -> None:
    forwarded = {"X-Forwarded-For": "203.0.113.7"}
    direct = client.get("/health/live", headers=forwarded)
    assert line_of(lines, direct)["client"] == "127.0.0.1"
    proxied = app_factory(trusted_proxies=["127.0.0.1"]).get("/health/live", headers=forwarded)
    assert line_of(lines, proxied)["client"] == "203.0.113.7"
