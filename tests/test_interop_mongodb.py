"""MongoDB: queries read here agree with the reference evaluator (`mongoquery`) on every record,
filters written as queries agree with ours, and read back as they were."""

from __future__ import annotations

import re
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.formats.mongodb import _escape
from audiencefilter.language.fields import Op
from audiencefilter.language.nodes import And, Comparison, Const, Node, Not, Or, walk
from audiencefilter.testing.strategies import records, where_clauses
from tests.interop_reference import mongo_matches

STRINGS = ("email", "firstName", "country", "city")
NUMBERS = ("points", "referrals")
BOOLEANS = ("isVerified", "unsubscribed")
TEXT = st.sampled_from(("", "a", "A", "ab", "FR", "fr", "@", "b@a.c", "é", "É", "a.c", "x\n", "^$"))
NUMBER = st.one_of(st.integers(-3, 3), st.sampled_from((0.5, -0.0, 2**53 + 1, 2.0**53)))
FOLDING = st.sampled_from(("a", "A", "ab", "@", "é", "É", "b@a", ".c", "x\n", "+1", "ß", ""))
BOOLEAN = st.booleans()
CASELESS = st.sampled_from(("@", ".", "1", "", "@1.", "-", "^", "$", "\n"))
ACTION_FIELDS = {"id": TEXT, "name": TEXT, "increase": NUMBER}


def matches(query: dict[str, Any], record: dict[str, Any], schema: af.Schema = af.CONTACT) -> bool:
    return mongo_matches(query, record, schema)


@st.composite
def field_queries(draw: st.DrawFn, fields: dict[str, st.SearchStrategy[Any]]) -> dict[str, Any]:
    """`{field: <condition>}` in every form the reader maps."""
    name = draw(st.sampled_from(sorted(fields)))
    value = fields[name]
    text = value is TEXT
    forms = ["eq", "$eq", "$ne", "$in", "$nin", "null", "$ne null", "$not", "$exists"]
    if value is not BOOLEAN:
        forms += ["$gt", "$gte", "$lt", "$lte"]
    if text:
        forms += ["$regex", "$regex i"]
    form = draw(st.sampled_from(forms))
    return {name: _condition(draw, form, value)}


def _condition(draw: st.DrawFn, form: str, value: st.SearchStrategy[Any]) -> Any:
    if form == "eq":
        return draw(value)
    if form == "null":
        return None
    if form == "$ne null":
        return {"$ne": None}
    if form in ("$in", "$nin"):
        return {form: draw(st.lists(st.one_of(value, st.none()), max_size=3))}
    if form.startswith("$regex"):
        return _regex(draw, form.endswith("i"))
    if form == "$not":
        inner = ("$eq", "$in") if value is BOOLEAN else ("$eq", "$gt", "$in")
        return {"$not": _condition(draw, draw(st.sampled_from(inner)), value)}
    if form == "$exists":
        return {"$exists": True, "$eq": draw(value)}
    return {form: draw(value)}


def _regex(draw: st.DrawFn, folds: bool) -> dict[str, str]:
    text = _escape(draw(FOLDING if folds else CASELESS))
    shape = draw(st.sampled_from(("{}", "^{}", "{}$", "{}(?!\n)$")))
    query = {"$regex": shape.format(text)}
    return {**query, "$options": "i"} if folds else query


def contact_fields() -> dict[str, st.SearchStrategy[Any]]:
    fields = dict.fromkeys(STRINGS, TEXT) | dict.fromkeys(NUMBERS, NUMBER)
    return fields | dict.fromkeys(BOOLEANS, BOOLEAN)


def queries() -> st.SearchStrategy[dict[str, Any]]:
    elem = field_queries(ACTION_FIELDS).map(lambda q: {"actions": {"$elemMatch": q}})
    none = elem.map(lambda q: {"actions": {"$not": q["actions"]}})
    leaves = st.one_of(field_queries(contact_fields()), field_queries(contact_fields()), elem, none)
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.builds(lambda items: {"$and": items}, st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda items: {"$or": items}, st.lists(children, min_size=1, max_size=3)),
            st.builds(lambda items: {"$nor": items}, st.lists(children, min_size=1, max_size=2)),
            st.builds(lambda a, b: {**a, **b}, children, children),
        ),
        max_leaves=6,
    )


def contacts() -> st.SearchStrategy[dict[str, Any]]:
    """Contacts with missing and null fields and actions (missing, null, empty or rows with
    missing and null fields)."""
    optional = {name: st.one_of(st.none(), value) for name, value in contact_fields().items()}
    row = st.fixed_dictionaries(
        {}, optional={k: st.one_of(st.none(), v) for k, v in ACTION_FIELDS.items()}
    )
    optional["actions"] = st.one_of(st.none(), st.lists(row, max_size=3))
    return st.fixed_dictionaries({}, optional=optional)


@given(queries(), st.lists(contacts(), min_size=1, max_size=6))
@example({"country": {"$ne": "FR"}}, [{}, {"country": None}, {"country": "FR"}, {"country": "DE"}])
@example({"email": {"$regex": "a$"}}, [{"email": "a\n"}, {"email": "a"}, {"email": "a\n\n"}])
@example({"company": {"$in": [None, ""]}}, [{}, {"company": ""}, {"company": "x"}])
@example({"actions": {"$not": {"$elemMatch": {"increase": None}}}}, [{}, {"actions": [{}]}])
def test_read_queries_agree_with_the_reference_evaluator(
    query: dict[str, Any], people: list[dict[str, Any]]
) -> None:
    flt = af.from_format(query, "mongodb")
    for person in people:
        assert flt.matches(person) is matches(query, person), (query, person, flt.to_json())


