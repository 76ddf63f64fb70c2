"""The compiled in-memory predicate: records as mappings, date-times in every form, bad
records named, values that look like code treated as data."""

from __future__ import annotations

import json
import sqlite3
from collections import OrderedDict
from datetime import UTC, date, datetime, timedelta, timezone
from types import MappingProxyType
from zoneinfo import ZoneInfo

import pytest

import audiencefilter as af
from audiencefilter.backends.memory import fast as memory_fast
from audiencefilter.language.values import record_datetime


def test_missing_key_is_null() -> None:
    assert af.parse({"company": None}).matches({})
    assert not af.parse({"company": {"not": "x"}}).matches({})


def test_records_may_be_any_mapping() -> None:
    flt = af.parse({"points": {"gte": 10}})
    assert flt.matches(MappingProxyType({"points": 10}))
    assert flt.matches(OrderedDict(points=11))


@pytest.mark.parametrize(
    "value",
    [
        datetime(2025, 1, 1, 12),
        datetime(2025, 1, 1, 14, tzinfo=timezone(timedelta(hours=2))),
        "2025-01-01T12:00:00Z",
        "2025-01-01T12:00:00",
        "2025-01-01 13:00:00+01:00",
    ],
)
def test_record_datetimes_naive_aware_or_text(value: object) -> None:
    flt = af.parse({"createdAt": "2025-01-01T12:00:00Z"})
    assert flt.matches({"createdAt": value})


def test_date_only_record_is_midnight_utc() -> None:
    assert af.parse({"createdAt": {"lt": "2025-01-01T00:00:01Z"}}).matches(
        {"createdAt": "2025-01-01"}
    )


def test_wrong_record_type_raises_record_error_naming_the_field() -> None:
    flt = af.parse({"email": "a", "points": {"gt": 1}})
    with pytest.raises(af.RecordError, match='field "points" holds str'):
        flt.matches({"email": "a", "points": "2"})
    with pytest.raises(af.RecordError, match="createdAt"):
        af.parse({"createdAt": {"gt": "2025-01-01"}}).matches({"createdAt": "soon"})
    with pytest.raises(af.RecordError, match="must be a mapping"):
        flt.matches(["not", "a", "mapping"])  # type: ignore[arg-type]


def test_record_error_is_a_type_error() -> None:
    assert issubclass(af.RecordError, TypeError)


@pytest.mark.parametrize(
    "hostile",
    ['"); import os; os._exit(1); ("', "__import__('os')", "\\x00", "{0.__class__}", "%s%s%s"],
)
def test_code_like_values_are_data(hostile: str) -> None:
    flt = af.parse({"email": {"in": [hostile]}, "city": {"contains": hostile}})
    assert flt.matches({"email": hostile, "city": "x" + hostile.upper() + "y"})
    assert not flt.matches({"email": hostile + " ", "city": hostile})


def test_select_keeps_order_and_is_lazy() -> None:
    rows = [{"id": i, "points": i} for i in range(10)]
    chosen = af.select(af.parse({"points": {"in": [7, 2, 5]}}), iter(rows))
    assert next(chosen)["id"] == 2
    assert [r["id"] for r in chosen] == [5, 7]


def test_compile_is_built_once_per_filter() -> None:
    flt = af.parse({"points": 1})
    assert af.compile(flt) is af.compile(flt)


def test_compiled_function_binds_non_literal_values_as_names() -> None:
    predicate = af.compile(af.parse({"createdAt": {"in": ["2025-01-01"]}, "email": "a"}))
    names = predicate.__code__.co_names
    assert "get" in names
    assert any(name.startswith("_k") for name in names)
    assert "a" in predicate.__code__.co_consts


