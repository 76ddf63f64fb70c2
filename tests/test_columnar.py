"""The polars back-end: same answers as the in-memory predicate, whatever the column types.

The conformance suite runs on it through `tests/columnar_engines.py`; this file adds the
random differential test and the places where polars and Python differ by default (nulls in
`is_in`, NaN ordering, integer/float comparison, Unicode case folding, time zones), every
column type against `Filter.matches` on the values the frame holds (typed, and through the
untyped `Filter.to_polars()`), frames as `pl.read_ndjson` reads them, and `FrameError`.
"""

from __future__ import annotations

import io
import json
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
columnar = pytest.importorskip("audiencefilter.backends.frames.polars")


def memory_ids(flt: af.Filter, records: list[dict[str, Any]]) -> list[int]:
    return [i for i, record in enumerate(records) if flt.matches(record, now=NOW)]


def polars_ids(flt: af.Filter, frame: Any) -> list[int]:
    indexed = frame.with_row_index("_row")
    return flt.select_frame(indexed, now=NOW)["_row"].to_list()


@given(filters(), record_lists())
def test_random_filters_agree_with_memory(flt: af.Filter, records: list[dict[str, Any]]) -> None:
    frame = columnar.frame_for(records, flt.schema)
    assert polars_ids(flt, frame) == memory_ids(flt, records)


@given(filters(max_leaves=4), record_lists(max_size=6))
def test_random_filters_agree_on_a_lazy_streaming_frame(
    flt: af.Filter, records: list[dict[str, Any]]
) -> None:
    frame = columnar.frame_for(records, flt.schema).with_row_index("_row").lazy()
    chosen = flt.select_frame(frame, now=NOW).collect(engine="streaming")
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
def test_float_column_compares_exactly_and_nan_is_missing(op: str, literal: Any) -> None:
    records = [{"points": v} for v in FLOAT_VALUES]
    frame = pl.DataFrame({"points": FLOAT_VALUES}, schema={"points": pl.Float64})
    value = [literal] if op in ("in", "notIn") else literal
    for where in ({"points": {op: value}}, {"NOT": {"points": {op: value}}}, {"points": None}):
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
    chosen = flt.select_frame(frame.with_row_index("_row"), columns={"country": "land"})
    assert chosen["_row"].to_list() == [0]


def test_lazy_in_lazy_out() -> None:
    frame = pl.DataFrame({"points": [1, 200]}).lazy()
    chosen = af.parse({"points": {"gt": 100}}).select_frame(frame)
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


# Every column type the back-end reads gives the in-memory answer on the same values, as
# `frame.to_dicts()` hands them to Python.

NUMBER_OPS = ["equals", "gt", "gte", "lt", "lte", "in", "notIn"]


def agree_on_frame(flt: af.Filter, frame: Any) -> None:
    """The rows polars selects are those `Filter.matches` takes, through either expression."""
    records = frame.to_dicts()
    expected = memory_ids(flt, records)
    assert polars_ids(flt, frame) == expected
    untyped = frame.with_row_index("_row").filter(flt.to_polars(now=NOW))
    assert untyped["_row"].to_list() == expected


def number_filter(op: str, literal: Any) -> af.Filter:
    return af.parse({"points": {op: [literal, 7] if op in ("in", "notIn") else literal}})


@pytest.mark.parametrize("op", NUMBER_OPS)
def test_a_float32_column_does_not_round_the_literal(op: str) -> None:
    frame = pl.DataFrame({"points": [100.1, 100.0, None]}, schema={"points": pl.Float32})
    assert frame["points"][0] != 100.1  # the column holds the Float32 nearest to 100.1
    agree_on_frame(number_filter(op, 100.1), frame)


@given(
    st.lists(st.none() | st.floats(width=32), max_size=6),
    st.sampled_from(NUMBER_OPS),
    st.floats(allow_nan=False, allow_infinity=False) | st.integers(-(2**70), 2**70),
)
def test_float32_columns_agree_with_memory(values: list[Any], op: str, literal: Any) -> None:
    agree_on_frame(
        number_filter(op, literal), pl.DataFrame({"points": values}, schema={"points": pl.Float32})
    )


