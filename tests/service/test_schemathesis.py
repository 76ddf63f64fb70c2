"""Schemathesis over the OpenAPI document, against a live server: every check, no failure.

The run is bounded (a few examples per operation, one worker) to stay well under a minute. Real
ids of a list, a contact and a manual audience are supplied so that the contact, action and
audience operations are exercised beyond their 404s. The number of generated cases is printed for
the report.

Operations that take a where clause (`filters` of the contacts listing and of audience bodies)
are described with the filter library's JSON Schema. It is exact on structure and types but not
on date-time syntax (any string is a date-time to it), nor can it describe `filtersText`, so for
those operations a 400 is an acceptable answer to a schema-valid request; and their coverage
phase, which enumerates every branch of that recursive schema (thousands of cases), is left to
the fuzzing phase with a few more examples.
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
FILTER_SETTINGS = """phases.coverage.enabled = false
generation.max-examples = 5
checks.positive_data_acceptance.expected-statuses = ["2xx", "400", "401", "403", "404", "409"]"""
CONFIG = """
suppress-health-check = ["large_base_example"]

[parameters]
"query.listId" = "{list_id}"
"query.subId" = "{contact_id}"

[[operations]]
include-name-regex = "^(GET /v4/contacts|POST /v4/audiences(/preview)?|PATCH /v4/audiences/.id.)$"
{filter_settings}

[[operations]]
include-name-regex = "^(GET /v4/audiences/.id.|POST .*/members|DELETE .*/members/.*)$"
parameters = {{ "path.id" = "{audience_id}" }}
"""


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
        audience = httpx.post(
            f"{server.url}/v4/audiences",
            json={"name": "fuzz", "listId": list_id, "mode": "manual"},
            headers=headers,
        )
        audience_id = audience.json()["data"]["audience"]["id"]
        config = tmp_path / "schemathesis.toml"
        config.write_text(
            CONFIG.format(
                list_id=list_id,
                contact_id=contact_id,
                audience_id=audience_id,
                filter_settings=FILTER_SETTINGS,
            )
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
