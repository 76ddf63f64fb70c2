"""The pandas back-end (`frames/narwhals.py`): the in-memory answers on pandas and pyarrow frames.

The conformance suite runs on it through `tests/pandas_engines.py` (frames built by
`pandas_frame_for`); this file adds random filters against `Filter.matches`, and frames as a
pandas user builds them by hand: NumPy dtypes with NaN for a missing value, categoricals, zoned
and naive datetime64 columns, decoded JSON documents and relations as lists of dicts in object
columns, an index of its own, a pyarrow Table, and the errors for a lazy frame or a column of
the wrong type.
"""

from __future__ import annotations

import subprocess
import sys
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import pytest
from hypothesis import given

import audiencefilter as af
from audiencefilter.testing.strategies import NOW, filters, record_lists

pd = pytest.importorskip("pandas")
pytest.importorskip("narwhals")
frames = pytest.importorskip("audiencefilter.backends.frames.narwhals")


def memory_ids(flt: af.Filter, records: list[dict[str, Any]]) -> list[int]:
    return [i for i, record in enumerate(records) if flt.matches(record, now=NOW)]


def pandas_ids(flt: af.Filter, frame: Any) -> list[int]:
    """The positions of the rows `select_frame` keeps, read from the index it keeps."""
    indexed = frame.set_axis(range(len(frame)))
    return [int(i) for i in flt.select_frame(indexed, now=NOW).index]


@pytest.mark.parametrize("backend", ["numpy", "pyarrow"])
@given(flt=filters(max_leaves=5), records=record_lists(max_size=6))
def test_random_filters_agree_with_memory(
    backend: str, flt: af.Filter, records: list[dict[str, Any]]
) -> None:
    frame = frames.pandas_frame_for(records, flt.schema, dtype_backend=backend)
    assert pandas_ids(flt, frame) == memory_ids(flt, records)


def user_frame() -> Any:
    """A frame of pandas' default dtypes, as `pd.DataFrame` makes it from Python values."""
    return pd.DataFrame(
        {
            "email": ["ANNA@X.COM", None, "straße@x.com", "ΟΔΟΣ@x.com"],
            "points": [2**53 + 1, 2**53, 5, -1],  # int64: exact
            "referrals": [1.5, float("nan"), 3.0, None],  # float64: NaN is missing
            "isVerified": [True, False, True, False],
            "country": pd.Categorical(["FR", "DE", None, "FR"]),
            "createdAt": pd.to_datetime(
                ["2025-01-01T00:00:00Z", "2025-06-01T12:00:00+02:00", None, "2024-12-31T23:00:00Z"],
                utc=True,
            ),
        },
        index=["a", "b", "c", "d"],
    )


def test_a_user_frame_keeps_its_index_and_dtypes() -> None:
    frame = user_frame()
    chosen = af.parse({"points": {"gt": 2**53}}).select_frame(frame)
    assert list(chosen.index) == ["a"]  # 2**53 + 1 is not rounded to 2**53
    assert chosen.dtypes.equals(frame.dtypes)


@pytest.mark.parametrize(
    "where",
    [
        {"NOT": {"referrals": {"gt": 2}}},  # NaN is missing: UNKNOWN, and so is its negation
        {"referrals": {"lte": 1.5}},
        {"NOT": {"email": {"contains": "x.com"}}},
        {"email": {"equals": "straße@x.com", "mode": "insensitive"}},
        {"email": {"startsWith": "οδος", "mode": "insensitive"}},  # a final sigma, folded
        {"email": {"in": ["anna@x.com"], "mode": "insensitive"}},
        {"country": {"notIn": ["DE"]}},
        {"isVerified": False},
        {"createdAt": {"gte": "2025-01-01T00:00:00Z"}},
        {"NOT": {"createdAt": {"lt": "2025-01-01T00:00:00+01:00"}}},
        {"points": {"in": [2**53, 5.0]}},
        {"points": {"gt": 2.5}},
    ],
)
def test_user_frames_give_the_memory_answers(where: Any) -> None:
    frame = user_frame()
    flt = af.parse(where)
    records = [
        {str(k): None if pd.isna(v) else v for k, v in row.items()}
        for row in frame.to_dict(orient="records")
    ]
    expected = [frame.index[i] for i in memory_ids(flt, records)]
    assert list(flt.select_frame(frame, now=NOW).index) == expected
    assert list(frame.index[flt.frame_mask(frame, now=NOW)]) == expected


