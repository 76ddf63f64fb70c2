"""The polars back-end: same answers as the in-memory predicate, whatever the column types.

The conformance suite runs on it through `tests/columnar_engines.py`; this file adds the
random differential test and the places where polars and Python differ by default (nulls in
`is_in`, NaN ordering, integer/float comparison, Unicode case folding, time zones).
"""

from __future__ import annotations

import math
import subprocess
import sys
from datetime import UTC, date, datetime, timedelta, timezone
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

import audiencefilter as af
from audiencefilter.testing.strategies import NOW, filters, record_lists

pl = pytest.importorskip("polars")
columnar = pytest.importorskip("audiencefilter.backends.columnar")


def memory_ids(flt: af.Filter, records: list[dict[str, Any]]) -> list[int]:
    return [i for i, record in enumerate(records) if flt.matches(record, now=NOW)]


def polars_ids(flt: af.Filter, frame: Any) -> list[int]:
    indexed = frame.with_row_index("_row")
    return flt.select_rows(indexed, now=NOW)["_row"].to_list()


@given(filters(), record_lists())
def test_random_filters_agree_with_memory(flt: af.Filter, records: list[dict[str, Any]]) -> None:
    frame = columnar.frame_for(records, flt.schema)
    assert polars_ids(flt, frame) == memory_ids(flt, records)


@given(filters(max_leaves=4), record_lists(max_size=6))
def test_random_filters_agree_on_a_lazy_streaming_frame(
    flt: af.Filter, records: list[dict[str, Any]]
) -> None:
    frame = columnar.frame_for(records, flt.schema).with_row_index("_row").lazy()
    chosen = flt.select_rows(frame, now=NOW).collect(engine="streaming")
    assert chosen["_row"].to_list() == memory_ids(flt, records)


def test_expression_is_three_valued() -> None:
    frame = pl.DataFrame({"company": ["Acme", None, "Hooli"]})
    expr = af.parse({"company": {"in": ["Acme"]}}).to_polars(frame.schema)
    assert frame.select(expr)["company"].to_list() == [True, None, False]
    negated = af.parse({"NOT": {"company": {"in": ["Acme"]}}}).to_polars(frame.schema)
    assert frame.select(negated)["company"].to_list() == [False, None, True]


@pytest.mark.parametrize(
    ("where", "expected"),
    [
        ({"company": {"in": []}}, [False, False]),
        ({"company": {"notIn": []}}, [True, True]),
        ({"NOT": {"company": {"in": []}}}, [True, True]),
    ],
)
def test_empty_lists_are_constants_even_for_null_rows(where: Any, expected: list[bool]) -> None:
    frame = pl.DataFrame({"company": ["Acme", None]})
    result = frame.with_columns(result=af.parse(where).to_polars(frame.schema))
    assert result["result"].to_list() == expected


INTEGER_VALUES = [None, -(2**63), -3, -2, 0, 2, 3, 2**53, 2**53 + 1, 2**63 - 1]
NUMBER_LITERALS = [
    2.5, -2.5, 2.0, 2**53 + 1, float(2**53), 2**63, 2**63 - 1, -(2**63) - 1, 2**70, -(2**70), 1e300,
]  # fmt: skip


@pytest.mark.parametrize("literal", NUMBER_LITERALS)
@pytest.mark.parametrize("op", ["equals", "gt", "gte", "lt", "lte", "in", "notIn", "not"])
def test_integer_column_compares_exactly(op: str, literal: Any) -> None:
    records = [{"points": v} for v in INTEGER_VALUES]
    value = [literal, 3] if op in ("in", "notIn") else literal
    flt = af.parse({"points": {op: value}})
    frame = columnar.frame_for(records, flt.schema)
    assert frame.schema["points"] == pl.Int64
    assert polars_ids(flt, frame) == memory_ids(flt, records)
    inverse = af.parse({"NOT": {"points": {op: value}}})
    assert polars_ids(inverse, frame) == memory_ids(inverse, records)


@pytest.mark.parametrize("dtype", ["Int8", "UInt8", "Int32", "UInt64"])
def test_narrow_and_unsigned_integer_columns(dtype: str) -> None:
    values = [None, 0, 1, 100, 127]
    frame = pl.DataFrame({"points": values}, schema={"points": getattr(pl, dtype)})
    records = [{"points": v} for v in values]
    for where in ({"points": {"gt": 200}}, {"points": {"lt": -1}}, {"points": {"gte": 100.5}},
                  {"points": {"in": [-5, 1, 300]}}, {"points": {"not": 2**64}}):  # fmt: skip
        flt = af.parse(where)
        assert polars_ids(flt, frame) == memory_ids(flt, records), where


