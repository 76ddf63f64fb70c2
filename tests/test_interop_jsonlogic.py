"""JsonLogic: rules read here agree with the reference evaluator (`json_logic.jsonLogic`) on
every record, filters written as rules agree with ours, and read back as they were."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st
from json_logic import jsonLogic

import audiencefilter as af
from audiencefilter.language.fields import Op
from audiencefilter.language.nodes import And, Comparison, Const, Node, Not, Or, walk
from audiencefilter.testing.strategies import records, where_clauses

STRINGS = ("email", "firstName", "country", "city")
NUMBERS = ("points", "referrals")
BOOLEANS = ("isVerified", "unsubscribed")
TEXT = st.sampled_from(("", "a", "A", "ab", "None", "FR", "fr", "@", "b@a.c", "é", "É", "İ", "ß"))
NUMBER = st.one_of(st.integers(-3, 3), st.sampled_from((0.5, -0.0, 2**53 + 1, 2.0**53)))
CASELESS = st.sampled_from(("@", ".", "1", "", "@1.", "-"))
DATA_KEYS = ("plan", "seats")
JSON_VALUES = st.one_of(
    st.none(), TEXT, NUMBER, st.booleans(), st.just([]), st.just(["a"]), st.just({"x": 1})
)
SCHEMA = af.CONTACT


def _var(name: str) -> dict[str, Any]:
    return {"var": name}


@st.composite
def comparisons(draw: st.DrawFn) -> dict[str, Any]:
    """A leaf over one field: every form the reader maps, on every field type."""
    kind = draw(st.sampled_from(("text", "number", "boolean", "data")))
    if kind == "data":
        return draw(data_leaves())
    field = draw(st.sampled_from({"text": STRINGS, "number": NUMBERS, "boolean": BOOLEANS}[kind]))
    value = {"text": TEXT, "number": NUMBER, "boolean": st.booleans()}[kind]
    forms = ["==", "===", "!=", "!==", "!", "!!", "var", "missing"]
    if kind != "boolean":
        forms += ["<", "<=", ">", ">=", "between", "in"]
    if kind == "text":
        forms.append("substring")
    form = draw(st.sampled_from(forms))
    return _leaf(draw, form, field, value)


def _leaf(draw: st.DrawFn, form: str, field: str, value: st.SearchStrategy[Any]) -> Any:
    var = _var(field)
    if form in ("==", "!="):
        return {form: draw(st.permutations([var, draw(value)]))}
    if form in ("===", "!=="):
        return {form: draw(st.permutations([var, draw(st.one_of(value, st.none()))]))}
    if form in ("<", "<=", ">", ">="):
        return {form: draw(st.permutations([var, draw(value)]))}
    if form == "between":
        return {draw(st.sampled_from(("<", "<="))): [draw(value), var, draw(value)]}
    if form == "in":
        return {"in": [var, draw(st.lists(value, max_size=3))]}
    if form == "substring":
        return {"in": [draw(CASELESS), var]}
    if form == "missing":
        names = draw(
            st.lists(st.sampled_from((*STRINGS, *NUMBERS)), min_size=1, max_size=3, unique=True)
        )
        return (
            {"missing_some": [draw(st.integers(0, 4)), names]}
            if draw(st.booleans())
            else {"missing": names}
        )
    return var if form == "var" else {form: var}


@st.composite
def data_leaves(draw: st.DrawFn) -> dict[str, Any]:
    var = _var("data." + draw(st.sampled_from(DATA_KEYS)))
    if draw(st.booleans()):
        return {"in": [var, draw(st.lists(TEXT, max_size=3))]}
    operator = draw(st.sampled_from(("===", "!==")))
    literal = draw(st.one_of(TEXT, NUMBER, st.booleans(), st.none()))
    return {operator: [var, literal]}


def rules() -> st.SearchStrategy[Any]:
    leaves = st.one_of(
        comparisons(),
        comparisons(),
        st.booleans(),
        st.just({"<": [_var("points"), _var("referrals")]}),
    )
    return st.recursive(
        leaves,
        lambda children: st.one_of(
            st.builds(lambda items: {"and": items}, st.lists(children, max_size=3)),
            st.builds(lambda items: {"or": items}, st.lists(children, max_size=3)),
            st.builds(lambda item: {"!": item}, children),
            st.builds(lambda item: {"!!": [item]}, children),
        ),
        max_leaves=6,
    )


def contact_records() -> st.SearchStrategy[dict[str, Any]]:
    """Contacts with missing and null fields, and `data` documents of every JSON type."""
    data = st.one_of(
        st.none(), st.dictionaries(st.sampled_from(DATA_KEYS), JSON_VALUES, max_size=2)
    )
    field = {name: st.one_of(st.none(), TEXT) for name in STRINGS}
    field |= {name: st.one_of(st.none(), NUMBER) for name in NUMBERS}
    field |= {name: st.one_of(st.none(), st.booleans()) for name in BOOLEANS}
    field["data"] = data
    return st.fixed_dictionaries({}, optional=field)


@given(rules(), st.lists(contact_records(), min_size=1, max_size=6))
@example({"!=": [{"var": "country"}, "FR"]}, [{}, {"country": None}, {"country": "FR"}])
@example({"==": [{"var": "isVerified"}, False]}, [{}, {"isVerified": False}])
@example({"<=": ["None", {"var": "city"}]}, [{}, {"city": "None"}, {"city": "Z"}])
@example({"!": {"in": [{"var": "data.plan"}, ["a"]]}}, [{"data": {"plan": 1}}, {"data": {}}])
@example({"!": {"missing_some": [2, ["email", "points"]]}}, [{"email": "", "points": 0}])
def test_read_rules_agree_with_the_reference_evaluator(
    rule: Any, people: list[dict[str, Any]]
) -> None:
    flt = af.from_format(rule, "jsonlogic")
    for person in people:
        assert flt.matches(person) is bool(jsonLogic(rule, person)), (rule, person, flt.to_json())


EXPRESSIBLE = af.Schema.of(
    "contact",
    email="string",
    country="string",
    points="number",
    referrals="number",
    isVerified="boolean",
    data="json",
)


def _expressible(where: dict[str, Any]) -> af.Filter:
    flt = af.parse(where, EXPRESSIBLE)
    try:
        flt.to_format("jsonlogic")
    except af.FilterError:
        assume(False)
    return flt


def negations_on_conditions(node: Node) -> bool:
    """Whether every NOT of the tree stands on one condition, other than `in`: the writer
    pushes a NOT over a group down to the conditions (De Morgan), and "present and not in"
    reads back as `notIn` (NOT `notIn` as `in`), the same audience in another canonical form."""
    return all(_plain_negation(n.item) for n in walk(node) if isinstance(n, Not))


def _plain_negation(item: Node) -> bool:
    if isinstance(item, Comparison) and item.op in (Op.IN, Op.NOT_IN) and not item.path:
        return False
    return not isinstance(item, And | Or | Not | Const)


@settings(suppress_health_check=[HealthCheck.filter_too_much, HealthCheck.too_slow])
@given(
    where_clauses(EXPRESSIBLE, max_leaves=5), st.lists(records(EXPRESSIBLE), min_size=1, max_size=6)
)
def test_written_rules_agree_and_read_back(
    where: dict[str, Any], people: list[dict[str, Any]]
) -> None:
    flt = _expressible(where)
    rule = flt.to_format("jsonlogic")
    back = af.from_format(rule, "jsonlogic", EXPRESSIBLE)
    for person in people:
        expected = flt.matches(person)
        assert bool(jsonLogic(rule, person)) is expected, (rule, person)
        assert back.matches(person) is expected
    if negations_on_conditions(flt.root):
        assert back.to_json() == flt.to_json()


REFUSED = [
    ({"in": ["Gmail", {"var": "email"}]}, "in[0]", "case-sensitive"),
    ({"<": [{"var": "createdAt"}, "2025-01-01"]}, '["<"][0].var', "datetime field"),
    ({"==": [{"var": "data.plan"}, "pro"]}, '["=="]', "write ==="),
    ({"<": [{"var": "data.seats"}, 4]}, '["<"]', "ordering inside JSON"),
    ({"==": [{"var": "country"}, None]}, '["=="][1]', "=== null"),
    ({"var": ["email", "x"]}, "var", "default"),
    ({"===": [{"var": "data.tags.0"}, "x"]}, '["==="][0].var', "array"),
    ({"and": [{"+": [1, 2]}]}, "and[0]", '"+"'),
    ({">": [1, {"var": "points"}, 5]}, '[">"]', "array of 2 operands"),
    ({"<=": [{"var": "points"}, {"var": "referrals"}]}, '["<="]', "two nulls"),
    ({"==": [{"var": "pointz"}, 1]}, '["=="][0].var', 'did you mean "points"'),
    ({"and": [], "or": []}, "", "one operator"),
]


@pytest.mark.parametrize(("rule", "path", "words"), REFUSED, ids=[str(r[1]) for r in REFUSED])
def test_a_rule_without_a_faithful_meaning_is_refused_at_its_path(
    rule: Any, path: str, words: str
) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.from_format(rule, "jsonlogic")
    issue = caught.value.errors[0]
    assert issue.path == path
    assert words in issue.message + "; " + (issue.suggestion or "")
    assert issue.suggestion


def test_every_problem_is_listed_at_once() -> None:
    rule = {"and": [{"<": [{"var": "points"}, "x"]}, {"foo": 1}, {"===": [{"var": "emial"}, 1]}]}
    with pytest.raises(af.FilterError) as caught:
        af.from_format(rule, "jsonlogic")
    assert [i.path for i in caught.value.errors] == [
        'and[0]["<"][1]',
        "and[1]",
        'and[2]["==="][0].var',
    ]


WRITE_REFUSED = [
    ({"email": {"contains": "gmail"}}, "case-sensitive"),
    ({"email": {"startsWith": "a"}}, "starts"),
    ({"createdAt": {"gt": "2025-01-01"}}, "date-times"),
    ({"country": {"equals": "fr", "mode": "insensitive"}}, "case-sensitively"),
    ({"actions": {"some": {}}}, "no faithful form"),
    ({"data": {"path": ["seats"], "gt": 4}}, "inside JSON"),
]


@pytest.mark.parametrize(("where", "words"), WRITE_REFUSED, ids=[w[1] for w in WRITE_REFUSED])
def test_a_condition_without_a_jsonlogic_form_is_refused_by_name(where: Any, words: str) -> None:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where).to_format("jsonlogic")
    assert words in str(caught.value)
    assert af.parse(where).to_json() in str(caught.value)


def test_hostile_rules_end_in_filter_errors() -> None:
    deep: Any = {"===": [{"var": "points"}, 1]}
    for _ in range(200):
        deep = {"!": deep}
    with pytest.raises(af.FilterError, match="nested deeper"):
        af.from_format(deep, "jsonlogic")
    wide = {"in": [{"var": "country"}, ["FR"] * 20_000]}
    with pytest.raises(af.FilterError, match="over the limit"):
        af.from_format(wide, "jsonlogic")
    with pytest.raises(af.FilterError, match="more than"):
        half = {"or": [{"===": [{"var": "points"}, 1]}] * 6_000}
        af.from_format({"and": [half, half]}, "jsonlogic")
    text = '{"!": ' * 100_000 + "true" + "}" * 100_000
    with pytest.raises(af.FilterError):
        af.from_format(text, "jsonlogic")
    for odd in (
        None,
        1,
        "x",
        [1],
        {"===": "x"},
        {"missing_some": [True, ["email"]]},
        {"in": [1e308, {"var": "email"}]},
    ):
        with pytest.raises(af.FilterError):
            af.from_format(odd, "jsonlogic")


def test_json_text_is_read_strictly() -> None:
    flt = af.from_format('{"===": [{"var": "country"}, "FR"]}', "jsonlogic")
    assert flt == af.parse({"country": "FR"})
    with pytest.raises(af.FilterError, match="more than once"):
        af.from_format('{"===": [{"var": "country"}, "FR"], "===": 1}', "jsonlogic")
