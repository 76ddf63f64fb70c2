"""Every construct through every surface.

One sample filter per node kind and per operator family, derived from the node registry (the
`Node` union, `Op`, `ListOp`, `Aggregate` and the to-many quantifiers): a new kind or operator
with no sample fails `test_every_kind_and_operator_has_a_sample` until one is written here.
Each sample then goes through every surface: the JSON and text round trips, `explain`, every
command of the CLI (`check`, `fmt`, `sql` per dialect, `explain`, `eval` over JSON Lines with
actions and list fields), every back-end of the conformance suite (memory, explain, SQL text
and SQLAlchemy on each engine, polars; Spark in its own marked test), and the service's preview
and stored membership. The CLI crashed on behaviour filters and list fields before this test.
"""

from __future__ import annotations

import io
import json
import typing
from collections.abc import Iterator
from contextlib import redirect_stderr, redirect_stdout
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

import audiencefilter as af
from audiencefilter.cli import main as cli
from audiencefilter.language.fields import ListOp
from audiencefilter.language.nodes import Node
from audiencefilter.language.relations import TO_MANY

from .engines import engine_params, selector

NOW = datetime.fromisoformat("2026-11-20T12:00:00+00:00")
LISTS = {"tags": "string[]", "scores": "number[]", "birthday": "date", "holidays": "date[]"}
"""The fields the contact schema lacks: list fields and calendar dates (given by `--schema`)."""
SCHEMA = af.CONTACT.with_fields(**LISTS)  # type: ignore[arg-type]

SAMPLES: dict[str, dict[str, Any]] = {
    # node kinds
    "and": {"points": {"gte": 10}, "country": "FR"},
    "or": {"OR": [{"points": {"gt": 50}}, {"country": "DE"}]},
    "not": {"NOT": {"country": "FR"}},
    "const": {},
    "is-null": {"country": None},
    "blank": {"firstName": {"blank": True}},
    "field-comparison": {"referrals": {"gt": {"_ref": "points"}}},
    "data-path": {"data": {"path": ["plan"], "equals": "pro"}},
    # comparison operators
    "equals": {"email": "ann@acme.com"},
    "gt": {"points": {"gt": 10}},
    "gte": {"points": {"gte": 10}},
    "lt": {"points": {"lt": 10}},
    "lte": {"createdAt": {"lte": "2026-06-01T00:00:00Z"}},
    "in": {"country": {"in": ["FR", "DE"]}},
    "notIn": {"country": {"notIn": ["FR"]}},
    "contains": {"email": {"contains": "ACME"}},
    "startsWith": {"email": {"startsWith": "ann"}},
    "endsWith": {"email": {"endsWith": "@acme.com"}},
    "within": {"createdAt": {"within": {"last": 30, "unit": "day"}}},
    "anniversary": {"createdAt": {"anniversary": {"this": "month"}}},
    "start-of": {"createdAt": {"gte": {"startOf": "year"}}},
    "ago": {"createdAt": {"gte": {"ago": "P90D"}}},
    # list operators
    "has": {"tags": {"has": "vip"}},
    "hasSome": {"tags": {"hasSome": ["vip", "new"]}},
    "hasEvery": {"tags": {"hasEvery": ["vip", "fr"]}},
    "isEmpty": {"tags": {"isEmpty": True}},
    "list-equals": {"scores": {"equals": [1, 2]}},
    "array_contains": {"data": {"path": ["labels"], "array_contains": "gold"}},
    "array_starts_with": {"data": {"path": ["labels"], "array_starts_with": "gold"}},
    "array_ends_with": {"data": {"path": ["labels"], "array_ends_with": "gold"}},
    # relations
    "some": {"actions": {"some": {"name": "share"}}},
    "every": {"actions": {"every": {"increase": {"gt": 0}}}},
    "none": {"actions": {"none": {"name": "share"}}},
    "count": {"actions": {"where": {"name": "share"}, "count": {"gte": 2}}},
    "sum": {"actions": {"sum": {"increase": {"gte": 5}}}},
    "min": {"actions": {"min": {"increase": {"not": {"gt": 1}}}}},
    "max": {"actions": {"max": {"createdAt": {"within": {"last": 30, "unit": "day"}}}}},
    "relation-reference": {"actions": {"some": {"name": {"gt": {"_ref": "id"}}}}},
    # field types the contact schema lacks
    "date": {"birthday": {"gte": "1990-01-01"}},
    "date-anniversary": {
        "birthday": {"anniversary": {"this": "week", "timeZone": "America/New_York"}}
    },
    "date-relative": {"birthday": {"gte": {"ago": "P40D"}}},
    "date-list": {"holidays": {"has": "2026-12-25"}},
}
TYPE_SAMPLES = {
    "string": "equals",
    "number": "gt",
    "boolean": "not",
    "datetime": "lte",
    "date": "date",
    "json": "data-path",
    "string[]": "has",
    "number[]": "list-equals",
    "boolean[]": None,  # the list rules are the item type's: string[] and number[] cover them
    "datetime[]": None,
    "date[]": "date-list",
}
"""A sample per field type (a new type fails `test_every_field_type_has_a_sample`)."""
KIND_SAMPLES = {
    "and": "and",
    "or": "or",
    "not": "not",
    "comparison": "gt",
    "is_null": "is-null",
    "const": "const",
    "quantified": "some",
    "aggregated": "count",
    "blank": "blank",
    "field_comparison": "field-comparison",
    "list_test": "has",
}
LIST_SAMPLES = {name for name, where in SAMPLES.items() if set(where) & set(LISTS)}

