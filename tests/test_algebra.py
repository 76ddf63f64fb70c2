"""The audience algebra against brute force: over a small finite domain, every record enumerated,
no proof is contradicted and every witness is right; witnesses again on SQL engines."""

from __future__ import annotations

import itertools
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from tests.algebra_space import scalar_conditions, wheres
from tests.engines import ENGINES, selector

NOW = datetime(2026, 3, 1, tzinfo=UTC)
SCHEMA = af.Schema.of(n="number", s="string", b="boolean", tags="string[]", when="datetime")
MISSING = object()
DOMAIN: dict[str, tuple[Any, ...]] = {
    "n": (MISSING, None, 1, 2, 2.5, 3),
    "s": (None, "a", "A", "ab", "b"),
    "b": (MISSING, None, True, False),
    "tags": (None, [], ["a"], ["a", "b"], ["b", None]),
    "when": (None, datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 2, 1, tzinfo=UTC)),
}
RECORDS = [
    {k: v for k, v in zip(DOMAIN, values, strict=True) if v is not MISSING}
    for values in itertools.product(*DOMAIN.values())
]


def _conditions() -> st.SearchStrategy[dict[str, Any]]:
    moment = st.sampled_from([datetime(2026, 1, 1, tzinfo=UTC), datetime(2026, 1, 15, tzinfo=UTC)])
    return st.one_of(
        *scalar_conditions(["n", "s", "b", "tags", "when"], empty_lists=True),
        st.builds(
            lambda op, v: {"when": {op: v}}, st.sampled_from(["gt", "lte", "equals"]), moment
        ),
        st.builds(lambda v: {"when": {"gt": {"ago": v}}}, st.sampled_from(["P30D", "P60D"])),
    )


def _wheres() -> st.SearchStrategy[dict[str, Any]]:
    return wheres(_conditions(), max_leaves=5)


def _in(flt: af.Filter, record: dict[str, Any]) -> bool:
    return flt.matches(record, now=NOW)


def _check_implies(a: af.Filter, b: af.Filter) -> af.Verdict:
    verdict = a.implies(b, now=NOW)
    if verdict.holds is True:
        assert not [r for r in RECORDS if _in(a, r) and not _in(b, r)]
    if verdict.holds is False:
        assert (
            verdict.witness is not None and _in(a, verdict.witness) and not _in(b, verdict.witness)
        )
    return verdict


def _check_overlaps(a: af.Filter, b: af.Filter) -> af.Verdict:
    verdict = a.overlaps(b, now=NOW)
    if verdict.holds is False:
        assert not [r for r in RECORDS if _in(a, r) and _in(b, r)]
    if verdict.holds is True:
        assert verdict.witness is not None and _in(a, verdict.witness) and _in(b, verdict.witness)
    return verdict


@given(_wheres(), _wheres())
def test_no_proof_is_contradicted_and_every_witness_is_right(left: Any, right: Any) -> None:
    a, b = af.parse(left, SCHEMA), af.parse(right, SCHEMA)
    _check_implies(a, b)
    _check_overlaps(a, b)
    matching = a.can_match(now=NOW)
    if matching.holds is False:
        assert not [r for r in RECORDS if _in(a, r)]
    if matching.holds is True:
        assert matching.witness is not None and _in(a, matching.witness)
    same = a.equivalent(b, now=NOW)
    if same.holds is True:
        assert all(_in(a, r) == _in(b, r) for r in RECORDS)


@given(_wheres())
def test_a_filter_implies_and_is_equivalent_to_itself(where: Any) -> None:
    flt = af.parse(where, SCHEMA)
    assert flt.implies(flt, now=NOW).holds is True
    assert flt.equivalent(flt, now=NOW).holds is True


def test_fixed_cases() -> None:
    assert af.parse({"points": {"gte": 10}}).implies(af.parse({"points": {"gte": 5}})).holds is True
    weaker = af.parse({"points": {"gte": 5}}).implies(af.parse({"points": {"gte": 10}}))
    assert weaker.holds is False and weaker.witness is not None
    assert af.parse({"country": "FR"}).overlaps(af.parse({"country": "DE"})).holds is False
    never = af.parse({"points": {"gt": 10, "lt": 5}}).can_match()
    assert never.holds is False and "points" in never.reason
    compared = af.compare(af.parse({"country": "FR"}), af.parse({"country": {"in": ["FR", "DE"]}}))
    assert compared.relation == "subset" and compared.b_only == {"country": "DE"}
    assert (
        af.compare(af.parse({"country": "FR"}), af.parse({"country": "DE"})).relation == "disjoint"
    )


