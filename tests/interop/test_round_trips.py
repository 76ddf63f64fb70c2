"""Every format writer's output reads back, over generated filters that hold date-times (with
microseconds and offsets), fields declared inside JSON, wide decimals and empty lists: the same
filter, or (JsonLogic, react-querybuilder) a declared field at its path, with the same answer
on every record; and English gives a whole sentence for every empty list operand
(docs/interop.md, "What every format shares")."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.filter import Filter
from audiencefilter.formats import english, jsonlogic, mongodb, sql_where
from audiencefilter.formats import react_querybuilder as rqb
from audiencefilter.formats.declared import at_paths
from audiencefilter.language.nodes import And, Comparison, Const, Node, Not, Or, walk
from audiencefilter.testing.strategies import records, where_clauses

SCHEMA = af.CONTACT.with_fields(
    plan=("string", ("data", "plan")),
    seats=("number", ("data", "seats")),
    trial=("boolean", ("data", "trial")),
    vip="boolean",
)
WRITERS: dict[str, tuple[Any, bool]] = {
    "sql": (sql_where, False),
    "react-querybuilder": (rqb, True),
    "jsonlogic": (jsonlogic, True),
    "mongodb": (mongodb, False),
}
"""Each format's module, and whether it writes a declared field at its path."""


def _wide_decimal() -> st.SearchStrategy[float]:
    return st.floats(allow_nan=False, allow_infinity=False) | st.sampled_from(
        [0.1, 100.00000000000001, 1e23, 5e-324, 1.7976931348623157e308, -2.5e-8]
    )


def _instant() -> st.SearchStrategy[str]:
    return st.builds(
        lambda day, micros, zone: f"2025-01-{day:02d}T00:00:00.{micros:06d}{zone}",
        st.integers(1, 3),
        st.sampled_from([0, 1, 999999]),
        st.sampled_from(["Z", "+01:00", "-05:30", ""]),
    )


def _extras() -> st.SearchStrategy[dict[str, Any]]:
    """Conditions the general strategy draws rarely: date-times near midnight, declared
    fields, decimals of every width, empty lists."""
    op = st.sampled_from(["equals", "not", "gt", "gte", "lt", "lte"])
    listed = st.sampled_from(["in", "notIn"])
    return st.one_of(
        st.builds(lambda o, v: {"createdAt": {o: v}}, op, _instant()),
        st.builds(lambda o, v: {"createdAt": {o: v}}, listed, st.lists(_instant(), max_size=2)),
        st.builds(lambda o, v: {"points": {o: v}}, op, _wide_decimal()),
        st.builds(lambda o, v: {"seats": {o: v}}, op, _wide_decimal()),
        st.builds(lambda o, v: {"plan": {o: v}}, op, st.sampled_from(["pro", "", "a b"])),
        st.builds(lambda o: {"plan": {o: []}}, listed),
        st.builds(lambda o: {"country": {o: []}}, listed),
        st.builds(lambda f: {f: None}, st.sampled_from(["plan", "seats", "trial", "vip"])),
        st.builds(lambda f, b: {f: b}, st.sampled_from(["trial", "vip"]), st.booleans()),
    )


def _wheres() -> st.SearchStrategy[dict[str, Any]]:
    leaf = st.one_of(_extras(), where_clauses(SCHEMA, max_leaves=2))
    return st.recursive(
        leaf,
        lambda inner: st.one_of(
            st.builds(lambda xs: {"AND": xs}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda xs: {"OR": xs}, st.lists(inner, min_size=1, max_size=3)),
            st.builds(lambda x: {"NOT": x}, inner),
        ),
        max_leaves=4,
    )


def _plain_negations(node: Node) -> bool:
    """Whether the two-valued writers give the same canonical filter back: no NOT over a group
    (written with De Morgan's laws) nor over `in`/`notIn` (read back as the other one)."""
    return all(
        not isinstance(n.item, And | Or | Not | Const)
        and not (isinstance(n.item, Comparison) and n.item.op.value in ("in", "notIn"))
        for n in walk(node)
        if isinstance(n, Not)
    )


def _exact(name: str, node: Node) -> bool:
    """Whether the format gives the same canonical filter back: react-querybuilder writes
    FALSE as NOT of an empty group (read back as `{"NOT": {}}`)."""
    if name == "sql":
        return True
    if name == "react-querybuilder":
        return not any(isinstance(n, Const) and not n.value for n in walk(node))
    return _plain_negations(node)


@settings(
    max_examples=60,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much],
)
@given(where=_wheres(), people=st.lists(records(SCHEMA), min_size=1, max_size=3))
@pytest.mark.parametrize("name", sorted(WRITERS))
def test_each_writer_reads_back(name: str, where: dict[str, Any], people: list[Any]) -> None:
    module, paths = WRITERS[name]
    flt = af.parse(where, SCHEMA)
    try:
        written = module.write(flt.root, SCHEMA)
    except af.FilterError as refused:
        assert refused.errors[0].message
        return
    back = Filter(module.read(written, SCHEMA), SCHEMA)
    expected = Filter(at_paths(flt.root, SCHEMA, name, paths=True), SCHEMA) if paths else flt
    for person in people:
        assert back.matches(person) is flt.matches(person), (written, person)
    if _exact(name, flt.root):
        assert back.to_json() == expected.to_json(), written


