"""Schemathesis over the OpenAPI document, against a live server: every check, no failure.

Two bounded runs of the CLI, at the same time, every check (`--checks all`) in both:

- the examples and fuzzing phases (and the coverage phase beyond the `ci` profile, see
  `UNIT_PHASES`), a few examples per operation, with the ids of a real
  list, contact and manual audience supplied so that the contact, action and audience operations
  are exercised beyond their 404s;
- the stateful phase alone, with no id supplied: it chains operations through the document's
  OpenAPI links (create a list, then a contact in it, then an action on that contact; read,
  update, delete, read again), which is what `use_after_free` and
  `ensure_resource_availability` judge. Supplied ids would override the linked ones there, hence
  two runs. It runs as two accounts (Web Fuzzing Commons auth with two peers), so that
  `object_level_authorization` replays one account's reads as the other. Its steps are valid
  requests only: negative data is the other run's business, and a step that sends it breaks the
  chain it is in. Links are only followed, not inferred: the document declares them.

`schemathesis_hooks.py` gives every valid `Idempotency-Key` a unique suffix (its docstring says
why). The number of generated cases and the stateful figures (scenarios, links covered) are
printed for the report.

Narrow exceptions, each for a deliberate behaviour of the service:

- Operations that take a where clause (`filters` of the contacts listing and of audience bodies)
  are described with the filter library's JSON Schema. It is exact on structure and types but not
  on date-time syntax (any string is a date-time to it), nor can it describe `filtersText`, and a
  smart audience also needs a filter that is not empty: for those operations a 400 is an
  acceptable answer to a schema-valid request (`positive_data_acceptance`). Their coverage phase,
  which enumerates every branch of that recursive schema (thousands of cases), is left to the
  fuzzing phase with a few more examples. So is their examples phase: to fill each nested
  object's properties around the date-time operators' documented examples it drew values from
  that schema one Hypothesis run at a time, 59 of the run's 77 s for 7 cases. Their documented
  examples are sent with real ids by tests/service/test_openapi.py, which wants a 2xx.
- An import of more rows than the schema's `maxItems` is a 413 (too large a request), which
  `negative_data_rejection` accepts for that operation besides its default statuses. A CSV
  import's columns must be the list's fields (or be mapped to them), and `mapping` and `dryRun`
  are for CSV only, which a schema cannot say either: a 400 is acceptable there as well.
- A webhook's URL is resolved when it is registered and must lead to public addresses only, a
  feed cursor (`after`) must be one the list gave out, an action's `createdAt` and a members
  listing's `at` must not be in the future (a schema cannot follow the clock), and a members
  listing's `group` must be a group of that audience's experiment, and an overlap's
  `audiences` must be audiences of its list: a 400 is acceptable there too.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from tests.waiting import HANG_GUARD

from .live import cli_env, live_server, run_cli

HOOKS = Path(__file__).with_name("schemathesis_hooks.py")
MAX_EXAMPLES = 3
TIMEOUT = 3 * HANG_GUARD
"""A guard against a hung run, not a deadline: on a machine at load 9 the examples alone took
250 s, and a run stopped early is a failure that says nothing of the service."""
STATEFUL_SCENARIOS = 30
STATEFUL_STEPS = 10
# schemathesis' default for `positive_data_acceptance`, 3xx left out: the service never redirects.
ACCEPTED = ["2xx", "401", "403", "404", "409", "429", "5xx"]
FILTER_OPERATIONS = (
    "^(GET /v4/contacts|POST /v4/audiences(/preview|/estimate|/compare)?|PATCH /v4/audiences/.id.)$"
)
# Webhook URLs must resolve to public addresses, a feed cursor must be one of the list's, an
# action's or a contact's `createdAt` must not be in the future, a list's custom fields type
# `data`, a members listing's `at` must not be in the future nor its `group` name another
# audience's, an overlap's `audiences` must be audiences of its list, and an export's `bom` is
# for `format=csv` only (JSON Lines has no byte order mark): JSON Schema can say
# none of these, so for these a 400 answers a schema-valid request.
CHECKED_AT_RUN_TIME = (
    "^(POST /v4/webhooks|PATCH /v4/webhooks/.id.|GET /v4/events|POST /v4/actions"
    "|POST /v4/contacts|PATCH /v4/contacts/.id.|GET /v4/audiences/.id./members"
    "|GET /v4/lists/.id./overlap|GET /v4/audiences/.id./export)$"
)
# schemathesis' default for `negative_data_rejection`, and the 413 of an import over its row
# limit (the schema's `maxItems`): too many rows is too large a request, not a malformed one.
IMPORT_REJECTIONS = ["400", "401", "403", "404", "405", "406", "409", "413", "415", "422", "428"]
IMPORT_REJECTIONS += ["429", "5xx"]
FILTER_SETTINGS = """phases.coverage.enabled = false
phases.examples.enabled = false
generation.max-examples = 5"""
TOP = 'suppress-health-check = ["large_base_example"]\n'
OPERATIONS = f"""
[[operations]]
include-name-regex = "{FILTER_OPERATIONS}"
{FILTER_SETTINGS}
checks.positive_data_acceptance.expected-statuses = {{filter_statuses}}