def test_an_unknown_node_kind_is_never_a_proof() -> None:
    field_reference = af.parse({"points": {"gt": {"_ref": "referrals"}}})
    other = af.parse({"referrals": {"lt": 0}})
    verdict = field_reference.implies(other)
    assert verdict.holds is not True
    if verdict.holds is False:
        assert field_reference.matches(verdict.witness) and not other.matches(verdict.witness)


PAIRS = [
    ({"n": {"gt": 1}}, {"n": {"gte": 3}}),
    ({"s": {"startsWith": "a", "mode": "insensitive"}}, {"s": "a"}),
    ({"tags": {"has": "a"}}, {"tags": {"hasSome": ["a", "b"]}}),
    ({"NOT": {"b": True}}, {"b": False}),
]


@pytest.mark.parametrize(
    "engine",
    [
        pytest.param(e, id=e.name, marks=e.marks)
        for e in ENGINES
        if e.name in ("sql-sqlite", "sql-duckdb")
    ],
)
@pytest.mark.parametrize(("left", "right"), PAIRS)
def test_witnesses_hold_on_sql_engines(
    engine: Any, left: Any, right: Any, request: pytest.FixtureRequest
) -> None:
    a, b = af.parse(left, SCHEMA), af.parse(right, SCHEMA)
    compared = af.compare(a, b, now=NOW)
    select = selector(engine, request)
    regions = {"both": (True, True), "a_only": (True, False), "b_only": (False, True)}
    for name, (in_a, in_b) in regions.items():
        witness = getattr(compared, name)
        if witness is None:
            continue
        rows = [{"id": "w", **witness}]
        assert (select(a, rows, NOW) == {"w"}) is in_a, (name, witness)
        assert (select(b, rows, NOW) == {"w"}) is in_b, (name, witness)


def test_examples_give_a_deciding_pair_per_condition() -> None:
    from audiencefilter.testing import examples

    flt = af.parse({"OR": [{"country": "FR"}, {"points": {"gte": 10, "lt": 20}}]})
    found = examples(flt)
    assert found.inside is not None and flt.matches(found.inside)
    assert found.outside is not None and not flt.matches(found.outside)
    assert set(found.conditions) == {"OR[0].country.equals", "OR[1].points.gte", "OR[1].points.lt"}
    for pair in found.conditions.values():
        assert pair.inside is not None and pair.outside is not None
        assert flt.matches(pair.inside) and not flt.matches(pair.outside)
        assert set(pair.inside) == set(pair.outside)


def test_examples_report_a_redundant_condition_as_dead() -> None:
    from audiencefilter.testing import examples

    found = examples(af.parse({"AND": [{"points": {"gte": 10}}, {"points": {"gte": 5}}]}))
    assert found.conditions["AND[1].points.gte"].dead is True


WIDE = af.Schema.of(n="number", k="number", data="json").with_relations(
    af.Relation("rows", af.Schema.from_mapping({"name": "string", "size": "number"}))
)
WIDE_DOMAIN: dict[str, tuple[Any, ...]] = {
    "n": (MISSING, None, 1, 2),
    "k": (None, 1, 2),
    "data": (MISSING, {}, {"plan": "pro"}, {"plan": 1}, {"plan": None}),
    "rows": (
        [],
        [{"name": "a", "size": 1}],
        [{"name": "b", "size": 2}],
        [{"name": "a", "size": 1}, {"name": "b", "size": 2}],
    ),
}
WIDE_RECORDS = [
    {k: v for k, v in zip(WIDE_DOMAIN, values, strict=True) if v is not MISSING}
    for values in itertools.product(*WIDE_DOMAIN.values())
]


def _wide_conditions() -> st.SearchStrategy[dict[str, Any]]:
    names = st.sampled_from(["a", "b"])
    return st.one_of(
        st.builds(
            lambda op, v: {"n": {op: v}},
            st.sampled_from(["equals", "gt", "lte"]),
            st.sampled_from([1, 2]),
        ),
        st.builds(lambda op: {"n": {op: {"_ref": "k"}}}, st.sampled_from(["equals", "gt", "lt"])),
        st.builds(lambda v: {"data": {"path": ["plan"], "equals": v}}, st.sampled_from(["pro", 1])),
        st.just({"data": {"path": ["plan"], "equals": None}}),
        st.builds(
            lambda q, v: {"rows": {q: {"name": v}}},
            st.sampled_from(["some", "every", "none"]),
            names,
        ),
        st.builds(lambda v: {"rows": {"count": {"gte": v}}}, st.sampled_from([1, 2])),
        st.builds(lambda v: {"rows": {"sum": {"size": {"gt": v}}}}, st.sampled_from([1, 2])),
    )


