"""`af.FilterField`: a FastAPI endpoint takes a where clause or text, answers 422 with the
filter's paths, and documents the library's JSON Schema in its OpenAPI document."""

from __future__ import annotations

import asyncio
from typing import Annotated, Any

import httpx
import pytest
from fastapi import FastAPI
from jsonschema import Draft202012Validator
from pydantic import BaseModel, ValidationError

import audiencefilter as af
from audiencefilter.pydantic_field import component_name

PRODUCT = af.Schema.from_mapping({"sku": "string", "price": "number"}, name="product")


class AudienceIn(BaseModel):
    name: str
    where: Annotated[af.Filter, af.FilterValidation(af.CONTACT)]


class Offer(BaseModel):
    audience: af.FilterField(af.CONTACT)  # type: ignore[valid-type]
    products: af.FilterField(PRODUCT, text=False)  # type: ignore[valid-type]


app = FastAPI()


@app.post("/audiences")
def create_audience(audience: AudienceIn) -> dict[str, Any]:
    where = audience.where
    return {"name": audience.name, "text": where.to_text(), "where": where.to_dict()}


@app.post("/offers")
def create_offer(offer: Offer) -> Offer:
    return offer


class Client:
    """Requests to `app` in process, each on an event loop of its own (httpx's ASGI
    transport; starlette's TestClient wants another package)."""

    def post(self, path: str, json: Any) -> httpx.Response:
        async def send() -> httpx.Response:
            transport = httpx.ASGITransport(app=app)
            async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
                return await http.post(path, json=json)

        return asyncio.run(send())


client = Client()


def test_a_where_clause_is_accepted_as_a_filter() -> None:
    where = {"points": {"gte": 100}, "email": {"endsWith": "@acme.com"}}
    response = client.post("/audiences", json={"name": "vip", "where": where})
    assert response.status_code == 200
    assert response.json()["text"] == af.parse(where).to_text()


def test_text_is_accepted_and_answers_in_the_canonical_where_clause() -> None:
    response = client.post("/audiences", json={"name": "vip", "where": "points >= 100"})
    assert response.status_code == 200
    assert response.json()["where"] == {"points": {"gte": 100}}


def test_each_issue_is_an_error_at_the_filter_path() -> None:
    where = {"OR": [{"points": {"gte": "ten"}}, {"emial": {"contains": "x"}}]}
    response = client.post("/audiences", json={"name": "vip", "where": where})
    assert response.status_code == 422
    errors = response.json()["detail"]
    assert [e["loc"] for e in errors] == [
        ["body", "where", "OR", 0, "points", "gte"],
        ["body", "where", "OR", 1, "emial"],
    ]
    assert 'found the string "ten"' in errors[0]["msg"]
    assert errors[1]["ctx"]["suggestion"] == 'did you mean "email"?'
    assert {e["type"] for e in errors} == {"filter"}


def test_a_text_error_carries_its_line_and_column() -> None:
    response = client.post("/audiences", json={"name": "vip", "where": 'points >= "ten"'})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "where", "points"]
    assert error["ctx"] == {"line": 1, "column": 11}


def test_a_field_without_text_refuses_a_string() -> None:
    body = {"audience": "points > 1", "products": "price > 1"}
    response = client.post("/offers", json=body)
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["body", "products"] and error["type"] == "filter_type"


def test_fields_of_two_schemas_serialize_as_where_clauses() -> None:
    body = {"audience": "points > 1", "products": {"price": {"lt": 10}}}
    response = client.post("/offers", json=body)
    assert response.json() == {"audience": {"points": {"gt": 1}}, "products": {"price": {"lt": 10}}}


def test_a_filter_of_another_schema_is_refused() -> None:
    with pytest.raises(ValidationError, match="filter over the product schema"):
        AudienceIn(name="x", where=af.parse({"price": {"lt": 1}}, PRODUCT))
    flt = af.parse({"points": {"gt": 1}})
    assert AudienceIn(name="x", where=flt).where is flt


def _openapi_validator(component: str) -> Draft202012Validator:
    """A validator of one component of the app's OpenAPI document, its references resolved
    inside the document."""
    document = app.openapi()
    text = str(document["components"]["schemas"])
    assert "#/$defs/" not in text
    root = {"$ref": f"#/components/schemas/{component}", "components": document["components"]}
    return Draft202012Validator(root)


def test_the_openapi_document_holds_the_filter_json_schema() -> None:
    schemas = app.openapi()["components"]["schemas"]
    where = schemas["AudienceIn"]["properties"]["where"]
    assert where["oneOf"][0] == {"$ref": "#/components/schemas/contact_where"}
    assert where["oneOf"][1]["type"] == "string"
    product = f"{component_name(PRODUCT)}_where"
    assert product.startswith("product_") and product in schemas and "contact_where" in schemas
    # Read and written alike: the offer's input and output share the definitions.
    for offer in ("Offer-Input", "Offer-Output"):
        products = schemas[offer]["properties"]["products"]
        assert products == {"$ref": f"#/components/schemas/{product}", "title": "Products"}
    written = schemas["Offer-Output"]["properties"]["audience"]
    assert written == {"$ref": "#/components/schemas/contact_where", "title": "Audience"}


@pytest.mark.parametrize(
    ("where", "valid"),
    [
        ({"points": {"gte": 100}}, True),
        ({"actions": {"some": {"name": "share"}}}, True),
        ("points >= 100", True),
        ({"points": {"gte": "ten"}}, False),
        ({"emial": "x"}, False),
        (42, False),
    ],
)
def test_the_documented_schema_accepts_what_the_endpoint_accepts(where: Any, valid: bool) -> None:
    validator = _openapi_validator("AudienceIn")
    assert validator.is_valid({"name": "x", "where": where}) is valid
    status = client.post("/audiences", json={"name": "x", "where": where}).status_code
    assert (status == 200) is valid