def test_decoded_json_documents_keep_their_own_types() -> None:
    documents = [{"plan": "pro"}, {"plan": 3}, None, float("nan"), {"plan": [1, 2**60 + 1]}]
    frame = pd.DataFrame({"data": pd.Series(documents, dtype=object)})
    for where in (
        {"data": {"path": ["plan"], "equals": "pro"}},
        {"data": {"path": ["plan"], "gt": 2}},
        {"data": {"path": ["plan"], "array_contains": 2**60 + 1}},
        {"data": {"path": ["plan"], "equals": None}},
    ):
        flt = af.parse(where)
        records = [{"data": None if d is not d or d is None else d} for d in documents]
        assert pandas_ids(flt, frame) == memory_ids(flt, records), where


def test_relations_as_lists_of_dicts() -> None:
    actions = [
        [{"name": "open", "increase": 2, "createdAt": datetime(2025, 1, 1, tzinfo=UTC)}],
        [{"name": "open", "increase": 3}, {"name": "click", "increase": 4}],
        [],
        None,
    ]
    frame = pd.DataFrame({"actions": pd.Series(actions, dtype=object)})
    records = [{"actions": a} for a in actions]
    for where in (
        {"actions": {"some": {"name": "click"}}},
        {"actions": {"every": {"increase": {"gte": 3}}}},
        {"actions": {"none": {"name": "open"}}},
    ):
        flt = af.parse(where)
        assert pandas_ids(flt, frame) == memory_ids(flt, records), where
    flt = af.parse_text("sum(actions.increase) >= 5")
    assert pandas_ids(flt, frame) == memory_ids(flt, records) == [1]


def test_dates_in_an_object_column_and_naive_datetimes_as_utc() -> None:
    schema = af.Schema.from_mapping({"birthday": "date", "seen": "datetime"})
    frame = pd.DataFrame(
        {
            "birthday": pd.Series([date(1990, 5, 1), None, date(2000, 1, 1)], dtype=object),
            "seen": pd.to_datetime(["2025-01-01 10:00", None, "2025-01-02 00:00"]),  # naive
        }
    )
    records: list[dict[str, Any]] = [
        {"birthday": date(1990, 5, 1), "seen": datetime(2025, 1, 1, 10, tzinfo=UTC)},
        {"birthday": None, "seen": None},
        {"birthday": date(2000, 1, 1), "seen": datetime(2025, 1, 2, tzinfo=UTC)},
    ]
    wheres: list[dict[str, Any]] = [
        {"birthday": {"lt": "1995-01-01"}},
        {"NOT": {"birthday": {"gte": "1995-01-01"}}},
        {"seen": {"gt": "2025-01-01T09:00:00Z"}},
        {"seen": {"lt": "2025-01-02T00:00:00+00:00"}},
    ]
    for where in wheres:
        flt = af.parse(where, schema)
        assert pandas_ids(flt, frame) == memory_ids(flt, records), where


def test_a_pyarrow_table_comes_back_a_pyarrow_table() -> None:
    pa = pytest.importorskip("pyarrow")
    table = pa.table({"id": ["a", "b", "c"], "points": pa.array([2**63 - 1, None, 0])})
    chosen = af.parse({"NOT": {"points": {"lt": 2**63 - 1}}}).select_frame(table)
    assert isinstance(chosen, pa.Table)
    assert chosen.column("id").to_pylist() == ["a"]
    mask = af.parse({"NOT": {"points": {"lt": 2**63 - 1}}}).frame_mask(table)
    assert mask.to_pylist() == [True, False, False]  # UNKNOWN is FALSE in a mask