INTEGER_BITS = {"Int8": 8, "Int16": 16, "Int32": 32, "Int64": 64, "Int128": 128}
INTEGER_BITS |= {f"U{name}": bits for name, bits in INTEGER_BITS.items() if bits < 128}


@given(st.data(), st.sampled_from(sorted(INTEGER_BITS)), st.sampled_from(NUMBER_OPS))
def test_integer_columns_of_every_width_agree_with_memory(
    data: st.DataObject, name: str, op: str
) -> None:
    dtype = getattr(pl, name)
    bits = INTEGER_BITS[name]
    unsigned = name.startswith("U")
    low, high = (0, 2**bits - 1) if unsigned else (-(2 ** (bits - 1)), 2 ** (bits - 1) - 1)
    values = data.draw(st.lists(st.none() | st.integers(low, high), max_size=6))
    near = st.sampled_from([low, high, low - 1, high + 1, 0])
    literal = data.draw(near | st.integers(low - 3, high + 3) | st.floats(-1e40, 1e40))
    agree_on_frame(
        number_filter(op, literal), pl.DataFrame({"points": values}, schema={"points": dtype})
    )


def exact_ids(op: str, literal: Any, values: list[Any]) -> list[int]:
    """The rows whose number `op` the literal holds, in exact arithmetic (memory's rule)."""
    from fractions import Fraction

    from audiencefilter.language.fields import Op
    from audiencefilter.language.values import holds

    wanted = tuple(Fraction(v) for v in literal) if isinstance(literal, list) else Fraction(literal)
    return [i for i, v in enumerate(values) if v is not None and holds(Op(op), Fraction(v), wanted)]


@given(
    st.lists(st.none() | st.decimals(-(10**6), 10**6, places=2, allow_nan=False), max_size=6),
    st.sampled_from(NUMBER_OPS),
    st.floats(-(10**7), 10**7)
    | st.integers(-(10**7), 10**7)
    | st.sampled_from([100.1, 0.005, 10**40]),
)
def test_decimal_columns_compare_exactly(values: list[Any], op: str, literal: Any) -> None:
    frame = pl.DataFrame({"points": values}, schema={"points": pl.Decimal(10, 2)})
    value = [literal, 7] if op in ("in", "notIn") else literal
    flt = af.parse({"points": {op: value}})
    assert polars_ids(flt, frame) == exact_ids(op, value, frame["points"].to_list())


WORDS = ["", "a", "A", "ab", "Ab", "b", "ß", "aß", "İ"]


@pytest.mark.parametrize("dtype", [pl.String, pl.Categorical, pl.Enum(WORDS)])
@given(
    values=st.lists(st.sampled_from([None, *WORDS]), max_size=6),
    op=st.sampled_from(["equals", "contains", "startsWith", "endsWith", "in", "notIn"]),
    literal=st.text(alphabet="aAbßi", max_size=2),
    insensitive=st.booleans(),
)
def test_string_categorical_and_enum_columns_agree_with_memory(
    dtype: Any, values: list[Any], op: str, literal: str, insensitive: bool
) -> None:
    where: dict[str, Any] = {op: [literal] if op in ("in", "notIn") else literal}
    if insensitive:
        where["mode"] = "insensitive"
    agree_on_frame(
        af.parse({"company": where}), pl.DataFrame({"company": values}, schema={"company": dtype})
    )


def test_boolean_columns_agree_with_memory() -> None:
    frame = pl.DataFrame({"isVerified": [True, False, None]})
    for where in ({"isVerified": True}, {"isVerified": {"not": True}}, {"isVerified": False}):
        agree_on_frame(af.parse(where), frame)


ZONES = [None, "UTC", "Asia/Kolkata", "America/St_Johns"]
INSTANTS = st.datetimes(datetime(1700, 1, 1), datetime(2250, 1, 1), timezones=st.just(UTC))


