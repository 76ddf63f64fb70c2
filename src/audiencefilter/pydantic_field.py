"""`FilterField(schema)`: a filter as a field of a pydantic model, so a FastAPI endpoint takes one.

```python
class AudienceIn(BaseModel):
    name: str
    where: af.FilterField(af.CONTACT)
```

The field accepts a where clause (a JSON object), the text syntax (a string) or a `Filter`
over the same schema, and holds a `Filter`; it serializes as the canonical where clause.

Design choices:
- The library's own reader validates (`parse`, `parse_text`): no second rule set. Each
  `Issue` becomes one pydantic error whose `loc` continues the field's with the issue's path
  (`("where", "OR", 1, "points", "gte")`), `msg` its message, and `ctx` its suggestion and text
  position, so FastAPI's 422 answer points into the filter.
- The JSON Schema is the library's (`where/json_schema.py`), not one pydantic derives: its
  definitions join the model's (`#/$defs/...`, or `#/components/schemas/...` in FastAPI's
  OpenAPI document) under names prefixed with the schema's component name, and the field is
  `oneOf` that where clause or a string of the text syntax.
- The component name is derived from the schema alone, never from the order fields are
  registered in: `contact` for the library's contact schema, the schema's name and a short
  digest of its JSON Schema for any other (`contact_3f9a01c2`, so `CONTACT.with_fields(...)`
  documents its own component beside `CONTACT`'s), or the `name=` the caller gives. A
  schema with the same JSON Schema shares the component; one name given to two different
  schemas is a `FilterError` when the document is generated, not a silent overwrite.
- `FilterQuery` is a filter as a query parameter (`GET /contacts?where=...`). FastAPI takes
  only scalars as query parameters, so it is a dependency reading a string (the text syntax,
  or a where clause as JSON text) and answering 422 at the mistake's path or position.
- pydantic is imported here only: the package imports this module on first use of
  `FilterField`. FastAPI is imported by `FilterQuery` alone, on its call.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from dataclasses import dataclass
from typing import TYPE_CHECKING, Annotated, Any

from pydantic import GetCoreSchemaHandler, GetJsonSchemaHandler, ValidationError
from pydantic.json_schema import CoreRef, DefsRef, JsonRef, JsonSchemaMode, JsonSchemaValue
from pydantic_core import PydanticCustomError, core_schema

from .errors import FilterError, Issue
from .filter import Filter, parse, parse_text
from .language.contact import CONTACT
from .language.fields import Schema
from .language.limits import DEFAULT_LIMITS, Limits
from .where.json_schema import json_schema

if TYPE_CHECKING:
    from pydantic.json_schema import GenerateJsonSchema

_PATH_PART = re.compile(r"\[(\d+)\]|([^.\[\]]+)")
_DEFS = "#/$defs/"


def FilterField(  # noqa: N802 - a type, spelled like one
    schema: Schema = CONTACT,
    *,
    text: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    name: str | None = None,
) -> Any:
    """The annotated type of a model field holding a filter over `schema`.

    Args:
        schema: The fields a filter may use.
        text: Whether a string of the text syntax is accepted beside the where clause.
        limits: Bounds on depth, size and list length (`Limits`).
        name: The prefix of the field's JSON Schema components (`name` -> `name_where`);
            by default derived from the schema (`component_name`).

    Returns:
        `Annotated[Filter, ...]`, for a field annotation: `where: af.FilterField(schema)`.
    """
    return Annotated[Filter, FilterValidation(schema, text=text, limits=limits, name=name)]


def component_name(schema: Schema) -> str:
    """The prefix of `schema`'s components in a JSON Schema or OpenAPI document by default:
    `contact` for the library's contact schema, else the schema's name and the first eight
    hex digits of the SHA-256 of its JSON Schema. Why a digest: a schema's name does not
    tell schemas apart (`CONTACT.with_fields(...)` keeps the name `contact`), while the
    digest is the same on every run and whatever else the document holds."""
    document = json_schema(schema)
    if schema.name == CONTACT.name and document == json_schema(CONTACT):
        return CONTACT.name
    text = json.dumps(document, sort_keys=True, separators=(",", ":"))
    return f"{schema.name}_{hashlib.sha256(text.encode()).hexdigest()[:8]}"


@dataclass(frozen=True)
class FilterValidation:
    """The pydantic hooks of `FilterField`: validation by the library's reader, and its JSON
    Schema."""

    schema: Schema
    text: bool = True
    limits: Limits = DEFAULT_LIMITS
    name: str | None = None
    """The prefix of the JSON Schema components; `component_name(schema)` when None."""

    def __get_pydantic_core_schema__(
        self, source: Any, handler: GetCoreSchemaHandler
    ) -> core_schema.CoreSchema:
        return core_schema.no_info_plain_validator_function(
            self.validate,
            serialization=core_schema.plain_serializer_function_ser_schema(
                _where_clause, when_used="always"
            ),
        )

    def validate(self, value: Any) -> Filter:
        """The filter `value` stands for, or a `ValidationError` with an error per issue."""
        if isinstance(value, Filter):
            if value.schema != self.schema:
                raise PydanticCustomError(
                    "filter_schema",
                    "a filter over the {found} schema, expected one over {expected}",
                    {"found": value.schema.name, "expected": self.schema.name},
                )
            return value
        if isinstance(value, str) and not self.text:
            raise PydanticCustomError("filter_type", "a where clause (a JSON object) is expected")
        if not isinstance(value, str | dict):
            expected = "a where clause (a JSON object) or filter text (a string)"
            raise PydanticCustomError("filter_type", f"{expected} is expected")
        try:
            if isinstance(value, str):
                return parse_text(value, self.schema, limits=self.limits)
            return parse(value, self.schema, limits=self.limits)
        except FilterError as error:
            raise ValidationError.from_exception_data(
                "Filter", [_line_error(issue, value) for issue in error.errors]
            ) from None

    def __get_pydantic_json_schema__(
        self, schema: core_schema.CoreSchema, handler: GetJsonSchemaHandler
    ) -> JsonSchemaValue:
        generator: GenerateJsonSchema = getattr(handler, "generate_json_schema")  # noqa: B009
        where = _register(generator, self.schema, self.name or component_name(self.schema))
        if not self.text or handler.mode == "serialization":  # serialized: a where clause
            return where
        syntax = {"type": "string", "description": "a filter in the text syntax"}
        return {"oneOf": [where, syntax]}


def _where_clause(value: Filter) -> dict[str, Any]:
    return value.to_dict()


def _loc(path: str) -> tuple[str | int, ...]:
    """`OR[1].points.gte` -> `("OR", 1, "points", "gte")`; the top level is `()`."""
    return tuple(int(i) if i else name for i, name in _PATH_PART.findall(path))


def _line_error(issue: Issue, value: Any) -> Any:
    found = {"suggestion": issue.suggestion, "line": issue.line, "column": issue.column}
    context = {key: value for key, value in found.items() if value is not None}
    message = issue.message + (f" ({issue.suggestion})" if issue.suggestion else "")
    kind = PydanticCustomError("filter", message.replace("{", "{{").replace("}", "}}"), context)
    return {"type": kind, "loc": _loc(issue.path), "input": value}


def _register(generator: GenerateJsonSchema, schema: Schema, prefix: str) -> JsonSchemaValue:
    """Add the where-clause definitions of `schema` to the generator's under `prefix`, once
    per generator, each `$ref` pointing at its new name; the reference to the root
    definition. A definition already there under the same name must be this one: two
    schemas given one name would otherwise document one of them wrongly."""
    document = json_schema(schema)
    refs: dict[str, JsonSchemaValue] = {}
    defs = {}
    for name in document["$defs"]:
        # No period: pydantic would keep only what follows the last one.
        core_ref = CoreRef(f"{prefix}_{name}".replace(".", "_"))
        defs[name], refs[name] = _defs_ref(generator, core_ref)
    for name, definition in document["$defs"].items():
        rewritten = _rewritten(definition, refs)
        found = generator.definitions.get(defs[name])
        if found is not None and found != rewritten:
            raise FilterError(
                [
                    Issue(
                        path="",
                        message=f'the JSON Schema component name "{prefix}" is given to two '
                        f'different schemas (this one is "{schema.name}" with fields '
                        f"{', '.join(schema.names)})",
                        suggestion="give each schema its own name= in FilterField or "
                        "FilterValidation, or leave name= out to use a name derived from "
                        "the schema",
                    )
                ]
            )
        generator.definitions[defs[name]] = rewritten
    return refs[document["$ref"].removeprefix(_DEFS)]


def _defs_ref(generator: GenerateJsonSchema, core_ref: CoreRef) -> tuple[DefsRef, JsonSchemaValue]:
    """`GenerateJsonSchema.get_cache_defs_ref_schema` in validation mode whatever the
    generator's: the where clause reads and writes alike, and one set of definitions keeps
    pydantic from naming an input and an output copy of each (it cannot merge the two copies
    of recursive definitions, `where` <-> `whereOrList`)."""
    key: tuple[CoreRef, JsonSchemaMode] = (core_ref, "validation")
    found = generator.core_to_defs_refs.get(key)
    if found is not None:
        return found, {"$ref": generator.core_to_json_refs[key]}
    defs_ref = generator.get_defs_ref(key)
    json_ref = JsonRef(generator.ref_template.format(model=defs_ref))
    generator.core_to_defs_refs[key] = defs_ref
    generator.defs_to_core_refs[defs_ref] = key
    generator.core_to_json_refs[key] = json_ref
    generator.json_to_defs_refs[json_ref] = defs_ref
    return defs_ref, {"$ref": json_ref}


def _rewritten(value: Any, refs: dict[str, JsonSchemaValue]) -> Any:
    if isinstance(value, dict):
        ref = value.get("$ref")
        if isinstance(ref, str) and ref.startswith(_DEFS):
            return {**value, "$ref": refs[ref.removeprefix(_DEFS)]["$ref"]}
        return {key: _rewritten(item, refs) for key, item in value.items()}
    if isinstance(value, list):
        return [_rewritten(item, refs) for item in value]
    return value


def FilterQuery(  # noqa: N802 - used in an annotation, like FastAPI's Query
    schema: Schema = CONTACT,
    *,
    name: str = "where",
    required: bool = False,
    text: bool = True,
    limits: Limits = DEFAULT_LIMITS,
    description: str | None = None,
) -> Any:
    """A filter over `schema` as a FastAPI query parameter:
    `where: Annotated[af.Filter | None, af.FilterQuery(af.CONTACT)] = None`.

    The parameter's value is the text syntax (`points >= 100`) or a where clause as JSON text
    (a value starting with `{`). A mistake is a 422 whose `loc` is `("query", name, ...)`
    continued by the filter's path, with the line and column of the text or JSON in `ctx`.

    Why a dependency (`fastapi.Depends`): FastAPI takes only scalars as query parameters and
    stops at import on any other annotation, so the parameter is read as a string by a
    function of this one's making and then by the library's reader.

    Args:
        schema: The fields a filter may use.
        name: The query parameter's name; the annotated parameter's own name is not seen.
        required: Whether a request without the parameter is a 422 (else the filter is None).
        text: Whether the text syntax is accepted beside a JSON where clause.
        limits: Bounds on depth, size and list length (`Limits`).
        description: The parameter's description in the OpenAPI document.

    Returns:
        A `fastapi.Depends` for the annotation's metadata.
    """
    from fastapi import Depends, Query
    from fastapi.exceptions import RequestValidationError

    reader = FilterValidation(schema, text=text, limits=limits)
    default = (
        "A filter in the text syntax (`points >= 100`) or a where clause as JSON text"
        if text
        else "A where clause as JSON text"
    )
    query = Query(
        alias=name,
        description=description or f'{default}, over the fields of the "{schema.name}" schema.',
    )

    def read(value: str | None) -> Filter | None:
        if value is None:
            return None
        try:
            return _read_query(reader, value)
        except _QueryProblems as problems:
            raise RequestValidationError(
                [{**error, "loc": ("query", name, *error["loc"])} for error in problems.errors]
            ) from None

    annotation: Any = Annotated[str, query] if required else Annotated[str | None, query]
    parameter = inspect.Parameter(
        "value",
        inspect.Parameter.KEYWORD_ONLY,
        annotation=annotation,
        default=inspect.Parameter.empty if required else None,
    )
    read.__signature__ = inspect.Signature(  # type: ignore[attr-defined]
        [parameter], return_annotation=Filter | None
    )
    return Depends(read)


class _QueryProblems(Exception):
    """The errors of one query parameter's value, in FastAPI's shape without the leading
    `("query", name)` of their `loc`."""

    def __init__(self, errors: list[dict[str, Any]]) -> None:
        super().__init__(errors)
        self.errors = errors


def _read_query(reader: FilterValidation, value: str) -> Filter:
    where: Any = value
    if value.lstrip().startswith("{"):
        try:
            where = json.loads(value)
        except json.JSONDecodeError as error:
            message = (
                f"the where clause is not JSON text: {error.msg} at line {error.lineno}, "
                f"column {error.colno} (fix the JSON, or write the filter in the text syntax)"
            )
            problem = {
                "type": "filter_json",
                "loc": (),
                "msg": message,
                "input": value,
                "ctx": {"line": error.lineno, "column": error.colno},
            }
            raise _QueryProblems([problem]) from None
    elif not reader.text:
        message = "a where clause as JSON text (starting with {) is expected"
        raise _QueryProblems([{"type": "filter_type", "loc": (), "msg": message, "input": value}])
    try:
        if isinstance(where, str):
            return parse_text(where, reader.schema, limits=reader.limits)
        if not isinstance(where, dict):
            raise _QueryProblems(
                [
                    {
                        "type": "filter_type",
                        "loc": (),
                        "msg": "a where clause (a JSON object) is expected",
                        "input": value,
                    }
                ]
            )
        return parse(where, reader.schema, limits=reader.limits)
    except FilterError as error:
        raise _QueryProblems([_query_error(issue, value) for issue in error.errors]) from None


def _query_error(issue: Issue, value: str) -> dict[str, Any]:
    found = {"suggestion": issue.suggestion, "line": issue.line, "column": issue.column}
    context = {key: item for key, item in found.items() if item is not None}
    message = issue.message + (f" ({issue.suggestion})" if issue.suggestion else "")
    error: dict[str, Any] = {"type": "filter", "loc": _loc(issue.path), "msg": message}
    error["input"] = value
    if context:
        error["ctx"] = context
    return error