def test_big_and_wide_filters_compile() -> None:
    wide = af.parse({"OR": [{"points": i} for i in range(200)]})
    assert wide.matches({"points": 199}) and not wide.matches({"points": 200})
    where: dict[str, object] = {"points": 5}
    for _ in range(30):
        where = {"NOT": {"NOT": where}}
    assert af.parse(where, limits=af.Limits(max_depth=64)).matches({"points": 5})
    big_in = af.parse({"email": {"in": [f"u{i}@x.org" for i in range(5000)]}})
    assert big_in.matches({"email": "u4999@x.org"})


PARIS = ZoneInfo("Europe/Paris")
# 2025-10-26 02:30 happens twice in Paris: fold=1 is the second time, 01:30 UTC. 2025-03-30 02:30
# never happens (a gap): Python reads it with the offset before the change, also 01:30 UTC.
FOLD = datetime(2025, 10, 26, 2, 30, fold=1, tzinfo=PARIS)
GAP = datetime(2025, 3, 30, 2, 30, tzinfo=PARIS)


@pytest.mark.parametrize(
    ("value", "instant"),
    [(FOLD, "2025-10-26T01:30:00Z"), (GAP, "2025-03-30T01:30:00Z")],
)
def test_equality_and_in_compare_instants_across_daylight_saving(
    value: datetime, instant: str
) -> None:
    # Python's `==` between zones is False for a fold=1 or gap time (PEP 495), and its hash is
    # the fold=0 one: the instant, as the SQL engines store it, is what counts.
    for where in (
        {"createdAt": {"equals": instant}},
        {"createdAt": {"in": [instant, "2020-01-01"]}},
        {"NOT": {"createdAt": {"notIn": [instant]}}},
    ):
        flt = af.parse(where)
        assert flt.matches({"createdAt": value}), where
        assert flt.explain({"createdAt": value}).matched, where
    assert not af.parse({"createdAt": {"not": instant}}).matches({"createdAt": value})


@pytest.mark.parametrize(
    ("data", "path"),
    [({1: "x"}, "1"), ({True: "x"}, "true"), ({None: "x"}, "null"), ({1.5: "x"}, "1.5")],
)
def test_non_string_keys_are_read_as_json_stores_them(data: dict[object, str], path: str) -> None:
    flt = af.parse({"data": {"path": [path], "equals": "x"}})
    assert flt.matches({"data": data})
    # The SQL engines receive `json.dumps(data)`, and agree.
    connection = sqlite3.connect(":memory:")
    connection.execute("CREATE TABLE t (data TEXT)")
    connection.execute("INSERT INTO t VALUES (?)", [json.dumps(data)])
    assert connection.execute(f"SELECT count(*) FROM t WHERE {flt.to_sql('sqlite')}").fetchone()[0]
    connection.close()
    assert not af.parse({"data": {"path": ["2"], "equals": "x"}}).matches({"data": data})


NAN = float("nan")
SPELT_ALIKE = [("1", 1), ("true", True), ("null", None), ("1.5", 1.5), ("0", 0), ("NaN", NAN)]
"""A JSON key and a non-string key `json.dumps` writes as it: an object holding both has its key
twice in its JSON text, which SQLite and DuckDB read as the first, PostgreSQL's `jsonb` and
Python's `json` as the last."""