@given(
    st.lists(st.none() | INSTANTS, max_size=6),
    st.sampled_from(["ms", "us", "ns"]),
    st.sampled_from(ZONES),
    st.sampled_from(NUMBER_OPS),
    INSTANTS | st.datetimes(timezones=st.just(UTC)),
)
def test_datetime_columns_of_every_unit_and_zone_agree_with_memory(
    values: list[Any], unit: str, zone: str | None, op: str, literal: datetime
) -> None:
    if unit == "ms":  # the column cannot hold microseconds: memory sees what it holds
        values = [v and v.replace(microsecond=v.microsecond // 1000 * 1000) for v in values]
    column = pl.Series("createdAt", values, dtype=pl.Datetime(unit, "UTC"))
    frame = (
        column.dt.convert_time_zone(zone).to_frame()
        if zone
        else column.dt.replace_time_zone(None).to_frame()
    )
    text = literal.isoformat()
    flt = af.parse({"createdAt": {op: [text] if op in ("in", "notIn") else text}})
    agree_on_frame(flt, frame)


@pytest.mark.parametrize(
    ("op", "expected"), [("gt", [0]), ("equals", [1]), ("lte", [1]), ("in", [1])]
)
def test_nanoseconds_are_compared_not_truncated(op: str, expected: list[int]) -> None:
    base = datetime(2025, 1, 1, tzinfo=UTC)
    frame = pl.DataFrame(
        {"createdAt": [base, base]}, schema={"createdAt": pl.Datetime("ns", "UTC")}
    )
    frame = frame.with_columns(
        pl.col("createdAt") + pl.Series([pl.duration(nanoseconds=500), pl.duration()]).first() * 0
    )
    frame = pl.DataFrame(
        {
            "createdAt": pl.Series([1_735_689_600_000_000_500, 1_735_689_600_000_000_000]).cast(
                pl.Datetime("ns", "UTC")
            )
        }
    )
    value = "2025-01-01T00:00:00Z"
    flt = af.parse({"createdAt": {op: [value] if op == "in" else value}})
    assert polars_ids(flt, frame) == expected


def test_a_column_of_nulls_only_is_unknown() -> None:
    frame = pl.DataFrame({"points": [None, None], "createdAt": [None, None], "data": [None, None]})
    assert frame.schema["points"] == pl.Null
    for where in (
        {"points": {"gt": 1}},
        {"createdAt": {"lt": "2025-01-01"}},
        {"NOT": {"points": 1}},
        {"data": {"path": ["a"], "equals": 1}},
        {"data": {"path": ["a"], "equals": None}},
    ):
        agree_on_frame(af.parse(where), frame)


# Frames as polars reads them: JSON Lines make objects Structs and leave date-times as text.

JSON_LINES = "\n".join(
    json.dumps(line)
    for line in [
        {"id": 1, "points": 150, "data": {"plan": "pro", "seats": 3, "tags": ["a"]}},
        {"id": 2, "points": 90, "data": {"plan": "free", "trial": True}},
        {"id": 3, "points": None, "data": None},
        {"id": 4, "points": 200, "data": {"plan": None, "seats": 10}},
    ]
)


@pytest.mark.parametrize(
    "where",
    [
        {"data": {"path": ["plan"], "equals": "pro"}},
        {"data": {"path": ["seats"], "gte": 3}},
        {"data": {"path": ["plan"], "equals": None}},
        {"NOT": {"data": {"path": ["trial"], "equals": True}}},
        {"data": {"path": ["tags"], "equals": "a"}},
        {"data": {"path": ["plan", "x"], "equals": None}},
    ],
)
def test_a_struct_data_column_read_from_json_lines(where: Any) -> None:
    frame = pl.read_ndjson(io.StringIO(JSON_LINES))
    assert isinstance(frame.schema["data"], pl.Struct)
    flt = af.parse(where)
    expected = [r["id"] for r in map(json.loads, JSON_LINES.splitlines()) if flt.matches(r)]
    assert frame.filter(flt.to_polars())["id"].to_list() == expected
    assert flt.select_frame(frame)["id"].to_list() == expected
    lazy = pl.scan_ndjson(io.BytesIO(JSON_LINES.encode())).filter(flt.to_polars())
    assert lazy.collect(engine="streaming")["id"].to_list() == expected


def test_an_object_data_column_holds_decoded_json() -> None:
    documents = [{"plan": "pro"}, {"plan": 1}, None]
    frame = pl.DataFrame({"data": pl.Series(documents, dtype=pl.Object)})
    flt = af.parse({"data": {"path": ["plan"], "equals": "pro"}})
    expected = [i for i, d in enumerate(documents) if flt.matches({"data": d})]
    assert polars_ids(flt, frame) == expected
    assert frame.with_row_index("_row").filter(flt.to_polars())["_row"].to_list() == expected


@pytest.mark.parametrize(
    ("where", "values", "expected", "fix"),
    [
        (
            {"createdAt": {"gt": "2025-01-01"}},
            ["2025-01-02"],
            "Datetime",
            'pl.col("createdAt").str.to_datetime(time_zone="UTC")',
        ),
        (
            {"createdAt": {"gt": "2025-01-01"}},
            [1],
            "Datetime",
            'pl.from_epoch("createdAt", time_unit="ms")',
        ),
        ({"points": {"gt": 1}}, ["2"], "Float64", 'pl.col("points").str.to_integer()'),
        ({"email": "a"}, [1], "Categorical", 'pl.col("email").cast(pl.String)'),
        ({"isVerified": True}, ["true"], "Boolean", 'pl.col("isVerified") == "true"'),
        ({"data": {"path": ["a"], "equals": 1}}, [1], "Struct", "pl.read_ndjson"),
    ],
)
def test_an_unusable_column_is_a_frame_error_naming_column_types_and_fix(
    where: Any, values: list[Any], expected: str, fix: str
) -> None:
    flt = af.parse(where)
    field = next(iter(where))
    frame = pl.DataFrame({field: values})
    found = str(frame.schema[field])
    for attempt in (
        lambda: flt.to_polars(frame.schema),
        lambda: frame.filter(flt.to_polars()),  # the type is learnt when the expression runs
        lambda: frame.lazy().filter(flt.to_polars()).collect(),
    ):
        with pytest.raises(af.RecordError) as caught:
            attempt()
        assert isinstance(caught.value, columnar.FrameError)
        message = str(caught.value)
        assert f'column "{field}" for field "{field}" is {found}' in message
        assert expected in message and fix in message


def test_a_renamed_column_is_named_in_the_error() -> None:
    frame = pl.DataFrame({"signed_up": ["2025-01-02"]})
    flt = af.parse({"createdAt": {"gt": "2025-01-01"}})
    with pytest.raises(columnar.FrameError, match='column "signed_up" for field "createdAt"'):
        flt.select_frame(frame, columns={"createdAt": "signed_up"})


def test_the_suggested_conversion_makes_a_text_column_give_the_memory_answer() -> None:
    texts = ["2025-03-10T08:00:00Z", "2025-03-10T08:00:00+09:00", "2025-03-01T00:00:00Z", None]
    records = [{"createdAt": text} for text in texts]  # memory reads ISO 8601 text itself
    frame = pl.DataFrame({"createdAt": texts})
    fixed = frame.with_columns(pl.col("createdAt").str.to_datetime(time_zone="UTC"))
    for where in ({"createdAt": {"gte": "2025-03-10"}}, {"createdAt": "2025-03-01T00:00:00Z"}):
        flt = af.parse(where)
        assert polars_ids(flt, fixed) == memory_ids(flt, records)


def test_select_frame_is_the_audience_of_a_data_or_lazy_frame() -> None:
    frame = pl.DataFrame(
        {
            "id": [1, 2, 3],
            "score": [150, 90, None],
            "createdAt": [datetime(2025, 3, 10, tzinfo=UTC), None, datetime(2024, 1, 1)],
        }
    )
    flt = af.parse({"points": {"gte": 100}, "createdAt": {"gte": {"ago": "P30D"}}})
    march = datetime(2025, 3, 31, tzinfo=UTC)
    chosen = flt.select_frame(frame, columns={"points": "score"}, now=march)
    assert isinstance(chosen, pl.DataFrame)
    assert chosen["id"].to_list() == [1]
    lazy = flt.select_frame(frame.lazy(), columns={"points": "score"}, now=march)
    assert isinstance(lazy, pl.LazyFrame)
    assert lazy.collect()["id"].to_list() == [1]
    assert flt.select_frame(
        frame, columns={"points": "score"}, now=march.replace(year=2026)
    ).is_empty()