FLOAT_VALUES = [None, math.nan, -math.inf, math.inf, -2.5, 0.0, 2.5, float(2**53), 1e300]


@pytest.mark.parametrize("literal", [2.5, 2**53 + 1, 2**53, 10**400, -(10**400), 0])
@pytest.mark.parametrize("op", ["equals", "gt", "gte", "lt", "lte", "in", "notIn"])
def test_float_column_compares_exactly_and_nan_is_false(op: str, literal: Any) -> None:
    records = [{"points": v} for v in FLOAT_VALUES]
    frame = pl.DataFrame({"points": FLOAT_VALUES}, schema={"points": pl.Float64})
    value = [literal] if op in ("in", "notIn") else literal
    for where in ({"points": {op: value}}, {"NOT": {"points": {op: value}}}):
        flt = af.parse(where)
        assert polars_ids(flt, frame) == memory_ids(flt, records), where


FOLDING = [
    "İstanbul", "i̇stanbul", "ISTANBUL", "ıi", "Straße", "STRASSE", "ΣΊΣΥΦΟΣ", "σίσυφος", "ΟΔΟΣ.",
    "Élodie", "ÉLODIE", "e\u0301", "\u00e9", "\u212a", "\u212aM", "ǅ", "\ua7cb", "\U00010d50",
    "\U00010d50Σ", "AΣ", "xİ", "XİS", "GMAİL", "ſ",
    "50%", "5_0", "a\\b", "GMAIL", None, "",
]  # fmt: skip


@pytest.mark.parametrize(
    "where",
    [
        {"city": {"contains": "i̇"}},
        {"city": {"contains": "ς"}},
        {"city": {"endsWith": "σ", "mode": "insensitive"}},
        {"city": {"equals": "σίσυφος", "mode": "insensitive"}},
        {"city": {"in": ["straße", "i̇stanbul", "odos."], "mode": "insensitive"}},
        {"city": {"equals": "\ua7cb", "mode": "insensitive"}},
        {"city": {"contains": "\U00010d50"}},
        {"city": {"contains": "GMAIL"}},
        {"city": {"contains": "k"}},
        {"city": {"contains": "KM"}},
        {"city": {"contains": "i"}},
        {"city": {"contains": "xi"}},
        {"city": {"contains": "is"}},
        {"city": {"contains": "s"}},
        {"city": {"contains": ""}},
        {"city": {"endsWith": "k", "mode": "insensitive"}},
        {"city": {"startsWith": "i", "mode": "insensitive"}},
        {"city": {"contains": "%"}},
        {"city": {"contains": "_"}},
        {"city": {"contains": "\\"}},
        {"city": {"not": {"contains": "s"}}},
        {"city": {"notIn": ["k"], "mode": "insensitive"}},
    ],
)
def test_case_folding_is_pythons_lower(where: Any) -> None:
    records = [{"city": v} for v in FOLDING]
    flt = af.parse(where)
    frame = columnar.frame_for(records, flt.schema)
    assert polars_ids(flt, frame) == memory_ids(flt, records)


def _probe_blocks() -> list[str]:
    blocks = []
    for low in range(1, 0x110000, 4096):
        high = min(low + 4096, 0x110000)
        blocks.append("".join(chr(c) for c in range(low, high) if not 0xD800 <= c <= 0xDFFF))
    return blocks


def _folding_differences(before: str, between: str, after: str) -> list[tuple[str, str, str]]:
    """(character, Python's fold, polars' fold) of each probe `before + char + sigma...`."""
    blocks = _probe_blocks()
    texts = [before + between.join(block) + after for block in blocks]
    native = pl.Series(texts).str.to_lowercase().to_list()
    found = []
    for block, text, theirs in zip(blocks, texts, native, strict=True):
        ours = text.lower()
        if ours != theirs:
            pairs = zip(block, ours.split("\0"), theirs.split("\0"), strict=True)
            found += [(char, a, b) for char, a, b in pairs if a != b]
    return found


def test_native_folding_differs_from_python_only_away_from_ascii() -> None:
    """The premise of folding natively when literals are ASCII, over every code point.

    A character alone may fold differently in polars and Python (their Unicode versions
    differ) only if neither folding holds an ASCII character; and before a capital sigma, or
    between a letter and one (the contexts of final-sigma folding), the only other difference
    allowed is a final sigma against a plain one.
    """
    alone = _folding_differences("", "\0", "")
    for char, python, native in alone:
        assert not any(c.isascii() for c in python + native), (hex(ord(char)), python, native)
    differing = {char for char, _, _ in alone}
    for probe in (("", "Σ\0", "Σ"), ("A", "Σ\0A", "Σ")):
        for char, python, native in _folding_differences(*probe):
            if char not in differing:
                assert python.replace("ς", "σ") == native.replace("ς", "σ"), hex(ord(char))