_ACTIONS = [
    {"id": "a1", "name": "share", "increase": 3, "createdAt": "2026-11-10T00:00:00Z"},
    {"id": "a2", "name": "share", "increase": 4, "createdAt": "2026-11-18T00:00:00Z"},
]
RECORDS: list[dict[str, Any]] = [
    {
        "id": "c1",
        "email": "ann@acme.com",
        "firstName": "Ann",
        "points": 12,
        "referrals": 20,
        "country": "FR",
        "createdAt": "2025-11-03T09:00:00Z",
        "data": {"plan": "pro", "labels": ["gold", "x"]},
        "tags": ["vip", "fr"],
        "scores": [1, 2],
        "birthday": "1990-11-16",
        "holidays": ["2026-12-25"],
        "actions": _ACTIONS,
    },
    {
        "id": "c2",
        "email": "bob@example.com",
        "firstName": "",
        "points": 60,
        "referrals": 1,
        "country": "DE",
        "createdAt": "2026-11-01T00:00:00Z",
        "data": {"plan": "free", "labels": ["x", "gold"]},
        "tags": ["new"],
        "scores": [],
        "birthday": "2026-11-01",
        "holidays": [],
        "actions": [{"id": "b1", "name": "visit", "increase": 1, "createdAt": None}],
    },
    {
        "id": "c3",
        "email": "cy@acme.com",
        "firstName": None,
        "points": 5,
        "referrals": None,
        "country": None,
        "createdAt": "2020-02-29T00:00:00Z",
        "data": None,
        "tags": [],
        "scores": None,
        "birthday": None,
        "holidays": None,
        "actions": [],
    },
]


def _names(kind: type) -> set[str]:
    return {member.value for member in kind}  # type: ignore[attr-defined]


def test_every_kind_and_operator_has_a_sample() -> None:
    kinds = {cls.kind for cls in typing.get_args(Node)}
    assert kinds == set(KIND_SAMPLES), "a node kind without a sample: add one to SAMPLES"
    operators = {op for op in _names(af.Op) if op not in ("not",)}
    covered = {key for where in _walk_keys(SAMPLES.values()) for key in where}
    missing = operators | _names(ListOp) | _names(af.Aggregate) | {q.value for q in TO_MANY}
    assert not (missing - covered - {"equals"}), sorted(missing - covered)


def test_every_field_type_has_a_sample() -> None:
    assert set(TYPE_SAMPLES) == {kind.value for kind in af.FieldType}
    for kind, name in TYPE_SAMPLES.items():
        if name is not None:
            field = next(iter(SAMPLES[name]))
            sampled = SCHEMA[field].type.value if field in SCHEMA else None
            assert sampled == kind or kind == "boolean", (kind, name, sampled)


def _walk_keys(values: Any) -> Iterator[set[str]]:
    for value in values:
        if isinstance(value, dict):
            yield set(value)
            yield from _walk_keys(value.values())
        elif isinstance(value, list):
            yield from _walk_keys(value)


def _expected(where: dict[str, Any]) -> list[str]:
    return [r["id"] for r in af.parse(where, SCHEMA).select(RECORDS, now=NOW)]


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_round_trips_and_explain(name: str) -> None:
    flt = af.parse(SAMPLES[name], SCHEMA)
    assert af.parse(flt.to_json(), SCHEMA) == flt
    assert af.parse_text(flt.to_text(), SCHEMA) == flt
    for record in RECORDS:
        assert flt.explain(record, now=NOW).matched is flt.matches(record, now=NOW)


