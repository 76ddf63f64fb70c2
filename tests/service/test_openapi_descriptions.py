"""Every operation, parameter, request body, response and error of the OpenAPI document has a
description and an example, and every example is valid against the schema it illustrates."""

from __future__ import annotations

from typing import Any

import jsonschema
import pytest

from .conftest import ApiClient


@pytest.fixture(scope="module")
def document(client: ApiClient) -> dict[str, Any]:
    return client.get("/openapi.json").json()  # type: ignore[no-any-return]


def _operations(document: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    return [
        (f"{method.upper()} {path}", operation)
        for path, operations in document["paths"].items()
        for method, operation in operations.items()
    ]


def _check(document: dict[str, Any], where: str, media: dict[str, Any]) -> list[str]:
    if "example" not in media:
        return [f"{where}: no example"]
    schema = {**media.get("schema", {}), "components": document["components"]}
    try:
        jsonschema.Draft202012Validator(schema).validate(media["example"])
    except jsonschema.ValidationError as exc:
        return [f"{where}: example invalid: {exc.message} at {list(exc.absolute_path)}"]
    return []


def test_the_document_has_every_operation(document: dict[str, Any]) -> None:
    assert len(_operations(document)) >= 27


def test_every_part_is_described_with_a_valid_example(document: dict[str, Any]) -> None:
    missing: list[str] = []
    for name, operation in _operations(document):
        if not operation.get("description", "").strip():
            missing.append(f"{name}: no description")
        for parameter in operation.get("parameters", []):
            where = f"{name} {parameter['in']} {parameter['name']}"
            if not parameter.get("description", "").strip():
                missing.append(f"{where}: no description")
            if "content" in parameter:
                for media_type, media in parameter["content"].items():
                    missing += _check(document, f"{where} {media_type}", media)
            else:
                media = {"schema": parameter.get("schema", {})}
                if "example" in parameter:
                    media["example"] = parameter["example"]
                missing += _check(document, where, media)
        body = operation.get("requestBody")
        if body is not None:
            if not body.get("description", "").strip():
                missing.append(f"{name} body: no description")
            for media_type, media in body["content"].items():
                missing += _check(document, f"{name} body {media_type}", media)
        for status, response in operation["responses"].items():
            where = f"{name} {status}"
            if not response.get("description", "").strip():
                missing.append(f"{where}: no description")
            for header, spec in response.get("headers", {}).items():
                if not spec.get("description", "").strip():
                    missing.append(f"{where} header {header}: no description")
            for media_type, media in response.get("content", {}).items():
                missing += _check(document, f"{where} {media_type}", media)
    assert missing == []


def test_descriptions_are_not_the_defaults(document: dict[str, Any]) -> None:
    for name, operation in _operations(document):
        for status, response in operation["responses"].items():
            assert response["description"] != "Successful Response", (name, status)


def test_an_invalid_example_would_be_caught(document: dict[str, Any]) -> None:
    media = {"schema": {"$ref": "#/components/schemas/ContactCreate"}, "example": {"email": 3}}
    assert _check(document, "x", media) != []