@pytest.mark.parametrize(
    ("dtype", "base"),
    [
        (pl.Datetime("us", "UTC"), datetime(2025, 1, 1, tzinfo=UTC)),
        (pl.Datetime("ms", "UTC"), datetime(2025, 1, 1, tzinfo=UTC)),
        (pl.Datetime("ns", "Europe/Paris"), datetime(2025, 1, 1, 1, tzinfo=UTC)),
        (pl.Datetime("us"), datetime(2025, 1, 1)),
        (pl.Date, date(2025, 1, 1)),
    ],
)
def test_datetime_columns_of_any_unit_or_zone_are_utc_instants(dtype: Any, base: Any) -> None:
    column = [None, base, base + timedelta(milliseconds=1), base - timedelta(days=1)]
    frame = pl.DataFrame({"createdAt": column}, schema={"createdAt": dtype})
    records = [{"createdAt": _midnight_if_date(v)} for v in column]
    for where in (
        {"createdAt": "2025-01-01T00:00:00Z"},
        {"createdAt": {"gt": "2025-01-01T00:00:00Z"}},
        {"createdAt": {"lte": "2025-01-01T01:00:00+01:00"}},
        {"createdAt": {"in": ["2024-12-31", "2025-01-01T00:00:00.001Z"]}},
        {"createdAt": {"notIn": ["2025-01-01"]}},
    ):
        flt = af.parse(where)
        assert polars_ids(flt, frame) == memory_ids(flt, records), (dtype, where)


def _midnight_if_date(value: Any) -> Any:
    """A date column means midnight UTC, as a date-only literal does."""
    if isinstance(value, date) and not isinstance(value, datetime):
        return datetime(value.year, value.month, value.day, tzinfo=UTC)
    return value


def test_aware_record_datetimes_in_any_offset_become_utc() -> None:
    paris = timezone(timedelta(hours=1))
    records = [{"createdAt": datetime(2025, 1, 1, 1, tzinfo=paris)}, {"createdAt": None}]
    flt = af.parse({"createdAt": "2025-01-01T00:00:00Z"})
    assert polars_ids(flt, columnar.frame_for(records, flt.schema)) == [0]


def test_categorical_strings_and_renamed_columns() -> None:
    frame = pl.DataFrame({"land": ["FR", "DE", None]}, schema={"land": pl.Categorical})
    flt = af.parse({"country": {"in": ["FR"]}})
    chosen = flt.select_rows(frame.with_row_index("_row"), columns={"country": "land"})
    assert chosen["_row"].to_list() == [0]


def test_lazy_in_lazy_out() -> None:
    frame = pl.DataFrame({"points": [1, 200]}).lazy()
    chosen = af.parse({"points": {"gt": 100}}).select_rows(frame)
    assert isinstance(chosen, pl.LazyFrame)
    assert chosen.collect()["points"].to_list() == [200]


def test_expression_without_dtypes_assumes_canonical_columns() -> None:
    frame = pl.DataFrame({"points": [1, 200], "email": ["A@GMAIL.com", "b@x.org"]})
    expr = af.parse({"points": {"gt": 100}, "email": {"contains": "gmail"}}).to_polars()
    assert frame.with_columns(result=expr)["result"].to_list() == [False, False]


@pytest.mark.parametrize(
    ("where", "column"),
    [
        ({"createdAt": {"gt": "2025-01-01"}}, {"createdAt": ["2025-01-02"]}),
        ({"points": {"gt": 1}}, {"points": ["2"]}),
        ({"email": "a"}, {"email": [1]}),
        ({"isVerified": True}, {"isVerified": [1]}),
    ],
)
def test_a_column_of_the_wrong_type_is_a_type_error_naming_the_field(
    where: Any, column: dict[str, list[Any]]
) -> None:
    field = next(iter(column))
    with pytest.raises(TypeError, match=f'field "{field}"'):
        af.parse(where).to_polars(pl.DataFrame(column).schema)


@given(st.lists(st.sampled_from(FOLDING[:-2]), max_size=8), st.sampled_from(FOLDING[:-2]))
def test_exact_fold_equals_python_lower(values: list[str], needle: str) -> None:
    series = pl.Series(values, dtype=pl.String)
    folded = pl.select(columnar.fold_column(pl.lit(series), ascii_only=False)).to_series()
    assert folded.to_list() == [v.lower() for v in values]
    flt = af.parse({"city": {"contains": needle}})
    records = [{"city": v} for v in values]
    assert polars_ids(flt, columnar.frame_for(records, flt.schema)) == memory_ids(flt, records)


def test_importing_the_library_does_not_import_polars() -> None:
    code = "import sys, audiencefilter as af; af.parse('{}'); print('polars' in sys.modules)"
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"
