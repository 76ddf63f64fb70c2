"""`af.FilterField` over schemas sharing a name, and `af.FilterQuery`, a filter as a query
parameter: each distinct schema documents its own OpenAPI component, and `GET ...?where=`
takes the text syntax or a JSON where clause, answering 422 at the position of a mistake."""

from __future__ import annotations

import asyncio
import json
from typing import Annotated, Any

import httpx
import pytest
from fastapi import FastAPI
from jsonschema import Draft202012Validator
from pydantic import BaseModel

import audiencefilter as af

BIRTHDAYS = af.CONTACT.with_fields(birthday="date")


def _app(*schemas: af.Schema) -> FastAPI:
    """One POST endpoint per schema, in the order given, each taking a filter over it."""
    app = FastAPI()
    for index, schema in enumerate(schemas):
        model = type(
            f"Audience{index}",
            (BaseModel,),
            {"__annotations__": {"where": Annotated[af.Filter, af.FilterValidation(schema)]}},
        )

        def endpoint(body: Any) -> dict[str, Any]:
            return {"where": body.where.to_dict()}

        endpoint.__annotations__ = {"body": model, "return": dict[str, Any]}
        app.post(f"/audiences/{index}")(endpoint)
    return app


def _where_ref(app: FastAPI, index: int) -> str:
    schemas = app.openapi()["components"]["schemas"]
    ref: str = schemas[f"Audience{index}"]["properties"]["where"]["oneOf"][0]["$ref"]
    return ref


def _valid(app: FastAPI, ref: str, where: Any) -> bool:
    document = app.openapi()
    root = {"$ref": ref, "components": document["components"]}
    return Draft202012Validator(root).is_valid(where)


def test_two_schemas_of_one_name_document_two_components() -> None:
    app = _app(af.CONTACT, BIRTHDAYS)
    contact, birthdays = _where_ref(app, 0), _where_ref(app, 1)
    assert contact != birthdays
    birthday = {"birthday": {"lt": "2000-01-01"}}
    assert _valid(app, birthdays, birthday) and not _valid(app, contact, birthday)
    assert _valid(app, contact, {"points": {"gt": 1}})


def test_component_names_do_not_depend_on_the_order_of_registration() -> None:
    forward, backward = _app(af.CONTACT, BIRTHDAYS), _app(BIRTHDAYS, af.CONTACT)
    assert _where_ref(forward, 0) == _where_ref(backward, 1)
    assert _where_ref(forward, 1) == _where_ref(backward, 0)
    assert _where_ref(_app(af.CONTACT), 0) == "#/components/schemas/contact_where"


def test_a_schema_used_twice_documents_one_component() -> None:
    app = _app(BIRTHDAYS, af.CONTACT.with_fields(birthday="date"))
    assert _where_ref(app, 0) == _where_ref(app, 1)


class Named(BaseModel):
    where: Annotated[af.Filter, af.FilterValidation(BIRTHDAYS, name="birthdays")]


def test_a_component_name_given_by_the_user() -> None:
    app = FastAPI()

    @app.post("/named")
    def named(body: Named) -> None:
        return None

    ref = app.openapi()["components"]["schemas"]["Named"]["properties"]["where"]["oneOf"][0]
    assert ref == {"$ref": "#/components/schemas/birthdays_where"}


def test_one_name_given_to_two_schemas_is_refused() -> None:
    class Clash(BaseModel):
        a: Annotated[af.Filter, af.FilterValidation(af.CONTACT, name="people")]
        b: Annotated[af.Filter, af.FilterValidation(BIRTHDAYS, name="people")]

    with pytest.raises(af.FilterError, match=r'"people".*two different schemas.*name='):
        Clash.model_json_schema()


# --- a filter as a query parameter --------------------------------------------------------

query_app = FastAPI()


@query_app.get("/members")
def members(
    where: Annotated[af.Filter | None, af.FilterQuery(af.CONTACT)] = None,
) -> dict[str, Any]:
    return {"where": None if where is None else where.to_dict()}


@query_app.get("/born")
def born(
    born: Annotated[af.Filter, af.FilterQuery(BIRTHDAYS, name="born", required=True)],
) -> dict[str, Any]:
    return {"where": born.to_dict()}


def _get(app: FastAPI, path: str, params: dict[str, str]) -> httpx.Response:
    async def send() -> httpx.Response:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            return await http.get(path, params=params)

    return asyncio.run(send())


def test_a_query_parameter_takes_the_text_syntax() -> None:
    response = _get(query_app, "/members", {"where": "points >= 100"})
    assert response.status_code == 200
    assert response.json() == {"where": {"points": {"gte": 100}}}


def test_a_query_parameter_takes_a_json_where_clause() -> None:
    where = {"OR": [{"points": {"gte": 100}}, {"email": {"endsWith": "@acme.com"}}]}
    response = _get(query_app, "/members", {"where": json.dumps(where)})
    assert response.status_code == 200
    assert response.json() == {"where": af.parse(where).to_dict()}


def test_a_missing_optional_query_parameter_is_none() -> None:
    assert _get(query_app, "/members", {}).json() == {"where": None}


def test_a_missing_required_query_parameter_is_a_422() -> None:
    response = _get(query_app, "/born", {})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "born"] and error["type"] == "missing"


def test_a_text_mistake_is_a_422_at_its_line_and_column() -> None:
    response = _get(query_app, "/members", {"where": 'points >= "ten"'})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "where", "points"]
    assert error["ctx"] == {"line": 1, "column": 11}
    assert 'found the string "ten"' in error["msg"]


def test_a_where_clause_mistake_is_a_422_at_its_path() -> None:
    where = {"OR": [{"points": {"gte": 1}}, {"emial": {"contains": "x"}}]}
    response = _get(query_app, "/members", {"where": json.dumps(where)})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "where", "OR", 1, "emial"]
    assert error["ctx"]["suggestion"] == 'did you mean "email"?'


def test_bad_json_is_a_422_at_its_position() -> None:
    response = _get(query_app, "/members", {"where": '{"points": {"gte": 1}'})
    assert response.status_code == 422
    (error,) = response.json()["detail"]
    assert error["loc"] == ["query", "where"] and error["type"] == "filter_json"
    assert error["ctx"]["line"] == 1 and error["ctx"]["column"] == 22
    assert "JSON" in error["msg"]


def test_a_query_parameter_uses_its_schema_and_name() -> None:
    response = _get(query_app, "/born", {"born": "birthday < 2000-01-01"})
    assert response.status_code == 200, response.text
    assert response.json() == {"where": {"birthday": {"lt": "2000-01-01"}}}


def test_the_query_parameter_is_documented() -> None:
    document = query_app.openapi()
    (parameter,) = document["paths"]["/members"]["get"]["parameters"]
    assert parameter["name"] == "where" and parameter["in"] == "query"
    assert parameter["required"] is False
    assert {"type": "string"} in parameter["schema"]["anyOf"]
    assert "text syntax" in parameter["description"]
    (born_parameter,) = document["paths"]["/born"]["get"]["parameters"]
    assert born_parameter["name"] == "born" and born_parameter["required"] is True
    assert born_parameter["schema"]["type"] == "string"