def _wide_wheres() -> st.SearchStrategy[dict[str, Any]]:
    return wheres(_wide_conditions(), max_leaves=4)


@given(_wide_wheres(), _wide_wheres())
def test_outside_the_fragment_no_proof_is_wrong_and_witnesses_hold(left: Any, right: Any) -> None:
    a, b = af.parse(left, WIDE), af.parse(right, WIDE)
    implied = a.implies(b, now=NOW)
    if implied.holds is True:
        assert not [r for r in WIDE_RECORDS if _in(a, r) and not _in(b, r)]
    if implied.holds is False:
        assert (
            implied.witness is not None and _in(a, implied.witness) and not _in(b, implied.witness)
        )
    shared = a.overlaps(b, now=NOW)
    if shared.holds is False:
        assert not [r for r in WIDE_RECORDS if _in(a, r) and _in(b, r)]
    if shared.holds is True:
        assert shared.witness is not None and _in(a, shared.witness) and _in(b, shared.witness)


def test_the_names_are_public() -> None:
    import audiencefilter

    assert audiencefilter.Verdict is af.algebra.Verdict
    assert isinstance(af.compare(af.parse({}), af.parse({})), af.AudienceComparison)
    assert af.testing.examples is af.testing.examples  # reachable as an attribute
    assert af.testing.Examples.__name__ == "Examples"


def test_string_patterns_entail_shorter_patterns() -> None:
    ends = af.parse({"email": {"endsWith": "@Acme.com"}})
    assert ends.implies(af.parse({"email": {"contains": "acme"}})).holds is True
    starts = af.parse({"email": {"startsWith": "ab"}})
    assert starts.implies(af.parse({"email": {"startsWith": "a"}})).holds is True
    assert starts.overlaps(af.parse({"email": {"startsWith": "b"}})).holds is False
    weaker = af.parse({"email": {"startsWith": "a"}}).implies(starts)
    assert weaker.holds is False and weaker.witness is not None


WORKLOAD = af.Schema.of(
    **{f"s{i}": "string" for i in range(11)},
    **{f"n{i}": "number" for i in range(10)},
    **{f"b{i}": "boolean" for i in range(3)},
    **{f"t{i}": "datetime" for i in range(4)},
)
PIECE = '{"OR": [{"b0": true}, {"s5": "s5-042"}], "s3": "s3-002", "s0": {"startsWith": "s0-09"}}'
HOLDER = (
    '{"AND": [PIECE, {"n1": 35, "s6": {"contains": "08"}, "b1": true}, {"OR": ['
    '{"t0": {"gte": "2026-01-01T00:00:00Z"}}, {"b2": false}, {"n4": {"gte": 290}}, '
    '{"t1": {"gte": "2026-01-01T00:00:00Z"}}]}]}'
)
DEEP = (
    '{"OR": [{"AND": [{"AND": [{"n8": {"gte": 5}}, {"t0": {"gt": "2026-01-01T00:00:00Z"}}, '
    '{"s8": "s8-000"}, {"s8": {"startsWith": "s8-01"}}]}, {"OR": [{"n8": 0}, '
    '{"s6": {"in": ["s6-000", "s6-003", "s6-036"]}}, {"t1": null}, {"n2": 40}]}, '
    '{"OR": [{"s10": "s10-002"}, {"n8": {"gte": 125}}]}]}, '
    '{"s0": {"in": ["s0-002", "s0-015", "s0-083"]}}, '
    '{"NOT": {"AND": [{"OR": [{"OR": [{"b2": true}, '
    '{"s8": {"in": ["s8-004", "s8-009", "s8-010", "s8-026", "s8-071"]}}, '
    '{"t3": {"lte": "2026-01-14T00:00:00Z"}}]}, {"s9": "s9-002"}]}, '
    '{"OR": [{"b2": true}, {"n5": {"gt": 10}}, {"t2": {"lt": "2026-03-08T00:00:00Z"}}]}, '
    '{"n5": {"gte": 65}, "n8": {"in": [285, 300, 385]}, "s8": "s8-031", "n7": {"gt": 0}}]}}, '
    '{"OR": [{"n6": {"lt": 20}, "n2": {"gte": 145}}, PIECE, {"OR": [{"AND": [{"b1": true}, '
    '{"n5": 45}, {"n5": {"gt": 225}}, {"s7": null}]}, {"OR": [{"n2": {"in": [5, 195]}}, '
    '{"s3": "s3-044"}, {"s1": "s1-190"}, {"n8": {"lt": 65}}]}, '
    '{"n9": {"in": [70, 190, 295, 540]}, "s10": {"contains": "00"}, "n6": {"gte": 10}}, '
    '{"OR": [{"t1": {"gt": "2026-01-29T00:00:00Z"}}, {"s9": {"contains": "08"}}, '
    '{"n5": 35}, {"b0": false}]}]}, '
    '{"t1": {"gt": "2026-01-07T00:00:00Z"}, "s6": {"startsWith": "s6-01"}}]}]}'
)


