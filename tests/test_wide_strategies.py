"""The wide strategies reach the edges they promise, and what they draw is valid.

A differential property is only as strong as its generators: these tests fail if a strategy
stops drawing one of the inputs that once made back-ends disagree (an ambiguous wall time with
`fold=1`, a key `-1`, a subnormal float, true beside 1, ...), so the harness cannot quietly
turn tame again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, find, given, settings
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import (
    data_conditions,
    data_keys,
    json_scalars,
    record_lists,
    unicode_strings,
    where_clauses,
    wide_data_objects,
    wide_numbers,
    wrong_typed_values,
    zoned_datetimes,
)

_FIND = settings(
    max_examples=5000,
    database=None,
    phases=[Phase.generate],  # the first example found will do: no shrinking
    suppress_health_check=list(HealthCheck),
)


def _ambiguous(moment: datetime) -> bool:
    """A wall time the zone's clock shows twice (a fold), at its second showing."""
    return moment.fold == 1 and moment.utcoffset() != moment.replace(fold=0).utcoffset()


def _imaginary(moment: datetime) -> bool:
    """A wall time the zone's clock skips (a gap): it does not survive a round trip."""
    return moment.astimezone(UTC).astimezone(moment.tzinfo).replace(tzinfo=None) != moment.replace(
        tzinfo=None
    )


def _half_hour(moment: datetime) -> bool:
    offset = moment.utcoffset()
    return offset is not None and offset.total_seconds() % 3600 != 0


EDGES: list[tuple[str, st.SearchStrategy[Any], Callable[[Any], bool]]] = [
    ("fold=1 on a daylight-saving fold", zoned_datetimes(), _ambiguous),
    ("a wall time in a daylight-saving gap", zoned_datetimes(), _imaginary),
    ("a half-hour offset", zoned_datetimes(), _half_hour),
    ("key -", data_keys(), lambda k: k == "-"),
    ("key -1", data_keys(), lambda k: k == "-1"),
    ("key *", data_keys(), lambda k: k == "*"),
    ("a control character in a key", data_keys(), lambda k: any(c < " " for c in k)),
    ("a non-BMP character in a key", data_keys(), lambda k: any(ord(c) > 0xFFFF for c in k)),
    ("NUL in a string", unicode_strings(), lambda s: "\x00" in s),
    ("a number above 2^53", wide_numbers(), lambda n: abs(n) > 2**53),
    ("an integer beyond 64 bits", wide_numbers(), lambda n: isinstance(n, int) and n >= 2**64),
    ("an integer of 300 digits", wide_numbers(), lambda n: abs(n) >= 10**299),
    ("a subnormal float", wide_numbers(), lambda n: isinstance(n, float) and 0 < abs(n) < 1e-307),
    ("true", json_scalars(), lambda v: v is True),
    ("1 (not true)", json_scalars(), lambda v: v == 1 and not isinstance(v, bool)),
    (
        "an in list mixing integers and floats",
        data_conditions(),
        lambda c: any(
            isinstance(v, list) and {type(x) for x in v} >= {int, float} for v in c["data"].values()
        ),
    ),
    (
        "a data object with a wide key",
        wide_data_objects(),
        lambda d: any(k in ("-", "-1", "*") for k in d),
    ),
    (
        "a number field holding a string",
        wrong_typed_values(af.FieldType.NUMBER),
        lambda v: v == "1",
    ),
]


@pytest.mark.parametrize(
    ("strategy", "edge"), [pytest.param(s, e, id=name) for name, s, e in EDGES]
)
def test_wide_strategy_reaches_its_edge(
    strategy: st.SearchStrategy[Any], edge: Callable[[Any], bool]
) -> None:
    find(strategy, edge, settings=_FIND)


@settings(max_examples=25)
@given(where_clauses(wide=True, hostile=True), record_lists(wide=True, hostile=True))
def test_wide_filters_parse_and_records_serialize(
    where: dict[str, Any], records: list[dict[str, Any]]
) -> None:
    flt = af.parse(where)
    assert af.parse(flt.to_json()) == flt
    for record in records:
        assert isinstance(record["id"], str)