@pytest.mark.parametrize("fast", [True, False], ids=["fast", "plain"])
@pytest.mark.parametrize("depth", [1, 2])
@pytest.mark.parametrize("string_first", [True, False])
@pytest.mark.parametrize(("key", "other"), SPELT_ALIKE, ids=[k for k, _ in SPELT_ALIKE])
def test_two_keys_written_alike_in_json_are_refused_not_read_one_way(
    key: str, other: object, string_first: bool, depth: int, fast: bool
) -> None:
    """An object holding two keys written alike (`"0"` and `0`, two NaNs) has no one reading:
    a path through that key raises `RecordError` naming both, on every operator and under
    `NOT`, in a set and in an explanation, at any depth; the same object read through another
    key, and either key alone, answer as before."""
    pair: list[tuple[object, object]] = [(key, "x"), (other, False)]
    if key == "NaN":
        pair = [(NAN, "x"), (float("nan"), False)]
    inner = dict(pair if string_first else pair[::-1])
    inner["plain"] = "y"
    data: dict[object, object] = inner if depth == 1 else {"a": inner}
    path = [key] if depth == 1 else ["a", key]
    switch = memory_fast.ENABLED
    memory_fast.ENABLED = fast
    try:
        for where in (
            {"data": {"path": path, "equals": "x"}},
            {"NOT": {"data": {"path": path, "equals": False}}},
            {"data": {"path": path, "not": None}},
            {"OR": [{"points": 1}, {"data": {"path": path, "string_contains": "x"}}]},
        ):
            flt = af.parse(where)
            with pytest.raises(af.RecordError, match="written") as found:
                flt.matches({"points": 2, "data": data})
            assert "x" not in str(found.value).split("keys ")[0]  # no value shown, the keys are
            with pytest.raises(af.RecordError, match="written"):
                af.FilterSet([af.parse({"points": 3}), flt]).matching({"points": 2, "data": data})
            with pytest.raises(af.RecordError, match="written"):
                flt.explain({"points": 2, "data": data})
        beside = af.parse({"data": {"path": [*path[:-1], "plain"], "equals": "y"}})
        assert beside.matches({"data": data})
        for alone in ({key: "x"}, {other: "x"} if key != "NaN" else {NAN: "x"}):
            one = alone if depth == 1 else {"a": alone}
            assert af.parse({"data": {"path": path, "equals": "x"}}).matches({"data": one})
    finally:
        memory_fast.ENABLED = switch


@pytest.mark.parametrize("string_first", [True, False])
@pytest.mark.parametrize(("key", "other"), SPELT_ALIKE[:-1], ids=[k for k, _ in SPELT_ALIKE[:-1]])
def test_a_frame_refuses_a_document_with_two_keys_written_alike(
    key: str, other: object, string_first: bool
) -> None:
    """A frame's JSON column is the documents' JSON text: a document holding two keys written
    alike, at any depth, has none, and is a `RecordError` naming the field when the frame is
    made (from records for polars, from a pandas object column), where it would otherwise hold
    the key twice and be read one way without a word."""
    pd = pytest.importorskip("pandas")
    from audiencefilter.backends.frames.polars import frame_for

    pair = [(key, "x"), (other, False)]
    inner = dict(pair if string_first else pair[::-1])
    flt = af.parse({"data": {"path": ["a", "b"], "equals": "y"}})
    for document in (inner, {"a": {"b": "y"}, "list": [1, inner]}):
        with pytest.raises(af.RecordError, match='field "data".*written'):
            frame_for([{"data": document}], flt.schema)
        with pytest.raises(af.RecordError, match='"data".*written'):
            flt.frame_mask(pd.DataFrame({"data": [{"a": {"b": "y"}}, document]}))
    single = {"a": {"b": "y"}, key: 1}
    assert flt.frame_mask(pd.DataFrame({"data": [single]})).tolist() == [True]
    # A polars column of Python objects is read by the path, as `matches` reads it.
    pl = pytest.importorskip("polars")
    through = af.parse({"data": {"path": [key], "equals": "x"}})
    objects = pl.DataFrame({"data": pl.Series([{key: "x"}, inner], dtype=pl.Object)})
    with pytest.raises(af.RecordError, match='field "data".*written'):
        objects.filter(through.to_polars())
    assert objects.head(1).filter(through.to_polars()).height == 1


