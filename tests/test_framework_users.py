"""The library as a Django or FastAPI project meets it: schemas whose fields have any name, a
to-one relation tested for null, a filter inside an answer, records built from ORM rows,
the 422's location of a problem inside a relation, and the calendar's named days.
(`tests/test_django.py` has the Django back-end's own.)"""

from __future__ import annotations

import asyncio
import dataclasses
from datetime import UTC, datetime
from typing import Any

import httpx
import pytest

import audiencefilter as af
from audiencefilter import Relation
from audiencefilter.backends.naming import snake_case

NOW = datetime(2026, 3, 10, 12, tzinfo=UTC)

# Every name a keyword of the schema builders might have taken for itself.
PARAMETER_NAMES = ["name", "cls", "self", "types", "fields", "relations", "time_zone", "schema"]


@pytest.mark.parametrize("field", PARAMETER_NAMES)
def test_a_field_may_have_any_name(field: str) -> None:
    schema = af.Schema.of(**{field: "string"}, points="number")
    assert schema.names == (field, "points") and schema.name == "custom"
    assert af.Schema.of("shop", **{field: "string"}).name == "shop"
    wider = af.Schema.of(points="number").with_fields(**{field: "string"})
    assert wider.names == ("points", field)
    flt = af.parse({field: "Ann"}, schema)
    assert flt.matches({field: "Ann"}) and not flt.matches({field: "Bob"})


COMPANY = af.Schema.of(country="string", size="number")
SHOP = af.Schema.of(email="string", name="string").with_relations(
    Relation("company", COMPANY, many=False), Relation("orders", af.Schema.of(total="number"))
)
COMPANY_RECORDS: list[dict[str, Any]] = [
    {},
    {"company": None},
    {"company": {}},
    {"company": {"country": "FR"}},
    {"company": {"country": None, "size": 3}},
]
# The text of a to-one relation's null tests, and the where clause each reads as.
NULL_TESTS = [
    ("company is null", {"company": {"is": None}}),
    ("company = null", {"company": {"is": None}}),
    ("company is not null", {"company": {"isNot": None}}),
    ("company != null", {"company": {"isNot": None}}),
    ("not (company is null)", {"NOT": {"company": {"is": None}}}),
    ('company is null or company is (country = "FR")', None),
    ('email = "a" and company is not null', None),
]


@pytest.mark.parametrize(("text", "where"), NULL_TESTS)
def test_a_to_one_relation_takes_the_null_tests(text: str, where: dict[str, Any] | None) -> None:
    flt = af.parse_text(text, SHOP)
    if where is not None:
        assert flt == af.parse(where, SHOP)
    assert af.parse_text(flt.to_text(), SHOP) == flt
    assert af.parse(flt.to_json(), SHOP) == flt
    answers = [flt.matches(record) for record in COMPANY_RECORDS]
    assert answers == [af.parse(flt.to_json(), SHOP).matches(r) for r in COMPANY_RECORDS]
    if text == "company is null":
        assert answers == [True, True, False, False, False]
        assert flt.to_text() == "company is null"


@pytest.mark.parametrize(
    ("text", "words", "fix"),
    [
        ("orders is null", '"orders" is a to-many relation', "write orders none (true)"),
        ("orders is not null", '"orders" is a to-many relation', "orders some (true)"),
        ('company.country = "FR"', "to-one relation, not a field", 'company is (country = "FR")'),
        ("orders.total > 5", "to-many relation, not a field", "write orders some (total > 5)"),
        ('company = "Acme"', "to-one relation, not a field", "write company is (...)"),
    ],
)
def test_a_relation_written_as_a_field_is_refused_with_the_form_to_write(
    text: str, words: str, fix: str
) -> None:
    with pytest.raises(af.FilterError) as raised:
        af.parse_text(text, SHOP)
    (problem,) = raised.value.to_dicts()
    assert words in problem["message"] and fix in problem["suggestion"], problem


