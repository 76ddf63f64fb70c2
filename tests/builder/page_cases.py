"""The library's answers the builder page's modules are unit-tested against (`js/*.test.mjs`).

The page (`service/static/builder/model.js`) reads a canonical where clause into its rule tree
and writes the tree back: it must give back exactly what the library writes, for every filter
of the conformance cases, with the field catalogue the service would serve for that schema
(`domain/field_catalogue.py`, the operators of `Field.operators`). This module computes those
answers with the library, as JSON the Node tests read: no copy of them is kept by hand, so a
change of the library's canonical form or of its operators reaches the page's tests at once.
"""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path
from typing import Any

import audiencefilter as af
from audiencefilter.language.fields import FieldType
from audiencefilter.service.domain import field_catalogue
from audiencefilter.service.domain.audience_filters import encode_fields, schema_for

CONFORMANCE = Path(__file__).resolve().parents[1] / "conformance"


def _schema(suite: dict[str, Any]) -> af.Schema:
    return af.Schema.from_mapping(suite["schema"]) if "schema" in suite else af.CONTACT


def _catalogue(schema: af.Schema) -> dict[str, Any]:
    return asdict(field_catalogue.of_schema(schema))


def conformance_cases(catalogues: dict[str, Any]) -> list[dict[str, Any]]:
    """Every conformance case whose filter the library accepts: its name, the name of its
    schema's catalogue (added to `catalogues`) and the canonical where clause
    (`Filter.to_dict`), and its text (`Filter.to_text`)."""
    cases = []
    for path in sorted(CONFORMANCE.glob("*.json")):
        suite = json.loads(path.read_text(encoding="utf-8"))
        schema = _schema(suite)
        catalogue = path.stem if "schema" in suite else "contact"
        catalogues[catalogue] = _catalogue(schema)
        for index, case in enumerate(suite["cases"]):
            where = case.get("where_json", case.get("where"))
            try:
                flt = af.parse(where, schema)
            except af.FilterError:
                continue  # a refused filter has no canonical form to round-trip
            name = f"{path.stem}:{case.get('name', index)}"
            text = flt.to_text()
            cases.append(
                {"name": name, "catalogue": catalogue, "canonical": flt.to_dict(), "text": text}
            )
    return cases


def every_type_schema() -> af.Schema:
    """A schema with a field of every type, in a column and inside `data` (where the library
    allows that type there)."""
    fields = [af.Field("data", FieldType.JSON)]
    for field_type in FieldType:
        name = field_type.value.replace("[]", "_list")
        fields.append(af.Field(f"col_{name}", field_type))
        try:
            fields.append(af.Field(f"data_{name}", field_type, ("data", name)))
        except ValueError:
            continue  # a type the library keeps in a column only (a date-time inside JSON)
    return af.Schema(tuple(fields))


def every_type_catalogue() -> dict[str, Any]:
    """The catalogue of `every_type_schema`: what the page must offer a control for."""
    return _catalogue(every_type_schema())


CONTROLLED = (
    "points > referrals and referrals <= points",
    'createdAt >= start of last month in "Europe/Paris"',
    "createdAt < start of today",
    "sum(actions.increase) >= 10",
    'max(actions.increase where name = "share" and increase >= 5) < 3',
    "min(actions.increase) > 0",
    'actions every (name = "share")',
    'actions some (name = "buy" and increase >= 2 and createdAt >= 30 days ago)',
    "count(actions where increase > 0) >= 3",
    'birthday >= "2000-01-31" and birthday <= start of this year',
    'actions some (name = "purchase" and increase > 10 and createdAt within last 30 days)',
    'actions none (name = "share" or name = "buy")',
    'count(actions where name = "share" and (increase > 5 or createdAt >= 7 days ago)) >= 2',
    "max(actions.createdAt) >= 30 days ago",
    'min(actions.createdAt where name = "share") within last 2 weeks',
    "max(actions.createdAt) is null",
    "count(actions) in [1, 4] and not count(actions) >= 2",
    'data.`utm.source` = "news" and data.`a.b`.c >= 3',
)
"""Filters the builder must show with its own controls (field references, `start of`,
aggregates over actions, `every`, actions filtered on `increase`, a date field, actions
filtered on several conditions or an OR, aggregates of `createdAt`, data paths whose keys hold
a dot), in the service's contact schema with a custom `birthday` date."""


def controlled_cases(catalogues: dict[str, Any]) -> list[dict[str, Any]]:
    """`CONTROLLED` as the service would hand them to the page: canonical JSON and the
    name of the schema's catalogue (added to `catalogues`)."""
    extra = {"birthday": "date"}
    schema = schema_for(encode_fields(extra))
    catalogue = "service"
    catalogues[catalogue] = _catalogue(schema)
    return [
        {
            "name": text,
            "catalogue": catalogue,
            "canonical": af.parse_text(text, schema).to_dict(),
            "text": text,
        }
        for text in CONTROLLED
    ]


def write(path: Path) -> Path:
    """The answers as one JSON file at `path`."""
    catalogues: dict[str, Any] = {}
    controlled = controlled_cases(catalogues)
    answers = {
        "catalogues": catalogues,
        "cases": conformance_cases(catalogues) + controlled,
        "controlled": controlled,
        "everyType": every_type_catalogue(),
    }
    path.write_text(json.dumps(answers), encoding="utf-8")
    return path
