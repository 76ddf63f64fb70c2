"""The reference evaluators of the interop formats, as the tests call them.

- JsonLogic: `json_logic.jsonLogic` (the Python port), on the record as it is.
- MongoDB: `mongoquery`, on the record as MongoDB sees it. MongoDB matches `null` against
  a null or a missing field alike and no operator read here tells them apart, but mongoquery
  finds `null` equal to a stored null only (and `$ne: null` true for a missing one), so every
  absent field is written null, rows of relations too. mongoquery has no `$options` (it
  raises NotImplementedError) and takes a compiled pattern instead.
"""

from __future__ import annotations

import re
from typing import Any

from json_logic import jsonLogic
from mongoquery import Query

import audiencefilter as af
from tests.cel_reference import cel_matches


def document(record: dict[str, Any], schema: af.Schema = af.CONTACT) -> dict[str, Any]:
    """`record` with every absent field of `schema` (and of its relations' rows) null."""
    filled = {field.name: record.get(field.name) for field in schema.fields}
    for relation in schema.relations:
        rows = record.get(relation.name)
        if rows is None:
            filled[relation.name] = None
        elif isinstance(rows, dict):  # a to-one relation holds one row
            filled[relation.name] = document(rows, relation.schema)
        else:
            filled[relation.name] = [document(row, relation.schema) for row in rows]
    return filled


def mongo_query(query: Any) -> Any:
    """The query as mongoquery takes it: `$regex` with `$options` as a compiled pattern."""
    if isinstance(query, list):
        return [mongo_query(item) for item in query]
    if not isinstance(query, dict):
        return query
    if "$regex" in query:
        flags = re.IGNORECASE if query.get("$options") == "i" else 0
        rest = {k: mongo_query(v) for k, v in query.items() if k not in ("$regex", "$options")}
        return {"$regex": re.compile(query["$regex"], flags), **rest}
    return {key: mongo_query(value) for key, value in query.items()}


def mongo_matches(query: Any, record: dict[str, Any], schema: af.Schema = af.CONTACT) -> bool:
    return bool(Query(mongo_query(query)).match(document(record, schema)))


def jsonlogic_matches(rule: Any, record: dict[str, Any], schema: af.Schema = af.CONTACT) -> bool:
    return bool(jsonLogic(rule, record))


REFERENCES = {"jsonlogic": jsonlogic_matches, "mongodb": mongo_matches, "cel": cel_matches}
"""Each format's reference evaluator: `(rule, record, schema) -> matched`."""