@pytest.mark.parametrize(
    "read",
    [
        lambda: af.parse_text("zzz = 1", SHOP),
        lambda: af.parse({"zzz": 1}, SHOP),
        lambda: af.parse_text('orders some (total > 1) and zzz = "a"', SHOP),
    ],
)
def test_an_unknown_name_lists_the_relations_beside_the_fields(read: Any) -> None:
    with pytest.raises(af.FilterError) as raised:
        read()
    suggestion = raised.value.to_dicts()[0]["suggestion"]
    assert "fields are email, name" in suggestion
    assert "relations are company (to-one), orders (to-many)" in suggestion


def test_a_misspelt_relation_is_suggested_in_the_text_syntax() -> None:
    with pytest.raises(af.FilterError) as raised:
        af.parse_text("compani is null", SHOP)
    assert raised.value.to_dicts()[0]["suggestion"] == 'did you mean "company"?'


# A filter inside an answer.

FILTERS = [
    ('{"points": {"gte": 1}}', af.CONTACT),
    ('country in ["FR", "DE"] or createdAt within last 7 days', af.CONTACT),
    ("{}", af.CONTACT),
    ('orders some (total > 1) and company is (country = "FR")', SHOP),
]


@pytest.mark.parametrize(("text", "schema"), FILTERS, ids=[text for text, _ in FILTERS])
def test_a_filter_in_a_fastapi_answer_is_its_where_clause(text: str, schema: af.Schema) -> None:
    fastapi = pytest.importorskip("fastapi")
    flt = af.parse(text, schema) if text.startswith("{") else af.parse_text(text, schema)
    from fastapi.encoders import jsonable_encoder

    where = flt.to_dict()
    assert jsonable_encoder({"f": flt, "many": [flt]}) == {"f": where, "many": [where]}
    assert dict(flt) == where and not dataclasses.is_dataclass(flt)
    app = fastapi.FastAPI()

    @app.get("/plain")
    def plain() -> Any:
        return {"filter": flt, "name": "x"}

    @app.get("/typed")
    def typed() -> dict[str, Any]:
        return {"filter": flt, "list": [flt]}

    assert _get(app, "/plain") == {"filter": where, "name": "x"}
    assert _get(app, "/typed") == {"filter": where, "list": [where]}


def _get(app: Any, path: str) -> Any:
    async def send() -> Any:
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://test") as http:
            response = await http.get(path)
            assert response.status_code == 200, response.text
            return response.json()

    return asyncio.run(send())


def test_a_filter_stays_an_immutable_value() -> None:
    flt = af.parse({"points": {"gte": 1}})
    same = af.parse('{"points": {"gte": 1}}')
    assert flt == same and hash(flt) == hash(same) and flt != af.parse({"points": 1})
    assert repr(flt).startswith("Filter(root=") and str(flt) == flt.to_json()
    with pytest.raises(dataclasses.FrozenInstanceError):
        flt.root = same.root  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        del flt.schema  # type: ignore[misc]
    match flt:
        case af.Filter(root, schema):
            assert root == same.root and schema is af.CONTACT


# Records built from ORM rows.

CUSTOM = af.CONTACT.with_fields(plan=("string", ("data", "plan")))
CAMEL_RECORDS: list[dict[str, Any]] = [
    {
        "firstName": "Ann",
        "isVerified": True,
        "points": 40,
        "createdAt": datetime(2026, 3, 8, tzinfo=UTC),
        "data": {"plan": "pro"},
    },
    {"firstName": None, "isVerified": False, "points": 5, "createdAt": None, "data": None},
    {"firstName": "Bob", "points": None, "createdAt": datetime(2025, 1, 1, tzinfo=UTC)},
]
WHERES: list[dict[str, Any]] = [
    {"firstName": "Ann"},
    {"isVerified": True, "points": {"gte": 10}},
    {"createdAt": {"gte": {"ago": "P7D"}}},
    {"createdAt": {"within": {"this": "month"}}},
    {"firstName": None},
    {"NOT": {"firstName": "Ann"}},
    {"plan": "pro"},
]


def _snake(record: dict[str, Any]) -> dict[str, Any]:
    return {snake_case(key): value for key, value in record.items()}


