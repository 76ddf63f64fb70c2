"""`parse`'s accelerator (`where/fast.py`) answers exactly as the plain reader.

The accelerator decodes without the duplicate-key hook, rules repeated keys out by counting
colons, and gives up on anything unusual. Whatever it is given, `parse` must return the same
filter, or raise the same issues at the same places, as `read_plain`, the reader that defines
the where clause.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.language.nodes import Node
from audiencefilter.testing.strategies import where_clauses, where_noise
from audiencefilter.where import fast
from audiencefilter.where.read import read_plain


def outcome(call: Any) -> Any:
    try:
        return call().root
    except af.FilterError as exc:
        return [issue.model_dump() for issue in exc.errors]


def both_ways(text: str) -> tuple[Any, Any]:
    accelerated = outcome(lambda: af.parse(text))
    plain = outcome(lambda: af.Filter(read_plain(text, af.CONTACT, af.DEFAULT_LIMITS), af.CONTACT))
    return accelerated, plain


def _with_repeats(value: Any, data: st.DataObject, ascii: bool) -> str:
    """JSON text of `value` in which objects sometimes repeat one of their keys."""
    if isinstance(value, dict):
        members = list(value.items())
        if members and data.draw(st.integers(0, 4)) == 0:
            key, _ = data.draw(st.sampled_from(members))
            members.insert(data.draw(st.integers(0, len(members))), (key, None))
        inner = ", ".join(
            json.dumps(k, ensure_ascii=ascii) + ": " + _with_repeats(v, data, ascii)
            for k, v in members
        )
        return "{" + inner + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_with_repeats(v, data, ascii) for v in value) + "]"
    return json.dumps(value, ensure_ascii=ascii)


@given(where_clauses(), st.data())
def test_accelerated_parse_equals_the_plain_reader(
    where: dict[str, Any], data: st.DataObject
) -> None:
    accelerated, plain = both_ways(_with_repeats(where, data, data.draw(st.booleans())))
    assert accelerated == plain


@given(where_noise(finite=True), st.data())
def test_accelerated_parse_equals_the_plain_reader_on_noise(
    where: Any, data: st.DataObject
) -> None:
    accelerated, plain = both_ways(_with_repeats(where, data, data.draw(st.booleans())))
    assert accelerated == plain


@pytest.mark.parametrize(
    "text",
    [
        '{"email": "a", "email": "b"}',
        '{"email": {"equals": "a:b", "equals": "c"}}',
        '{"email": "a:b:c", "city": {"in": ["x:y", "z"]}}',
        '{"createdAt": {"gte": "2025-01-01T00:00:00Z", "gte": "2025-01-01"}}',
        '{"createdAt": {"gte": {"ago": "P30D"}, "lt": {"ago": "P1D", "ago": "P2D"}}}',
        '{"OR": [{"email": "x"}, {"email": "y", "email": "z"}]}',
        '{"email": "a\\u003ab", "city": "x", "city": "y"}',
        '{"email": "a\\":b", "email": "c"}',
        '{"email": {"in": ["a:b", "c"]}, "email": null}',
        '{"email": {"not": {"contains": "a:b", "contains": "c"}}}',
        '{"email": {"not": {"equals": "a", "mode": "insensitive"}}}',
        '{"points": {"mode": "insensitive", "gt": 1}}',
        '{"createdAt": {"gte": "not a date"}}',
        '{"createdAt": {"in": ["2025-01-01T00:00:00Z", "2025-01-01T00:00:00Z"]}}',
        '{"createdAt": {"in": [{"ago": "P1D"}]}}',
        '{"data": {"path": ["plan"], "equals": "pro"}}',
        ' {"email": "a"} ',
        '{"email": "a"} x',
        '\ufeff{"email": 1}',
        '{"points": NaN}',
        '{"points": 1e400}',
        '{"points": true}',
        '{"email": {"contains": "x", "mode": "insensitive"}}',
        '{"firstName": "Élodie", "firstName": "Élodie"}',
        '{"firstName": "\udc00"}',
        '{"unknown:field": 1}',
        '{"NOT": []}',
        '{"OR": []}',
        '{"AND": 1}',
        '{"AND": [1]}',
        "[1, 2]",
        '"text"',
        "",
        "{" * 2000,
        '{"NOT": ' * 40 + "{}" + "}" * 40,
        '{"points": {"in": [' + ", ".join(["1"] * 1001) + "]}}",
        # `in` and `notIn` take an array: a lone literal is an error, not a comparison.
        '{"email": {"in": "abc"}}',
        '{"email": {"notIn": "abc", "mode": "insensitive"}}',
        '{"points": {"in": 3}}',
        '{"points": {"notIn": 3, "gt": 1}}',
        '{"createdAt": {"in": "2025-01-01"}}',
        '{"NOT": {"points": {"in": 3}}}',
    ],
)
def test_accelerated_parse_equals_the_plain_reader_on_edge_cases(text: str) -> None:
    accelerated, plain = both_ways(text)
    assert accelerated == plain


def test_the_accelerator_reads_plain_filters_and_gives_up_on_repeated_keys() -> None:
    text = '{"createdAt": {"gte": "2025-01-01T00:00:00Z"}, "email": "a:b"}'
    assert fast.read_fast(text, af.CONTACT, af.DEFAULT_LIMITS) is not None
    repeated = '{"createdAt": {"gte": "2025-01-01T00:00:00Z", "gte": "2025-01-02"}}'
    assert fast.read_fast(repeated, af.CONTACT, af.DEFAULT_LIMITS) is None


def test_the_switch_turns_the_accelerator_off(monkeypatch: pytest.MonkeyPatch) -> None:
    def unreachable(*args: object) -> None:
        raise AssertionError("the accelerator ran while switched off")

    text = '{"points": {"gt": 1}}'
    monkeypatch.setattr(fast, "read_fast", unreachable)
    with pytest.raises(AssertionError):
        af.parse(text)
    monkeypatch.setattr(fast, "ENABLED", False)
    assert af.parse(text).root == read_plain(text, af.CONTACT, af.DEFAULT_LIMITS)


def test_the_accelerator_builds_comparisons_equal_to_the_class() -> None:
    built = fast._Comparison("email", af.Op.CONTAINS, "x", True)
    made = af.Comparison("email", af.Op.CONTAINS, "x", True)
    assert type(built) is af.Comparison
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert fast._Comparison("points", af.Op.GT, 1) == af.Comparison("points", af.Op.GT, 1)
    with pytest.raises(AttributeError):
        built.value = "y"  # type: ignore[misc]


def test_the_accelerator_builds_groups_and_not_null_equal_to_the_classes() -> None:
    from audiencefilter.language.nodes import And, IsNull, Not, Or, all_of, any_of

    items = (af.Comparison("points", af.Op.GT, 1), af.Comparison("city", af.Op.EQUALS, "Lyon"))
    for built, made in [
        (fast._And(items), And(items)),
        (fast._Or(items), Or(items)),
        (fast._NotNull("company"), Not(IsNull("company"))),
        (all_of(items, fast._And), all_of(items)),
        (any_of(items[:1], fast._Or), any_of(items[:1])),
        (any_of((), fast._Or), any_of(())),
    ]:
        assert type(built) is type(made)
        assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    with pytest.raises(AttributeError):
        fast._And(items).items = ()  # type: ignore[misc]
    assert type(fast._NotNull("company").item) is IsNull


def test_a_node_class_of_another_layout_is_built_by_the_class_itself() -> None:
    import dataclasses

    @dataclasses.dataclass(frozen=True, slots=True)
    class Wider:
        items: tuple[Node, ...]
        extra: int = 0

    assert fast._twin(Wider, ("items",)) is None
    assert fast._group_builder(Wider) is Wider  # type: ignore[arg-type]
    assert fast._twin(af.Comparison, ("field", "op", "value")) is None


def test_the_cheap_filter_builder_builds_filters_equal_to_the_class() -> None:
    from audiencefilter.filter import _new_filter

    root = af.Comparison("points", af.Op.GT, 1)
    built = _new_filter(root, af.CONTACT)
    made = af.Filter(root, af.CONTACT)
    assert type(built) is af.Filter
    assert built == made and hash(built) == hash(made) and repr(built) == repr(made)
    assert built.matches({"points": 2}) and not built.matches({"points": 1})
    with pytest.raises(AttributeError):
        built.root = root  # type: ignore[misc]
