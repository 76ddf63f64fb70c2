"""Residual filters: `Filter.residual(known)` is the filter left once the known fields are
substituted, and for every record holding those values it selects exactly as the filter does,
never larger (docs/semantics.md, "Residual filters").

The proof runs over the generated space (`audiencefilter.testing.space`): every condition of
the sweep and generated where clauses, over generated records, each with several choices of
what is known: the contact's own fields, as a contact write knows them; a drawn subset of
fields and relations; everything; and each level alone (the columns but `data`, `data` with
the fields declared inside it, the to-many relation's rows, the to-one relation's row), each
of which the sweep proves decides some conditions.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.nodes import UnhandledNodeError
from audiencefilter.rewrite.simplify import size
from audiencefilter.testing.space import SPACE, Batch, batches, every_condition
from tests.default_sizes import default_run_examples
from tests.space_surfaces import RESIDUAL_LEVELS as LEVELS
from tests.space_surfaces import known_at

COUNTS: Counter[str] = Counter()
"""Checks made, and residuals that came out TRUE or FALSE (no query needed)."""


def _own(schema: af.Schema, record: dict[str, Any]) -> dict[str, Any]:
    """What a contact write knows: the contact's own fields (null where it holds none)."""
    return {f.name: record.get(f.name) for f in schema.fields}


def _check(
    flt: af.Filter,
    record: dict[str, Any],
    known: dict[str, Any],
    batch: Batch,
    label: str,
    counts: Counter[str] = COUNTS,
) -> None:
    left = flt.residual(known, now=batch.now)
    assert left.matches(record, now=batch.now) == flt.matches(record, now=batch.now), (
        flt.to_dict(),
        known,
        left.to_dict(),
    )
    assert size(left.root) <= size(flt.root), (flt.to_dict(), left.to_dict())
    for tally in {id(COUNTS): COUNTS, id(counts): counts}.values():
        tally["checks"] += 1
        tally[f"checks:{label}"] += 1
        if left.root in (af.TRUE, af.FALSE):
            tally["decided"] += 1
            tally[f"decided:{label}"] += 1


def _levels(schema: af.Schema, record: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """Each level of the record known alone (`space_surfaces.known_at`)."""
    return [(level, known_at(level, schema, record)) for level in LEVELS]


def _known_choices(
    schema: af.Schema, record: dict[str, Any], drawn: set[str]
) -> list[tuple[str, dict[str, Any]]]:
    names = [f.name for f in schema.fields] + [r.name for r in schema.relations]
    everything = {name: record.get(name) for name in names}
    subset = {name: record.get(name) for name in names if name in drawn}
    choices = [("own", _own(schema, record)), ("drawn", subset), ("all", everything)]
    return choices + _levels(schema, record)


@default_run_examples(2, full=3, deadline=None)
@given(
    batches(filters=8, rows=6),
    st.sets(
        st.sampled_from(sorted({f.name for f in SPACE.fields} | {r.name for r in SPACE.relations}))
    ),
)
def test_residual_selects_as_the_filter_on_generated_batches(batch: Batch, drawn: set[str]) -> None:
    for where in batch.wheres:
        flt = af.parse(where, batch.schema)
        for record in batch.records:
            for label, known in _known_choices(batch.schema, record, drawn):
                _check(flt, record, known, batch, label)


@settings(deadline=None, max_examples=1)
@given(batches(filters=1, rows=6))
def test_residual_selects_as_the_filter_on_every_condition_of_the_sweep(batch: Batch) -> None:
    """Every condition of the sweep, on each level known alone: each level decides some
    conditions (so a level the residual stopped knowing would fail here)."""
    counts: Counter[str] = Counter()
    record = batch.records[0]
    choices = [c for c in _known_choices(batch.schema, record, set()) if c[0] != "drawn"]
    for where in _sweep():
        flt = af.parse(where, batch.schema)
        for label, known in choices:
            _check(flt, record, known, batch, label, counts)
    for level in ("own", "all", *LEVELS):
        assert counts[f"decided:{level}"] > 0, (level, counts)
        assert counts[f"decided:{level}"] < counts[f"checks:{level}"] or level == "all"


def _sweep() -> list[dict[str, Any]]:
    """One condition per type, placement, level, aggregate, operator and kind of operand, as
    the space test's sweep asks in CI, on each level: the record, the to-many relation's rows
    and the to-one relation's row (the space test leaves the last to its generated batches)."""
    seen: set[tuple[Any, ...]] = set()
    wheres = []
    for slot, operation, where in every_condition(SPACE):
        key = (slot.type, slot.placement, slot.relation, slot.function, operation.key)
        if (key + (operation.operand,)) not in seen:
            seen.add(key + (operation.operand,))
            wheres.append(where)
    return wheres


def test_known_fields_leave_the_rest() -> None:
    flt = af.parse({"points": {"gte": 10}, "actions": {"some": {"name": "buy"}}})
    assert flt.residual({"points": 12}) == af.parse({"actions": {"some": {"name": "buy"}}})
    assert flt.residual({"points": 2}).root == af.FALSE
    assert flt.residual({}) == flt


def test_unknown_is_false_in_positive_position_and_true_under_not() -> None:
    """`points` null makes `points >= 10` UNKNOWN: FALSE with no NOT above it, TRUE under one,
    so that `NOT (points >= 10) AND email contains x` stays UNKNOWN (not a member) either way."""
    flt = af.parse({"NOT": {"points": {"gte": 10}}, "email": {"contains": "x"}})
    assert flt.residual({"points": None}).root == af.FALSE
    either = af.parse({"OR": [{"NOT": {"points": {"gte": 10}}}, {"email": {"contains": "x"}}]})
    assert either.residual({"points": None}) == af.parse({"email": {"contains": "x"}})


def test_a_relation_is_known_as_a_whole() -> None:
    flt = af.parse({"actions": {"some": {"name": "buy"}}, "email": {"contains": "x"}})
    assert flt.residual({"actions": [{"name": "buy"}]}) == af.parse({"email": {"contains": "x"}})
    assert flt.residual({"actions": []}).root == af.FALSE


def test_a_field_kept_in_json_is_known_with_its_column() -> None:
    schema = af.Schema.from_mapping(
        {"plan": ["string", ["data", "plan"]], "data": "json", "email": "string"}
    )
    flt = af.parse({"plan": "pro", "email": {"contains": "x"}}, schema)
    assert flt.residual({"plan": "pro"}) == flt  # the value lives in `data`
    assert flt.residual({"data": {"plan": "pro"}}) == af.parse({"email": {"contains": "x"}}, schema)


def test_a_new_node_kind_fails_loudly() -> None:
    class Frob:
        kind = "frob"

    flt = af.Filter(Frob(), af.CONTACT)  # type: ignore[arg-type]
    with pytest.raises(UnhandledNodeError):
        flt.residual({"points": 1})


def test_residual_counts_are_reported() -> None:
    """Not a check: the counts of the property tests above, for the record."""
    own = f"{COUNTS['decided:own']} of {COUNTS['checks:own']} with the contact's own fields"
    print(f"residual checks: {COUNTS['checks']}, decided without a query: {COUNTS['decided']}")
    print(f"decided without a query: {own}")
    for level in LEVELS:
        print(f"{level} alone: {COUNTS[f'decided:{level}']} of {COUNTS[f'checks:{level}']}")