@pytest.mark.parametrize("where", WHERES, ids=str)
def test_a_record_keyed_by_columns_answers_with_naming(where: dict[str, Any]) -> None:
    flt = af.parse(where, CUSTOM)
    for record in CAMEL_RECORDS:
        expected = flt.matches(record, now=NOW)
        assert flt.matches(_snake(record), now=NOW, naming="snake_case") == expected
        assert flt.matches(record, now=NOW, naming="snake_case") == expected
        renamed = {f"col_{key}": value for key, value in record.items()}
        assert flt.matches(renamed, now=NOW, naming=lambda name: f"col_{name}") == expected


@pytest.mark.parametrize("where", WHERES, ids=str)
def test_a_record_keyed_by_columns_without_naming_is_refused(where: dict[str, Any]) -> None:
    """Refused when it has none of the keys the filter reads but has some snake_cased; a
    record with one of them under its own name is answered (`points` is both)."""
    flt = af.parse(where, CUSTOM)
    keys = {"data" if name == "plan" else name for name in flt.fields}
    for record in map(_snake, CAMEL_RECORDS):
        misnamed = not keys & record.keys() and any(snake_case(k) in record for k in keys)
        if misnamed:
            with pytest.raises(af.RecordError, match='pass naming="snake_case"'):
                flt.matches(record, now=NOW)
        else:
            assert flt.matches(record, now=NOW) == flt.matches(record, now=NOW, naming=None)
    flt.matches({}, now=NOW)  # a sparse record is answered: a missing key is null


def test_a_sparse_record_is_answered_and_a_mixed_one_too() -> None:
    flt = af.parse({"firstName": None})
    assert flt.matches({}) is True
    assert flt.matches({"firstName": "Ann", "is_verified": True}) is False
    with pytest.raises(af.RecordError, match=r"firstName as first_name"):
        flt.matches({"first_name": "Ann"})


# The 422 of a problem inside a relation.


@pytest.mark.parametrize(
    ("text", "loc"),
    [
        ("orders some (totl > 5)", ("where", "orders", "some", "totl")),
        ('orders every (total > "a")', ("where", "orders", "every", "total")),
        ("company is (country > 5)", ("where", "company", "is", "country")),
        ("company is not (sise > 1)", ("where", "company", "isNot", "sise")),
        ("count(orders where totl > 1) > 2", ("where", "orders", "where", "totl")),
        ('email = 1 and orders none (total = "x")', ("where", "orders", "none", "total")),
    ],
)
def test_the_location_of_a_problem_inside_a_relation_keeps_its_path(
    text: str, loc: tuple[str, ...]
) -> None:
    pydantic = pytest.importorskip("pydantic")

    class Query(pydantic.BaseModel):
        where: af.FilterField(SHOP)  # type: ignore[valid-type]

    with pytest.raises(pydantic.ValidationError) as raised:
        Query(where=text)
    assert loc in [error["loc"] for error in raised.value.errors()]


# Named days after `within`.

DAYS = [("yesterday", "last day"), ("today", "today"), ("tomorrow", "next day")]


@pytest.mark.parametrize(("day", "period"), DAYS)
@pytest.mark.parametrize("how", ["within", "anniversary within"])
@pytest.mark.parametrize("zone", ["", ' in "Europe/Paris"'])
@pytest.mark.parametrize("case", [str.lower, str.upper])
def test_a_named_day_is_a_period(day: str, period: str, how: str, zone: str, case: Any) -> None:
    flt = af.parse_text(f"createdAt {how} {case(day)}{zone}")
    assert flt == af.parse_text(f"createdAt {how} {period}{zone}")
    assert af.parse_text(flt.to_text()) == flt


def test_within_yesterday_holds_the_day_before_today() -> None:
    flt = af.parse_text("createdAt within yesterday")
    moments = ["2026-03-08T23:59:59Z", "2026-03-09T00:00:00Z", "2026-03-09T23:59:59Z"]
    moments += ["2026-03-10T00:00:00Z"]
    assert [flt.matches({"createdAt": m}, now=NOW) for m in moments] == [
        False,
        True,
        True,
        False,
    ]