@pytest.mark.parametrize(
    ("where", "record", "field"),
    [
        ({"points": 1}, {"points": True}, "points"),
        ({"points": {"in": [1, 2]}}, {"points": "1"}, "points"),
        ({"points": {"notIn": [1, 2]}}, {"points": "1"}, "points"),
        ({"points": {"gt": 0}}, {"points": True}, "points"),
        ({"points": {"not": 5}}, {"points": "5"}, "points"),
        ({"country": "FR"}, {"country": 1}, "country"),
        ({"country": {"in": ["FR", "DE"]}}, {"country": 1}, "country"),
        ({"country": {"notIn": ["FR"]}}, {"country": 1}, "country"),
        ({"country": {"equals": "fr", "mode": "insensitive"}}, {"country": b"FR"}, "country"),
        ({"isVerified": True}, {"isVerified": 1}, "isVerified"),
        ({"isVerified": True}, {"isVerified": "yes"}, "isVerified"),
        ({"isVerified": False}, {"isVerified": 0}, "isVerified"),
        ({"OR": [{"points": 1}, {"points": {"gt": 5}}]}, {"points": "1"}, "points"),
        ({"points": {"gte": 1, "lt": 9}}, {"points": "3"}, "points"),
    ],
)
def test_a_wrong_typed_value_is_a_record_error_not_a_quiet_answer(
    where: dict[str, object], record: dict[str, object], field: str
) -> None:
    flt = af.parse(where)
    with pytest.raises(af.RecordError, match=f'field "{field}"'):
        flt.matches(record)
    with pytest.raises(af.RecordError, match=f'field "{field}"'):
        flt.explain(record)


def test_right_typed_values_of_every_kind_still_compare() -> None:
    from decimal import Decimal

    class Name(str):
        pass

    assert af.parse({"points": {"gt": 1}}).matches({"points": 1.5})
    assert af.parse({"points": {"in": [2]}}).matches({"points": Decimal(2)})
    assert not af.parse({"country": "FR"}).matches({"country": Name("DE")})
    assert af.parse({"country": {"in": ["FR"]}}).matches({"country": Name("FR")})
    assert not af.parse({"isVerified": True}).matches({"isVerified": None})
    assert af.parse({"isVerified": False}).matches({"isVerified": False})
    assert af.parse({"company": None}).matches({"company": None})
    assert af.parse({"company": {"not": None}}).matches({"company": 5})  # a null test reads no type


class _Stamp(datetime):
    """A datetime subclass, as some data libraries hand out."""


_ORDERED = [
    datetime(2025, 1, 1, 12, tzinfo=UTC),
    datetime(2025, 1, 1, 13, tzinfo=timezone(timedelta(hours=2))),
    datetime(2025, 1, 1, 12),
    _Stamp(2025, 1, 1, 12, tzinfo=timezone(timedelta(hours=-1))),
    _Stamp(2025, 1, 1, 11),
    "2025-01-01T12:00:00Z",
    "2025-01-01T11:00:00",
    "2025-01-01",
    None,
]


@pytest.mark.parametrize("value", _ORDERED, ids=repr)
@pytest.mark.parametrize("op", ["gt", "gte", "lt", "lte"])
def test_datetime_ordering_fast_path_answers_as_normalized_instants(op: str, value: object) -> None:
    # The compiled function compares a record's datetime as it comes; whatever it cannot
    # compare (naive, text) goes through the normalizing version: the answers are those of
    # the UTC instants.
    since = datetime(2025, 1, 1, 12, tzinfo=UTC)
    flt = af.parse({"createdAt": {op: "2025-01-01T12:00:00Z"}})
    if value is None:
        assert not flt.matches({"createdAt": value})
        return
    instant = record_datetime(value)
    expected = {
        "gt": instant > since,
        "gte": instant >= since,
        "lt": instant < since,
        "lte": instant <= since,
    }[op]
    assert flt.matches({"createdAt": value}) is expected


@pytest.mark.parametrize("value", [date(2025, 1, 1), 20250101, True, "soon"], ids=repr)
def test_datetime_ordering_of_a_wrong_type_raises_record_error(value: object) -> None:
    flt = af.parse({"createdAt": {"gte": "2025-01-01T00:00:00Z"}})
    with pytest.raises(af.RecordError, match="createdAt"):
        flt.matches({"createdAt": value})
