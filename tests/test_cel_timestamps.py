"""Every `timestamp("...")` text of RFC 3339's shape that names no instant, and every lower-case
`t` or `z`, is a `FilterError` at the literal's place with the fix (it was a bare `ValueError`,
or, for `t` and `z`, an audience CEL's evaluators refuse). The texts are generated: each part
of a valid instant pushed just past its range, in turn."""

from __future__ import annotations

import pytest

import audiencefilter as af

VALID = ("2024", "02", "29", "T", "23", "59", "59", "Z")
"""A leap day's last second: each part below stands at the edge of its range."""

PAST = {1: "13", 2: "30", 3: "t", 4: "24", 5: "60", 6: "60", 7: "z"}
"""Part index -> a value just past its range (or its lower-case spelling)."""


def _text(parts: tuple[str, ...]) -> str:
    year, month, day, t, hour, minute, second, zone = parts
    return f"{year}-{month}-{day}{t}{hour}:{minute}:{second}{zone}"


def _wrong_texts() -> list[str]:
    texts = []
    for index, value in PAST.items():
        parts = list(VALID)
        parts[index] = value
        texts.append(_text(tuple(parts)))
    texts += [_text(VALID[:7] + (offset,)) for offset in ("+24:00", "-24:00", "+23:60")]
    texts.append(_text(("2025",) + VALID[1:]))  # 29 February of a common year
    return texts


@pytest.mark.parametrize("text", _wrong_texts())
def test_a_timestamp_naming_no_instant_is_a_filter_error_at_its_place(text: str) -> None:
    source = f'createdAt > timestamp("{text}")'
    with pytest.raises(af.FilterError) as caught:
        af.from_format(source, "cel")
    message = str(caught.value)
    assert "column 23" in message, message
    assert 'timestamp("2025-01-31T09:30:00Z")' in message, message


@pytest.mark.parametrize("offset", ["Z", "+23:59", "-23:59", "+00:00"])
def test_the_edges_of_each_range_still_read(offset: str) -> None:
    text = _text(VALID[:7] + (offset,))
    flt = af.from_format(f'createdAt > timestamp("{text}")', "cel")
    assert flt.to_format("cel").startswith("createdAt > timestamp(")