def test_a_renamed_relation_column() -> None:
    frame = pd.DataFrame({"events": pd.Series([[{"name": "open"}], [], None], dtype=object)})
    flt = af.parse({"actions": {"some": {"name": "open"}}})
    assert list(flt.select_frame(frame, columns={"actions": "events"}).index) == [0]


def test_a_constant_filter_reads_no_column() -> None:
    frame = pd.DataFrame({"other": [1, 2, 3]})
    assert len(af.parse({}).select_frame(frame)) == 3
    assert len(af.parse({"OR": []}).select_frame(frame)) == 0


def test_a_lazy_frame_is_refused_naming_what_runs_instead() -> None:
    duckdb = pytest.importorskip("duckdb")
    relation = duckdb.sql("select 1 as points")
    with pytest.raises(TypeError, match=r'to_sql\(dialect="duckdb"\)'):
        af.parse({"points": 1}).select_frame(relation)


@pytest.mark.parametrize(
    ("where", "values", "fix"),
    [
        ({"points": {"gt": 2}}, ["2", "3"], 'pd.to_numeric(frame["points"])'),
        (
            {"createdAt": {"gt": "2025-01-01T00:00:00Z"}},
            ["2025-01-02T00:00:00Z", "2024-12-31T00:00:00+01:00"],
            'pd.to_datetime(frame["createdAt"], utc=True)',
        ),
        ({"isVerified": True}, ["true", "false"], 'frame["isVerified"] == "true"'),
        ({"email": {"contains": "1"}}, [1, 2], 'frame["email"].astype("string")'),
    ],
)
def test_a_column_of_the_wrong_type_is_a_frame_error_advising_pandas_code(
    where: Any, values: list[Any], fix: str
) -> None:
    field = next(iter(where))
    frame = pd.DataFrame({field: values})
    flt = af.parse(where)
    with pytest.raises(af.FrameError, match=f'column "{field}" for field "{field}"') as caught:
        flt.select_frame(frame)
    advice = str(caught.value)
    assert advice.endswith(f'Convert it first, e.g. frame["{field}"] = {fix}')
    exec(advice.rsplit("e.g. ", 1)[1], {"pd": pd, "frame": frame})  # the advice, as written
    records = [{field: v} for v in frame[field].tolist()]
    assert pandas_ids(flt, frame) == memory_ids(flt, records)


def test_a_missing_column_is_a_frame_error() -> None:
    frame = pd.DataFrame({"email": ["a"]})
    with pytest.raises(af.FrameError, match="points"):
        af.parse({"points": {"gt": 2}}).select_frame(frame)


def test_renamed_columns() -> None:
    frame = pd.DataFrame({"pts": [1, 5], "doc": ['{"plan": "pro"}', None]})
    flt = af.parse({"points": {"gt": 2}, "data": {"path": ["plan"], "equals": "pro"}})
    assert len(flt.select_frame(frame, columns={"points": "pts", "data": "doc"})) == 0
    flt = af.parse({"OR": [{"points": {"gt": 2}}, {"data": {"path": ["plan"], "equals": "pro"}}]})
    assert len(flt.select_frame(frame, columns={"points": "pts", "data": "doc"})) == 2