@pytest.mark.parametrize("name", sorted(WRITERS))
@pytest.mark.parametrize(
    "where",
    [
        {"plan": "pro"},
        {"seats": {"gt": 4}},
        {"trial": None},
        {"trial": True},
        {"NOT": {"plan": {"in": ["a"]}}},
    ],
)
def test_a_declared_field_is_written_at_its_path_or_refused_by_name(
    name: str, where: dict[str, Any]
) -> None:
    module, paths = WRITERS[name]
    flt = af.parse(where, SCHEMA)
    declared = next(iter(where["NOT"] if "NOT" in where else where))
    try:
        written = module.write(flt.root, SCHEMA)
    except af.FilterError as refused:
        # JsonLogic writes paths, but no ordering inside JSON (its own rule).
        assert name == "jsonlogic" or f'"{declared}" is declared inside JSON' in str(refused)
        assert not paths or "inside JSON" in str(refused), refused
        return
    assert paths, written
    back = Filter(module.read(written, SCHEMA), SCHEMA)
    assert back.to_json() == Filter(at_paths(flt.root, SCHEMA, name, paths=True)).to_json()


LIST_SCHEMA = af.CONTACT.with_fields(
    tags="string[]", plan=("string", ("data", "plan")), inner=("string[]", ("data", "inner"))
)
EMPTY = [
    {"country": {"in": []}},
    {"country": {"notIn": []}},
    {"points": {"in": []}},
    {"createdAt": {"notIn": []}},
    {"plan": {"in": []}},
    {"data": {"path": ["plan"], "notIn": []}},
    {"tags": {"hasSome": []}},
    {"tags": {"hasEvery": []}},
    {"tags": {"equals": []}},
    {"inner": {"hasSome": []}},
    {"inner": {"hasEvery": []}},
    {"data": {"path": ["x"], "array_contains": []}},
    {"actions": {"some": {"name": {"in": []}}}},
]
DANGLING = (" of", " include", " with", " is", " are", " exactly", " and", " or", "[]")


@pytest.mark.parametrize("negated", [False, True])
@pytest.mark.parametrize("where", EMPTY, ids=[str(w) for w in EMPTY])
def test_english_of_an_empty_list_is_a_whole_sentence(where: Any, negated: bool) -> None:
    flt = af.parse({"NOT": where} if negated else where, LIST_SCHEMA)
    sentence = english.write(flt.root, LIST_SCHEMA)
    words = sentence.removesuffix(")")
    assert sentence == sentence.strip() and not words.endswith(DANGLING), sentence
    assert "[]" not in sentence, sentence


NUMBER_READERS: dict[str, Any] = {
    "json": lambda n: af.parse(f'{{"points": {{"lt": {n}}}}}'),
    "json at a path": lambda n: af.parse(f'{{"data": {{"path": ["x"], "lt": {n}}}}}'),
    "json declared": lambda n: af.parse(f'{{"seats": {{"lt": {n}}}}}', SCHEMA),
    "text": lambda n: af.parse_text(f"points < {n}"),
    "sql": lambda n: sql_where.read(f"points < {n}", af.CONTACT),
    "sql in a relation": lambda n: sql_where.read(
        f"EXISTS (SELECT 1 FROM actions a WHERE a.sub_id = contacts.id AND a.increase < {n})",
        af.CONTACT,
    ),
    "react-querybuilder text": lambda n: rqb.read(
        {"rules": [{"field": "points", "operator": "<", "value": n}]}, af.CONTACT
    ),
    "react-querybuilder json": lambda n: rqb.read(
        f'{{"rules": [{{"field": "points", "operator": "<", "value": {n}}}]}}', af.CONTACT
    ),
    "jsonlogic": lambda n: jsonlogic.read(f'{{"<": [{{"var": "points"}}, {n}]}}', af.CONTACT),
    "mongodb": lambda n: mongodb.read(f'{{"points": {{"$lt": {n}}}}}', af.CONTACT),
}


@pytest.mark.parametrize("reader", sorted(NUMBER_READERS))
@pytest.mark.parametrize(
    ("numeral", "kept"),
    [
        ("100.000000000000001", False),
        ("1e-400", False),
        ("0.1000000000000000000001", False),
        ("0.1", True),
        ("0.30000000000000004", True),
        ("1e23", True),
        ("100.50", True),
    ],
)
def test_a_numeral_no_double_holds_is_refused_by_every_reader(
    reader: str, numeral: str, kept: bool
) -> None:
    if kept:
        NUMBER_READERS[reader](numeral)
        return
    with pytest.raises(af.FilterError, match="more precision than a double keeps"):
        NUMBER_READERS[reader](numeral)
