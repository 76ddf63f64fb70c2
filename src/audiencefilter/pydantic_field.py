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
  OpenAPI document) under names prefixed with the schema's name (`contact_where`), and the
  field is `oneOf` that where clause or a string of the text syntax.
- pydantic is imported here only: the package imports this module on first use of
  `FilterField`.
"""

from __future__ import annotations

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
    schema: Schema = CONTACT, *, text: bool = True, limits: Limits = DEFAULT_LIMITS
) -> Any:
    """The annotated type of a model field holding a filter over `schema`.

    Args:
        schema: The fields a filter may use.
        text: Whether a string of the text syntax is accepted beside the where clause.
        limits: Bounds on depth, size and list length (`Limits`).

    Returns:
        `Annotated[Filter, ...]`, for a field annotation: `where: af.FilterField(schema)`.
    """
    return Annotated[Filter, FilterValidation(schema, text=text, limits=limits)]


@dataclass(frozen=True)
class FilterValidation:
    """The pydantic hooks of `FilterField`: validation by the library's reader, and its JSON
    Schema."""

    schema: Schema
    text: bool = True
    limits: Limits = DEFAULT_LIMITS

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
        where = _register(generator, self.schema)
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


def _register(generator: GenerateJsonSchema, schema: Schema) -> JsonSchemaValue:
    """Add the where-clause definitions of `schema` to the generator's, once per generator,
    each `$ref` pointing at its new name; the reference to the root definition."""
    document = json_schema(schema)
    refs: dict[str, JsonSchemaValue] = {}
    defs = {}
    for name in document["$defs"]:
        # No period: pydantic would keep only what follows the last one.
        core_ref = CoreRef(f"{schema.name}_{name}".replace(".", "_"))
        defs[name], refs[name] = _defs_ref(generator, core_ref)
    for name, definition in document["$defs"].items():
        generator.definitions[defs[name]] = _rewritten(definition, refs)
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