def test_importing_the_library_does_not_import_pandas_or_narwhals() -> None:
    code = (
        "import sys, audiencefilter as af; af.parse('{}'); "
        "print('pandas' in sys.modules or 'narwhals' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


def test_object_list_columns_are_read_exactly() -> None:
    schema = af.Schema.from_mapping({"scores": "number[]", "tags": "string[]"})
    frame = pd.DataFrame(
        {
            "scores": pd.Series([[2**53 + 1, 2], [], None, [3, None]], dtype=object),
            "tags": pd.Series([["a"], None, [], ["b", None]], dtype=object),
        }
    )
    records = [{k: v for k, v in row.items()} for row in frame.to_dict(orient="records")]
    for where in (
        {"scores": {"has": 2**53 + 1}},
        {"NOT": {"scores": {"has": 2**53}}},
        {"scores": {"isEmpty": True}},
        {"tags": {"hasSome": ["b", "c"]}},
    ):
        flt = af.parse(where, schema)
        assert pandas_ids(flt, frame) == memory_ids(flt, records), where


def test_an_integer_no_double_holds_beside_fractions_is_a_frame_error() -> None:
    frame = pd.DataFrame({"points": pd.Series([2**53 + 1, 2.5], dtype=object)})
    with pytest.raises(af.FrameError, match="points"):
        af.parse({"points": {"gt": 2}}).select_frame(frame)
    schema = af.Schema.from_mapping({"scores": "number[]"})
    frame = pd.DataFrame({"scores": pd.Series([[2**53 + 1, 2.5]], dtype=object)})
    with pytest.raises(af.FrameError, match="scores"):
        af.parse({"scores": {"has": 1}}, schema).select_frame(frame)


@pytest.mark.parametrize(
    ("where", "column"),
    [
        ({"points": {"gt": 2**53}}, pd.array([2**53 + 1, None, 2**53], dtype="Int64")),
        ({"points": {"gte": 1.5}}, pd.Series([2, None, 1], dtype=object)),
        ({"points": {"lt": 2}}, pd.array([1, 2, None], dtype="UInt8")),
        ({"points": {"gt": 2.5}}, pd.Series([Decimal("2.50"), None, Decimal("2.51")])),
        ({"isVerified": False}, pd.array([False, None, True], dtype="boolean")),
        ({"isVerified": True}, pd.Series([True, None, False], dtype=object)),
        ({"country": {"in": ["FR"]}}, pd.array(["FR", None, "DE"], dtype="string[pyarrow]")),
        ({"NOT": {"country": "DE"}}, pd.Categorical(["FR", None, "DE"])),
        ({"country": {"gt": "E"}}, pd.Series(["FR", None, "DE"], dtype=object)),
    ],
)
def test_pandas_column_dtypes(where: Any, column: Any) -> None:
    field = next(iter(where["NOT"] if "NOT" in where else where))
    frame = pd.DataFrame({field: column})
    flt = af.parse(where)
    records = [{field: None if pd.isna(v) else v} for v in frame[field].tolist()]
    assert pandas_ids(flt, frame) == memory_ids(flt, records)


def test_json_inside_related_rows_as_text_or_decoded() -> None:
    schema = af.Schema.of(id="string").with_relations(
        af.Relation("orders", af.Schema.of(total="number", data="json"))
    )
    decoded = [[{"total": 1, "data": {"k": 0}}], [{"total": 2, "data": {"k": "x"}}], None]
    text = [
        [{"total": 1, "data": '{"k": 0}'}],
        [{"total": 2, "data": '{"k": "x"}'}],
        None,
    ]
    records = [{"orders": rows} for rows in decoded]
    for where in (
        {"orders": {"some": {"NOT": {"data": {"path": ["k"], "equals": 1}}}}},
        {"orders": {"some": {"data": {"path": ["k"], "equals": "x"}}}},
    ):
        flt = af.parse(where, schema)
        for cells in (decoded, text):
            frame = pd.DataFrame({"orders": pd.Series(cells, dtype=object)})
            assert pandas_ids(flt, frame) == memory_ids(flt, records), (where, cells)


def test_fields_declared_inside_a_json_column() -> None:
    schema = af.Schema.from_mapping(
        {"plan": ("string", ["data", "plan"]), "seats": ("number", ["data", "seats"])}
    )
    documents = [{"plan": "pro", "seats": 2**53 + 1}, {"plan": "free"}, None, {"plan": "PRO"}]
    cells = [*documents[:3], '{"plan": "PRO"}']  # decoded documents beside JSON text
    frame = pd.DataFrame({"data": pd.Series(cells, dtype=object)})
    records = [{"data": d} for d in documents]
    for where in (
        {"plan": "pro"},
        {"plan": {"equals": "pro", "mode": "insensitive"}},
        {"seats": {"gt": 2**53}},
        {"NOT": {"seats": {"gt": 2}}},
    ):
        flt = af.parse(where, schema)
        assert pandas_ids(flt, frame) == memory_ids(flt, records), where
