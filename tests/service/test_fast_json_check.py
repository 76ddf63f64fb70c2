"""`check_data` answers the same with its exact-type dispatch on and off.

`ground/fields._check_json_fast` looks at a value's type once and leaves anything but the exact
JSON types to `_check_json`: every value, ordinary or hostile, must pass both or fail both with
the same first error.
"""

from __future__ import annotations

import os
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from audiencefilter.service.ground import fields


class _Text(str):
    """A subclass of str: no exact JSON type, so the plain check judges it."""


class _Number(int):
    pass


hostile_texts = st.one_of(
    st.text(max_size=8),
    st.sampled_from(["", "a\x00", "\x00", "\ud800", "e\u0301", "\udfff\x00", "Zoë", "\u0085"]),
)
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(),
    st.sampled_from([2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 10**100, -(10**100)]),
    st.floats(),
    st.sampled_from([float("nan"), float("inf"), float("-inf"), -0.0]),
    hostile_texts,
    st.builds(_Text, hostile_texts),
    st.builds(_Number, st.integers(-(2**64), 2**64)),
    st.sampled_from([b"bytes", (1, 2), {1, 2}, object]),
)
keys = st.one_of(hostile_texts, st.builds(_Text, hostile_texts))
values = st.recursive(
    scalars,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=3),
    max_leaves=12,
)


def _nested(depth: int, leaf: Any, as_list: bool) -> Any:
    value = leaf
    for _ in range(depth):
        value = [value] if as_list else {"k": value}
    return value


def _outcome(value: Any, fast: bool, monkeypatch: pytest.MonkeyPatch) -> tuple[str, str]:
    monkeypatch.setattr(fields, "FAST_JSON", fast)
    try:
        assert fields.check_data(value) is value
    except (ValueError, TypeError) as exc:
        return (type(exc).__name__, str(exc))
    return ("ok", "")


def _same(value: Any, monkeypatch: pytest.MonkeyPatch) -> None:
    fast = _outcome(value, True, monkeypatch)
    assert fast == _outcome(value, False, monkeypatch)


CI = os.environ.get("HYPOTHESIS_PROFILE", "ci") == "ci"
"""Whether this run is the `ci` size, where the property below draws 300 examples; the
`thorough`, `deep` and `search` profiles draw 1,000. Drawing them is most of its time: 27 to
30 s of a `make test` worker at the full count."""


@settings(
    max_examples=300 if CI else 1000, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.dictionaries(keys, values, max_size=4))
def test_the_fast_check_answers_as_the_plain_one(
    data: dict[str, Any], monkeypatch: pytest.MonkeyPatch
) -> None:
    _same(data, monkeypatch)


@pytest.mark.parametrize("depth", range(fields.MAX_DATA_DEPTH - 3, fields.MAX_DATA_DEPTH + 3))
@pytest.mark.parametrize("leaf", ["text", "a\x00", "\ud800", 2**64, float("nan"), None, {}, []])
@pytest.mark.parametrize("as_list", [True, False])
def test_nesting_is_bounded_alike_at_every_depth(
    depth: int, leaf: Any, as_list: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Around the bound, where a text value checked in its object must still count a level."""
    _same({"top": _nested(depth, leaf, as_list)}, monkeypatch)


def test_deep_nesting_is_refused_before_recursion_runs_out(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    deep = {"k": _nested(5000, "x", False)}
    assert _outcome(deep, True, monkeypatch)[1].startswith("must not nest deeper")
    _same(deep, monkeypatch)