def _cli(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        status = cli(list(argv))
    return status, out.getvalue(), err.getvalue()


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("surfaces")
    contacts = folder / "contacts.jsonl"
    contacts.write_text("".join(json.dumps(r) + "\n" for r in RECORDS), encoding="utf-8")
    schema = folder / "schema.json"
    schema.write_text(json.dumps({"id": "string", **LISTS}), encoding="utf-8")
    return {"contacts": contacts, "schema": schema}


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_every_cli_command(name: str, files: dict[str, Path]) -> None:
    where = SAMPLES[name]
    schema = ["--schema", str(files["schema"])] if name in LIST_SAMPLES else []
    read = af.Schema.from_mapping({"id": "string", **LISTS}) if schema else af.CONTACT
    flt = af.parse(where, read)
    text = json.dumps(where)
    assert _cli("check", text, *schema)[0] == 0
    status, out, _ = _cli("fmt", "--to", "text", text, *schema)
    assert (status, out.strip()) == (0, flt.to_text())
    assert _cli("fmt", "--to", "json", text, *schema)[1].strip() == flt.to_json()
    for dialect in ("postgresql", "sqlite", "mysql", "duckdb", "spark"):
        status, out, err = _cli(
            "sql", "--dialect", dialect, text, *schema, "--now", NOW.isoformat()
        )
        assert "Traceback" not in err
        assert status == 0 or (status == 1 and err.strip()), (dialect, err)
    record = json.dumps(RECORDS[0] if not schema else {"id": "c1", **_lists(RECORDS[0])})
    status, out, err = _cli("explain", text, *schema, "--record", record, "--now", NOW.isoformat())
    assert status == 0, err
    status, out, err = _cli("eval", text, str(files["contacts"]), *schema, "--now", NOW.isoformat())
    assert status in (0, 3), err
    if not schema:
        assert out.split() == _expected(where)


def _lists(record: dict[str, Any]) -> dict[str, Any]:
    return {key: record[key] for key in LISTS}


@pytest.mark.parametrize("engine", engine_params())
def test_every_back_end_agrees(engine: Any, request: pytest.FixtureRequest) -> None:
    select = selector(engine, request)
    disagreements = {}
    for name, where in sorted(SAMPLES.items()):
        flt = af.parse(where, SCHEMA)
        try:
            found = sorted(select(flt, RECORDS, NOW))
        except af.FilterError as exc:  # a documented refusal, the same message everywhere
            assert exc.errors, name
            continue
        if found != _expected(where):
            disagreements[name] = (found, _expected(where))
    assert not disagreements, disagreements


# The service refuses an empty filter for a smart audience (docs/service-audiences.md).
SERVICE_SAMPLES = sorted(set(SAMPLES) - LIST_SAMPLES - {"const"})


@pytest.fixture(scope="module")
def service(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from audiencefilter.service import create_app

    from .service.conftest import ApiClient, sqlite_settings

    folder = tmp_path_factory.mktemp("surfaces")
    settings = sqlite_settings(folder / "surfaces.db", membership_sweep_seconds=0)
    client = ApiClient(create_app(settings, clock=lambda: NOW))
    yield client
    client.close()


@pytest.fixture(scope="module")
def seeded(service: Any) -> tuple[Any, str, dict[str, str]]:
    from .service.conftest import make_tenant

    tenant = make_tenant(service)
    list_id = tenant.new_list()["id"]
    ids = {}
    fields = ("email", "firstName", "points", "referrals", "country", "data")
    for record in RECORDS:
        body = {k: record[k] for k in fields if record.get(k) is not None}
        contact = tenant.new_contact(list_id, body.pop("email"), **body)
        ids[record["id"]] = contact["id"]
        for action in record["actions"]:
            action_body = {"name": action["name"], "increase": action["increase"]}
            tenant.ok("POST", "/v4/actions", 201, json={**action_body, "subId": contact["id"]})
    return tenant, list_id, ids


@pytest.mark.parametrize("name", SERVICE_SAMPLES)
def test_service_preview_and_stored_membership(name: str, seeded: Any) -> None:
    from .service.audience_helpers import member_emails, smart

    tenant, list_id, _ = seeded
    where = SAMPLES[name]
    preview = tenant.ok("POST", "/v4/audiences/preview", json={"listId": list_id, "filters": where})
    previewed = sorted(c["email"] for c in preview["contacts"])
    audience = smart(tenant, list_id, where, name=f"surface {name}")
    assert sorted(member_emails(tenant, audience["id"])) == previewed
    if "actions" not in where and "createdAt" not in json.dumps(where):
        # The service stamps its own creation times: only fields it was given compare here.
        expected = [r["email"] for r in RECORDS if r["id"] in _expected(where)]
        assert previewed == sorted(expected)


@pytest.mark.spark
def test_pyspark_agrees(spark: Any) -> None:
    from audiencefilter.backends.frames.spark import frame_for

    frame = frame_for(spark, RECORDS, SCHEMA)
    for name, where in sorted(SAMPLES.items()):
        flt = af.parse(where, SCHEMA)
        try:
            found = sorted(row["id"] for row in flt.select_frame(frame, now=NOW).collect())
        except af.FilterError:
            continue
        assert found == _expected(where), name
