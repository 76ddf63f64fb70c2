"""Schemathesis over the OpenAPI document, against a live server: every check, no failure.

The run is bounded (a few examples per operation, one worker) to stay well under a minute. Real
ids of a list and a contact are supplied so that the contact and action operations are exercised
beyond their 404s. The number of generated cases is printed for the report.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from .live import cli_env, live_server, run_cli

MAX_EXAMPLES = "3"


def test_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    pytest.importorskip("schemathesis")
    database = f"sqlite:///{tmp_path / 'st.db'}"
    env = cli_env(AUDIENCEFILTER_DATABASE_URL=database)
    created = run_cli("keys", "create", "--type", "private", "--account", "fuzz", env=env)
    assert created.returncode == 0, created.stderr
    key = created.stdout.strip().splitlines()[-1]
    limits = {"AUDIENCEFILTER_RATE_LIMIT_FREE": "1000000/minute"}
    with live_server(database, **limits) as server:
        headers = {"apiKey": key}
        lst = httpx.post(f"{server.url}/v4/lists", json={"name": "fuzz"}, headers=headers)
        list_id = lst.json()["data"]["list"]["id"]
        contact = httpx.post(
            f"{server.url}/v4/contacts",
            json={"email": "fuzz@example.com", "listId": list_id},
            headers=headers,
        )
        contact_id = contact.json()["data"]["contact"]["id"]
        config = tmp_path / "schemathesis.toml"
        config.write_text(
            f'[parameters]\n"query.listId" = "{list_id}"\n"query.subId" = "{contact_id}"\n'
        )
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "schemathesis.cli",
                "--config-file",
                str(config),
                "run",
                f"{server.url}/openapi.json",
                "--header",
                f"apiKey: {key}",
                "--checks",
                "all",
                "--max-examples",
                MAX_EXAMPLES,
                "--workers",
                "1",
                "--no-color",
            ],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
            cwd=tmp_path,
        )
    summary = re.search(r"Test cases:\s*\n\s*(\d+) generated", done.stdout)
    print(f"schemathesis: {summary.group(1) if summary else '?'} cases generated")
    assert done.returncode == 0, done.stdout[-6000:] + done.stderr[-2000:]
    assert summary is not None and int(summary.group(1)) > 0