def test_a_question_of_many_splits_is_decided_within_the_budget() -> None:
    """A pair of the `FilterSet` workload (benchmarks/algebra.py): the first filter holds a
    piece that is one item of an `or` deep in the second, so it implies it. Splitting on each
    `or` as soon as it was met built the branches of the second filter's negation before the
    first filter's conditions could close them, and the search ran out of its budget (`None`);
    splitting only once every demand that does not split is on the branch closes them early."""
    a = af.parse(HOLDER.replace("PIECE", PIECE), WORKLOAD)
    b = af.parse(DEEP.replace("PIECE", PIECE), WORKLOAD)
    assert a.implies(b, now=NOW).holds is True
    assert b.implies(a, now=NOW).holds is False


# Declared fields inside JSON (a service's custom fields) are decided as the columns they stand
# for: the same filters over `n`, `s` and `b` kept at `data.n`, `data.s`, `data.b` get the
# verdicts they get over columns, each proof checked and each witness right on records whose
# JSON holds values of the declared types.
DECLARED = af.Schema.of(
    n=("number", ("data", "n")),
    s=("string", ("data", "s")),
    b=("boolean", ("data", "b")),
    tags="string[]",
    when="datetime",
)
INSIDE = ("n", "s", "b")


def _declared(record: dict[str, Any]) -> dict[str, Any]:
    data = {key: record[key] for key in INSIDE if key in record}
    rest = {key: value for key, value in record.items() if key not in INSIDE}
    return {**rest, "data": data}


DECLARED_RECORDS = [_declared(record) for record in RECORDS]


def _verdicts(left: Any, right: Any, schema: af.Schema) -> list[af.Verdict]:
    a, b = af.parse(left, schema), af.parse(right, schema)
    return [a.implies(b, now=NOW), a.overlaps(b, now=NOW), a.can_match(now=NOW)]


@given(_wheres(), _wheres())
def test_declared_fields_inside_json_are_decided_as_their_columns(left: Any, right: Any) -> None:
    over_columns = _verdicts(left, right, SCHEMA)
    declared = _verdicts(left, right, DECLARED)
    assert [v.holds for v in declared] == [v.holds for v in over_columns]
    a, b = af.parse(left, DECLARED), af.parse(right, DECLARED)
    implied, shared, matching = declared
    if implied.holds is True:
        assert not [r for r in DECLARED_RECORDS if _in(a, r) and not _in(b, r)]
    if shared.holds is False:
        assert not [r for r in DECLARED_RECORDS if _in(a, r) and _in(b, r)]
    if matching.holds is False:
        assert not [r for r in DECLARED_RECORDS if _in(a, r)]
    for verdict, wanted in ((implied, (True, False)), (shared, (True, True))):
        if verdict.witness is not None:
            assert (_in(a, verdict.witness), _in(b, verdict.witness)) == wanted
            assert set(verdict.witness.get("data") or {}) <= set(INSIDE)


def test_a_custom_field_that_can_never_match_is_proved_so() -> None:
    custom = af.CONTACT.with_fields(lifetimeValue=("number", ("data", "lifetimeValue")))
    never = af.parse({"lifetimeValue": {"gt": 5000, "lt": 100}}, custom)
    assert never.can_match(now=NOW).holds is False
    high, some = (af.parse({"lifetimeValue": {"gt": v}}, custom) for v in (5000, 1000))
    assert high.implies(some, now=NOW).holds is True
    found = some.implies(high, now=NOW)
    assert found.holds is False and found.witness is not None
    assert 1000 < found.witness["data"]["lifetimeValue"] <= 5000