EXPRESSIBLE = af.Schema.of(
    "contact",
    email="string",
    country="string",
    points="number",
    referrals="number",
    isVerified="boolean",
).with_relations(*af.CONTACT.relations)


def negations_on_conditions(node: Node) -> bool:
    """Whether every NOT of the tree stands on one condition, other than `in`: the writer
    pushes a NOT over a group down to the conditions (De Morgan), and "present and not in"
    reads back as `notIn` (NOT `notIn` as `in`), the same audience in another canonical form."""
    return all(_plain_negation(n.item) for n in walk(node) if isinstance(n, Not))


def _plain_negation(item: Node) -> bool:
    if isinstance(item, Comparison) and item.op in (Op.IN, Op.NOT_IN) and not item.path:
        return False
    return not isinstance(item, And | Or | Not | Const)


def _expressible(where: dict[str, Any]) -> af.Filter:
    flt = af.parse(where, EXPRESSIBLE)
    try:
        flt.to_format("mongodb")
    except af.FilterError:
        assume(False)
    return flt


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(
    where_clauses(EXPRESSIBLE, max_leaves=5), st.lists(records(EXPRESSIBLE), min_size=1, max_size=6)
)
def test_written_queries_agree_and_read_back(
    where: dict[str, Any], people: list[dict[str, Any]]
) -> None:
    flt = _expressible(where)
    query = flt.to_format("mongodb")
    back = af.from_format(query, "mongodb", EXPRESSIBLE)
    for person in people:
        expected = flt.matches(person)
        assert matches(query, person, EXPRESSIBLE) is expected, (query, person)
        assert back.matches(person) is expected
    if negations_on_conditions(flt.root) and "every" not in flt.to_json():
        assert back.to_json() == flt.to_json()


REFUSED = [
    ({"email": {"$regex": "Gmail"}}, "email.$regex", "case-sensitive"),
    ({"email": {"$regex": "gmail", "$options": "i"}}, "email.$regex", "ſ"),
    ({"email": {"$regex": "a.*b"}}, "email.$regex", "literal text"),
    ({"email": {"$regex": "^a$"}}, "email.$regex", "$eq"),
    ({"email": {"$regex": "/a/i"}}, "email.$regex", "slashes"),
    ({"email": {"$regex": "a", "$options": "m"}}, "email.$options", '"i"'),
    ({"data.plan": "pro"}, '["data.plan"]', "arrays"),
    ({"actions.name": "share"}, '["actions.name"]', "$elemMatch"),
    ({"points": {"$exists": True}}, "points.$exists", "$ne"),
    ({"points": {"$exists": False}}, "points.$exists", "null or missing"),
    ({"createdAt": {"$gt": "2025"}}, "createdAt", "datetime"),
    ({"$or": []}, "$or", "non-empty"),
    ({"$where": "1"}, "$where", "$and, $or or $nor"),
    ({"points": {"$gte": "x"}}, "points.$gte", "expected a number"),
    ({"points": {"$mod": [2, 0]}}, "points.$mod", "$not"),
    ({"country": {"code": "FR"}}, "country", "embedded"),
    ({"countri": "FR"}, "countri", 'did you mean "country"'),
    ({"actions": {"$size": 2}}, "actions", "$elemMatch"),
]


@pytest.mark.parametrize(("query", "path", "words"), REFUSED, ids=[r[2] for r in REFUSED])
def test_a_query_without_a_faithful_meaning_is_refused_at_its_path(
    query: Any, path: str, words: str
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format(query, "mongodb")
    issue = caught.value.errors[0]
    assert issue.path == path
    assert words in issue.message + "; " + (issue.suggestion or "")
    assert issue.suggestion or "expected a number" in issue.message  # as the where reader says


WRITE_REFUSED = [
    ({"email": {"contains": "gmail"}}, "ignores case otherwise"),
    ({"createdAt": {"gt": "2025-01-01"}}, "otherwise than we do"),
    ({"country": {"equals": "fr", "mode": "insensitive"}}, "case-sensitively"),
    ({"data": {"path": ["seats"], "gt": 4}}, "no faithful form"),
    ({"points": {"gt": {"_ref": "referrals"}}}, "no faithful form"),
]


@pytest.mark.parametrize(("where", "words"), WRITE_REFUSED, ids=[w[1] for w in WRITE_REFUSED])
def test_a_condition_without_a_mongodb_form_is_refused_by_name(where: Any, words: str) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where).to_format("mongodb")
    assert words in str(caught.value)
    assert af.parse(where).to_json() in str(caught.value)


def test_regex_escaping_reads_back_as_the_literal() -> None:
    text = "a.b*c?(d)[e]{f}|g^h$i\\j+k"
    flt = af.parse({"email": {"startsWith": text}})
    query = flt.to_format("mongodb")
    assert re.search(query["email"]["$regex"], text + "tail")  # type: ignore[index]
    assert af.from_format(query, "mongodb") == flt


def test_hostile_queries_end_in_filter_errors() -> None:
    deep: Any = {"points": 1}
    for _ in range(200):
        deep = {"$nor": [deep]}
    with pytest.raises(af.FilterError, match="nested deeper"):
        af.from_format(deep, "mongodb")
    with pytest.raises(af.FilterError, match="over the limit"):
        af.from_format({"country": {"$in": ["FR"] * 20_000}}, "mongodb")
    for odd in (None, 1, "x", [1], {"points": {"$in": "x"}}, {"email": {"$regex": 5}}, {1: 2}):
        with pytest.raises(af.FilterError):
            af.from_format(odd, "mongodb")