[[operations]]
include-name-regex = "{CHECKED_AT_RUN_TIME}"
checks.positive_data_acceptance.expected-statuses = {{filter_statuses}}

[[operations]]
include-name-regex = "^POST /v4/contacts/import$"
checks.negative_data_rejection.expected-statuses = {{import_rejections}}
checks.positive_data_acceptance.expected-statuses = {{filter_statuses}}
"""
UNIT = """
[parameters]
"query.listId" = "{list_id}"
"query.subId" = "{contact_id}"

[[operations]]
include-name-regex = "^(GET /v4/audiences/.id.|POST .*/members|DELETE .*/members/.*)$"
parameters = {{ "path.id" = "{audience_id}" }}
"""
STATEFUL = f"""
[phases.stateful]
max-steps = {STATEFUL_STEPS}
generation.max-examples = {STATEFUL_SCENARIOS}
generation.mode = "positive"
inference.algorithms = []
"""


AUTH = """
[auth.wfc]
path = "auth.json"
peers = ["owner", "peer"]
"""
PROFILE = os.environ.get("HYPOTHESIS_PROFILE", "ci")
UNIT_PHASES = "examples,fuzzing" if PROFILE == "ci" else "examples,coverage,fuzzing"
"""The `ci` size runs every operation through its examples and a few fuzzed cases of each
kind, positive and negative; the coverage phase, which has no budget of its own (it
enumerates every boundary and violation the document allows: thousands of cases), joins in
the `thorough`, `deep` and `search` profiles."""


@dataclass(frozen=True)
class Fixtures:
    """The real resources the unit phases are pointed at."""

    list_id: str
    contact_id: str
    audience_id: str


def _statuses(extra: list[str]) -> str:
    return "[" + ", ".join(f'"{status}"' for status in ACCEPTED + extra) + "]"


def _config(tables: str) -> str:
    rejections = "[" + ", ".join(f'"{status}"' for status in IMPORT_REJECTIONS) + "]"
    operations = OPERATIONS.format(filter_statuses=_statuses(["400"]), import_rejections=rejections)
    # TOML: top-level keys, then tables, then the `[[operations]]` array of tables.
    return TOP + tables + operations


def _new_key(account: str, env: dict[str, str]) -> str:
    created = run_cli("keys", "create", "--type", "private", "--account", account, env=env)
    assert created.returncode == 0, created.stderr
    return created.stdout.strip().splitlines()[-1]


def _fixtures(url: str, key: str) -> Fixtures:
    headers = {"apiKey": key}
    lst = httpx.post(f"{url}/v4/lists", json={"name": "fuzz"}, headers=headers)
    list_id = lst.json()["data"]["list"]["id"]
    contact = httpx.post(
        f"{url}/v4/contacts",
        json={"email": "fuzz@example.com", "listId": list_id},
        headers=headers,
    )
    audience = httpx.post(
        f"{url}/v4/audiences",
        json={"name": "fuzz", "listId": list_id, "mode": "manual"},
        headers=headers,
    )
    return Fixtures(
        list_id=list_id,
        contact_id=contact.json()["data"]["contact"]["id"],
        audience_id=audience.json()["data"]["audience"]["id"],
    )


def _unit_run(directory: Path, fixtures: Fixtures) -> Path:
    directory.mkdir()
    config = directory / "schemathesis.toml"
    ids = {
        "list_id": fixtures.list_id,
        "contact_id": fixtures.contact_id,
        "audience_id": fixtures.audience_id,
    }
    config.write_text(_config(UNIT.format(**ids)))
    return config


def _stateful_run(directory: Path, owner_key: str, peer_key: str) -> Path:
    """Two identities (Web Fuzzing Commons auth), so `object_level_authorization` has a peer."""
    directory.mkdir()
    users = [("owner", owner_key), ("peer", peer_key)]
    auth = [
        {"name": name, "fixedHeaders": [{"name": "apiKey", "value": key}]} for name, key in users
    ]
    (directory / "auth.json").write_text(json.dumps({"auth": auth}))
    config = directory / "schemathesis.toml"
    config.write_text(_config(AUTH + STATEFUL))
    return config


def _start(
    url: str, config: Path, phases: str, env: dict[str, str], *options: str
) -> subprocess.Popen[str]:
    command = [sys.executable, "-m", "schemathesis.cli", "--config-file", str(config), "run"]
    command += [f"{url}/openapi.json", *options, "--checks", "all", "--phases", phases]
    command += ["--max-examples", str(MAX_EXAMPLES), "--workers", "1", "--no-color"]
    # The same cases on every run: a fresh clone must not meet inputs the last run never tried.
    command += ["--seed", "20261123", "--generation-deterministic"]
    return subprocess.Popen(
        command,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=config.parent,
    )


def _finish(run: subprocess.Popen[str]) -> tuple[int, str]:
    try:
        stdout, stderr = run.communicate(timeout=TIMEOUT)
    except subprocess.TimeoutExpired:
        run.kill()
        stdout, stderr = run.communicate()
    return run.returncode, stdout + stderr[-2000:]


def _figure(pattern: str, output: str) -> str:
    found = re.search(pattern, output)
    return found.group(1).strip() if found else "?"


def _generated(output: str) -> int:
    return int(_figure(r"Test cases:\s*\n\s*(\d+) generated", output).replace("?", "0"))


def test_schemathesis_finds_no_failure(tmp_path: Path) -> None:
    pytest.importorskip("schemathesis")
    database = f"sqlite:///{tmp_path / 'st.db'}"
    env = cli_env(AUDIENCEFILTER_DATABASE_URL=database, SCHEMATHESIS_HOOKS=str(HOOKS))
    owner_key, peer_key = _new_key("fuzz", env), _new_key("peer", env)
    limits = {"AUDIENCEFILTER_RATE_LIMIT_FREE": "1000000/minute"}
    with live_server(database, **limits) as server:
        unit_config = _unit_run(tmp_path / "unit", _fixtures(server.url, owner_key))
        stateful_config = _stateful_run(tmp_path / "stateful", owner_key, peer_key)
        # Concurrently: the stateful run needs no fixture and leaves the unit run's alone.
        unit = _start(server.url, unit_config, UNIT_PHASES, env, "--header", f"apiKey: {owner_key}")
        stateful = _start(server.url, stateful_config, "stateful", env)
        (unit_code, unit_output), (stateful_code, stateful_output) = map(_finish, (unit, stateful))
    scenarios = _figure(r"Scenarios:\s*(\d+)", stateful_output)
    links = _figure(r"API Links:\s*([^\n]+)", stateful_output)
    print(
        f"schemathesis: {_generated(unit_output)} cases generated ({UNIT_PHASES}); "
        f"stateful: {_generated(stateful_output)} cases, {scenarios} scenarios, links {links}"
    )
    assert unit_code == 0, unit_output[-8000:]
    assert stateful_code == 0, stateful_output[-8000:]
    assert _generated(unit_output) > 0 and _generated(stateful_output) > 0
    assert scenarios != "?" and int(scenarios) > 0
