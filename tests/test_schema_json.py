"""The JSON Schema of the filter language accepts exactly what `parse` accepts on structure and
types: checked with the `jsonschema` package on the conformance suite and on random input."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from hypothesis import given

import audiencefilter as af
from audiencefilter.testing.strategies import where_clauses, where_noise

VALIDATOR = jsonschema.Draft202012Validator(af.json_schema())
CONFORMANCE = Path(__file__).parent / "conformance"
# Problems JSON Schema cannot see: text-level JSON rules and date-time syntax.
BEYOND_JSON_SCHEMA = {
    "duplicate-keys",
    "duplicate-operators",
    "nan",
    "infinity",
    "overflowing-float",
    "not-json",
    "bad-date",
    "bad-month",
    "lone-surrogate",
    "duration-too-long",
    "duplicate-ago",
    "reference-with-mode",  # mode beside a field reference: the parser alone sees the pair
    "unknown-time-zone",
    "time-zone-in-wrong-case",
    "anniversary-unknown-zone",
}


def _cases(kind: str) -> list[Any]:
    params = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        validator = VALIDATOR
        if "schema" in suite:  # a suite over fields of its own (list fields, say)
            fields = af.Schema.from_mapping(suite["schema"])
            validator = jsonschema.Draft202012Validator(af.json_schema(fields))
        for case in suite["cases"]:
            if kind in case and case["name"] not in BEYOND_JSON_SCHEMA:
                where = json.loads(case["where_json"]) if "where_json" in case else case["where"]
                params.append(pytest.param(validator, where, id=f"{path.stem}:{case['name']}"))
    return params


def test_schema_is_valid_draft_2020_12() -> None:
    jsonschema.Draft202012Validator.check_schema(af.json_schema())
    assert af.json_schema()["$schema"] == "https://json-schema.org/draft/2020-12/schema"


@pytest.mark.parametrize(("validator", "where"), _cases("matches"))
def test_schema_accepts_every_valid_conformance_filter(
    validator: jsonschema.Draft202012Validator, where: Any
) -> None:
    assert validator.is_valid(where)


@pytest.mark.parametrize(("validator", "where"), _cases("error"))
def test_schema_rejects_every_structurally_invalid_conformance_filter(
    validator: jsonschema.Draft202012Validator, where: Any
) -> None:
    assert not validator.is_valid(where)


@given(where_clauses())
def test_schema_accepts_random_valid_filters(where: dict[str, Any]) -> None:
    assert VALIDATOR.is_valid(json.loads(json.dumps(where)))


_json = where_noise(finite=True, max_leaves=15)


@given(_json)
def test_schema_and_parser_agree_on_random_json(value: Any) -> None:
    accepted = VALIDATOR.is_valid(value)
    try:
        af.parse(value)
    except af.FilterError as error:
        if accepted:  # only what the schema cannot see may still be refused
            assert all("ISO 8601" in issue.message for issue in error.errors), error
    else:
        assert accepted


def test_custom_schema_fields_appear() -> None:
    schema = af.CONTACT.with_fields(isGDPR="boolean")
    validator = jsonschema.Draft202012Validator(af.json_schema(schema))
    assert validator.is_valid({"isGDPR": {"not": True}})
    assert not VALIDATOR.is_valid({"isGDPR": True})
