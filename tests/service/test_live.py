"""The service as a real process on 127.0.0.1: `serve` and `demo` end to end over TCP."""

from __future__ import annotations

import re
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx

from .live import cli_env, live_server, run_cli


def test_serve_answers_over_http(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'live.db'}"
    created = run_cli(
        "keys", "create", "--type", "private", env=cli_env(AUDIENCEFILTER_DATABASE_URL=database)
    )
    key = created.stdout.strip().splitlines()[-1]
    with live_server(database) as server, httpx.Client(base_url=server.url) as http:
        headers = {"apiKey": key}
        assert http.get("/health/ready").json() == {"data": {"status": "ok"}}
        lst = http.post("/v4/lists", json={"name": "Live"}, headers=headers)
        assert lst.status_code == 201
        list_id = lst.json()["data"]["list"]["id"]
        made = http.post(
            "/v4/contacts", json={"email": "live@example.com", "listId": list_id}, headers=headers
        )
        assert made.status_code == 201
        listed = http.get("/v4/contacts", params={"listId": list_id}, headers=headers)
        assert [c["email"] for c in listed.json()["data"]["contacts"]] == ["live@example.com"]
        assert listed.headers["ratelimit-policy"] == '"free";q=100;w=60'

        wrong = http.put("/v4/contacts", headers=headers)
        assert (wrong.status_code, wrong.headers["allow"]) == (405, "GET, POST")

        def chunks() -> Iterator[bytes]:
            for _ in range(40):
                yield b" " * 32768

        big = http.post(
            "/v4/lists",
            content=chunks(),
            headers={**headers, "Content-Type": "application/json"},
        )
        assert big.status_code == 413
        assert big.json()["error"] == 413
    assert server.process.returncode is not None


def _demo_keys(output: str) -> tuple[str, str, str]:
    private = re.search(r"private key: (\S+)", output)
    public = re.search(r"public key:\s+(\S+)", output)
    lst = re.search(r"demo list:\s+(\S+)", output)
    assert private and public and lst, output
    return private.group(1), public.group(1), lst.group(1)


def test_demo_seeds_once_and_makes_fresh_keys_each_run(tmp_path: Path) -> None:
    database = f"sqlite:///{tmp_path / 'demo.db'}"
    runs: list[tuple[str, str, str]] = []
    for _ in range(2):
        with live_server(database, command=("demo",)) as server:
            private, public, list_id = _demo_keys(server.output())
            headers = {"apiKey": private}
            contacts = httpx.get(
                f"{server.url}/v4/contacts", params={"listId": list_id}, headers=headers
            )
            assert contacts.status_code == 200
            # The demo is on the pro plan: exploring does not meet the free plan's 100/minute.
            assert contacts.headers["RateLimit-Policy"].startswith('"pro";q=1000;')
            for earlier in runs:  # the keys of earlier runs are revoked
                for key in earlier[:2]:
                    refused = httpx.get(f"{server.url}/v4/lists", headers={"apiKey": key})
                    assert refused.status_code == 401
            emails = [c["email"] for c in contacts.json()["data"]["contacts"]]
            assert len(emails) == 5 and emails[0] == "ada@example.com"
            assert f'curl -H "apiKey: {private}"' in server.output()
            runs.append((private, public, list_id))
    assert runs[0][2] == runs[1][2]  # the same demo list
    assert runs[0][0] != runs[1][0] and runs[0][1] != runs[1][1]  # fresh keys
    listing = run_cli(
        "keys", "list", "--account", "demo", env=cli_env(AUDIENCEFILTER_DATABASE_URL=database)
    )
    accounts = [line.split()[1] for line in listing.stdout.splitlines()[1:] if line.strip()]
    assert accounts.count("demo") == 2, listing.stdout  # only the last run's two


def test_demo_on_a_busy_port_fails_before_making_keys(tmp_path: Path) -> None:
    path = tmp_path / "demo.db"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        result = run_cli(
            "demo",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            env=cli_env(AUDIENCEFILTER_DATABASE_URL=f"sqlite:///{path}"),
        )
    assert result.returncode == 1
    assert result.stdout == ""  # no keys printed
    assert result.stderr == (
        f"error: port {port} on 127.0.0.1 is already in use (is a demo already running?); "
        f"stop it, or choose another port: make serve PORT={port + 1}\n"
    )
    assert not path.exists()  # nothing created either
