"""Every list operator on every list type in every placement, on every engine.

A list field lives in a column, inside JSON (`("number[]", ("data", "v"))`), or in either form
inside a related row. Each operator (`has`, `hasSome`, `hasEvery`, `isEmpty`, `equals`, `not`
of a list, the null tests, `blank`, `mode: "insensitive"`) is either answered as
docs/semantics-relations.md and docs/semantics-json.md say ("Lists", "Typed fields inside
JSON") on every engine, or refused with a `FilterError` by the JSON and the text readers alike.
The answer is checked against a small
oracle written here from the docs, on records holding no key, null, `[]`, `[x]`, `[x, y]`, a
null item and, inside JSON, another JSON type (text, an object) or items of another type.

`scores is empty` on a list kept inside JSON was once read as TRUE for `[1, 2]` (lowering read
it as `array_contains: []`), then refused; it is now the array's own test of no items, on every
engine: TRUE for `[]`, FALSE for an array with items (a null item is one), UNKNOWN where the
path holds no array (a missing key, JSON null, another JSON type), as a null list field is.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

import pytest
from sqlalchemy import Column, String, Table, inspect, select

import audiencefilter as af
from audiencefilter.language.fields import ListOp
from tests.engines import ENGINES, Engine, engine_params, selector
from tests.sql_engines import Database, _column_type, _row, database_params, open_database

MISSING: Any = object()
"""A record without the key."""


@dataclass(frozen=True)
class Kind:
    """A list type and its sample items: two of its type, one of another JSON type, and how
    the text syntax writes an item."""

    type: str
    x: Any
    y: Any
    other: Any
    text: Callable[[Any], str]


def _quoted(value: Any) -> str:
    return f'"{value}"'


KINDS = {
    "string[]": Kind("string[]", "a", "b", 1, _quoted),
    "number[]": Kind("number[]", 1, 2.5, "1", str),
    "boolean[]": Kind("boolean[]", True, False, 1, lambda v: str(v).lower()),
    "date[]": Kind("date[]", "2020-01-02", "2021-03-04", 20200102, str),
}
PLACEMENTS = ("column", "json")


@dataclass(frozen=True)
class Case:
    """One condition on `v`: its where clause and text, and how the docs answer it on a
    present list (`answer(items)`), None for the null tests, which read no items."""

    name: str
    where: Any
    text: str
    answer: Callable[[list[Any]], bool] | None
    in_json: bool = True
    """Whether a list kept inside JSON takes it (`Field.list_operators`, `takes_mode`)."""
    strings_only: bool = False


def _same(item: Any, literal: Any) -> bool:
    """An item equals a literal of its own JSON type (`1` is `1.0`, `true` no number);
    a null item equals nothing."""
    if item is None or isinstance(item, bool) != isinstance(literal, bool):
        return False
    if isinstance(item, str) != isinstance(literal, str):
        return False
    return bool(item == literal)


def _has(items: list[Any], literal: Any) -> bool:
    return any(_same(item, literal) for item in items)


def _cases(kind: Kind) -> list[Case]:
    x, y, t = kind.x, kind.y, kind.text
    both = f"[{t(x)}, {t(y)}]"
    cases = [
        Case("has", {"has": x}, f"v has {t(x)}", lambda i: _has(i, x)),
        Case(
            "hasSome", {"hasSome": [x, y]}, f"v has some {both}", lambda i: _has(i, x) or _has(i, y)
        ),
        Case("hasSome-none", {"hasSome": []}, "v has some []", lambda i: False),
        Case(
            "hasEvery",
            {"hasEvery": [x, y]},
            f"v has every {both}",
            lambda i: _has(i, x) and _has(i, y),
        ),
        Case("hasEvery-none", {"hasEvery": []}, "v has every []", lambda i: True),
        Case("isEmpty", {"isEmpty": True}, "v is empty", lambda i: not i),
        Case("notEmpty", {"isEmpty": False}, "v is not empty", lambda i: bool(i)),
        Case("not-isEmpty", {"not": {"isEmpty": True}}, "not (v is empty)", lambda i: bool(i)),
        Case(
            "equals",
            [x, y],
            f"v = {both}",
            lambda i: len(i) == 2 and _same(i[0], x) and _same(i[1], y),
            in_json=False,
        ),
        Case("equals-none", {"equals": []}, "v = []", lambda i: not i, in_json=False),
        Case(
            "not-equals",
            {"not": [x]},
            f"v != [{t(x)}]",
            lambda i: not (len(i) == 1 and _same(i[0], x)),
            in_json=False,
        ),
        Case("null", None, "v is null", None),
        Case("not-null", {"not": None}, "v is not null", None),
    ]
    if kind.type == "string[]":
        cases.append(
            Case(
                "has-insensitive",
                {"has": "A", "mode": "insensitive"},
                'v has "A" ignoring case',
                lambda i: any(isinstance(v, str) and v.lower() == "a" for v in i),
                in_json=False,
            )
        )
    return cases


def _values(kind: Kind, placement: str) -> list[Any]:
    """The values of `v` the records hold; inside JSON also what a column cannot hold."""
    values = [MISSING, None, [], [kind.x], [kind.x, kind.y], [None, kind.x]]
    if placement == "json":
        values += [str(kind.x), {"v": kind.x}, [kind.other]]
    return values


def _truth(case: Case, value: Any) -> bool | None:
    """The docs' answer for `case` on a record holding `value` (MISSING: no key)."""
    absent = value is MISSING or value is None
    if case.answer is None:
        return absent if case.name == "null" else not absent
    if absent:
        return None  # a null list is UNKNOWN for every operator
    if not isinstance(value, list):
        return None  # another JSON type at the path: UNKNOWN, as for `array_contains`
    return case.answer(value)


def _schema(kind: Kind, placement: str) -> af.Schema:
    spec: af.FieldSpec = (kind.type, ("data", "v")) if placement == "json" else kind.type
    return af.Schema.of(data="json", v=spec)


def _record(index: int, value: Any, placement: str) -> dict[str, Any]:
    record: dict[str, Any] = {"id": f"r{index}", "data": {}}
    if value is MISSING:
        return record
    if placement == "json":
        record["data"] = {"v": value}
    else:
        record["v"] = value
    return record


def _records(kind: Kind, placement: str) -> list[dict[str, Any]]:
    records = [_record(i, v, placement) for i, v in enumerate(_values(kind, placement))]
    if placement == "json":
        records.append({"id": "null-document", "data": None})
    return records


def _value_of(record: dict[str, Any], placement: str) -> Any:
    if placement == "column":
        return record.get("v", MISSING)
    document = record.get("data")
    return MISSING if document is None else document.get("v", MISSING)


PLACED = [
    pytest.param(KINDS[k], placement, id=f"{k}-{placement}")
    for placement in PLACEMENTS
    for k in KINDS
    if placement == "column" or k != "date[]"  # a list of dates is not declared inside JSON
]
"""Each list type in each placement that declares it."""


def _expected(
    case: Case, records: list[dict[str, Any]], read: Callable[[dict[str, Any]], Any]
) -> tuple[set[str], set[str]]:
    """The ids where `case` is TRUE, and where it is FALSE."""
    truths = {r["id"]: _truth(case, read(r)) for r in records}
    return {i for i, t in truths.items() if t is True}, {i for i, t in truths.items() if t is False}


def _taken(case: Case, placement: str) -> bool:
    return placement == "column" or case.in_json


TEXT_ARRAYS = ("sqlite", "mysql")
"""The databases that keep a list column as a JSON array, whose dates are text: they refuse
a test of a list of dates (docs/backends-sql-rules.md) rather than compare text."""


def _refused_by(database: str, kind: Kind, case: Case) -> bool:
    return database in TEXT_ARRAYS and kind.type == "date[]" and case.answer is not None


def _answers(check: Callable[[], None], database: str | None, kind: Kind, case: Case) -> None:
    """Run `check`, or see the engine refuse the test where it does."""
    if database is not None and _refused_by(database, kind, case):
        with pytest.raises(af.FilterError, match="faithfully"):
            check()
    else:
        check()


# --- the readers: refused alike in JSON and in text, the same tree where taken ------------


@pytest.mark.parametrize(("kind", "placement"), PLACED)
def test_json_and_text_take_or_refuse_each_list_operator_alike(kind: Kind, placement: str) -> None:
    schema = _schema(kind, placement)
    inside = schema.with_relations(af.Relation("orders", schema))
    for case in [*_cases(kind), Case("blank", {"blank": True}, "v is blank", None, False)]:
        for where, text, fields in (
            ({"v": case.where}, case.text, schema),
            ({"orders": {"some": {"v": case.where}}}, f"orders some ({case.text})", inside),
        ):
            if _taken(case, placement) and case.name != "blank":
                assert af.parse(where, fields) == af.parse_text(text, schema=fields), case.name
                continue
            with pytest.raises(af.FilterError, match="kept inside JSON|blank applies"):
                af.parse(where, fields)
            with pytest.raises(af.FilterError, match="kept inside JSON|blank applies"):
                af.parse_text(text, fields)


def test_a_list_of_dates_or_date_times_is_not_declared_inside_json() -> None:
    for kind in ("date[]", "datetime[]"):
        with pytest.raises(ValueError, match="a list of strings, numbers or booleans"):
            af.Schema.of(data="json", v=(kind, ("data", "v")))


def test_a_hand_built_test_a_json_list_does_not_take_is_refused_on_every_back_end() -> None:
    schema = _schema(KINDS["number[]"], "json")
    flt = af.Filter(af.ListTest("v", ListOp.EQUALS, (1, 2)), schema)
    reads: list[Callable[[], object]] = [
        lambda: flt.matches({"data": {"v": [1, 2]}}),
        lambda: flt.explain({"data": {"v": [1, 2]}}),
        lambda: flt.to_sql("postgresql"),
        lambda: flt.to_polars(),
    ]
    for read in reads:
        with pytest.raises(af.FilterError, match="kept inside JSON"):
            read()


# --- the answers: a column and inside JSON, on every engine --------------------------------


ENGINES_USED = [
    p
    for p in engine_params()
    if not p.values[0].name.startswith("params-") and p.values[0].name != "polars-streaming"
]
"""Every engine but the SQL text with parameters and polars streaming, which write the same
list tests as SQL text and eager polars do."""


@pytest.mark.parametrize("engine", ENGINES_USED)
@pytest.mark.parametrize(("kind", "placement"), PLACED)
def test_each_list_operator_answers_as_the_docs_on_every_engine(
    kind: Kind, engine: Engine, placement: str, request: pytest.FixtureRequest
) -> None:
    schema = _schema(kind, placement)
    records = _records(kind, placement)
    chosen = selector(engine, request)
    for case in _cases(kind):
        if not _taken(case, placement):
            continue
        true, false = _expected(case, records, lambda r: _value_of(r, placement))
        flt = af.parse({"v": case.where}, schema)
        negated = af.parse({"NOT": {"v": case.where}}, schema)

        def check() -> None:
            assert chosen(flt, records, None) == true, case.name  # noqa: B023
            assert chosen(negated, records, None) == false, f"NOT {case.name}"  # noqa: B023

        _answers(check, engine.name.rpartition("-")[2], kind, case)


# --- the answers inside a related row --------------------------------------------------------


def _related(kind: Kind, placement: str) -> tuple[af.Schema, list[dict[str, Any]]]:
    """A contact schema whose `orders` rows hold `v`, and one contact per value, each with one
    order holding it."""
    orders = _schema(kind, placement)
    schema = af.Schema.of(data="json").with_relations(af.Relation("orders", orders))
    records = [
        {"id": f"c{i}", "data": {}, "orders": [{**_record(i, v, placement), "id": f"o{i}"}]}
        for i, v in enumerate(_values(kind, placement))
    ]
    return schema, records


def _related_expected(
    case: Case, records: list[dict[str, Any]], placement: str
) -> tuple[set[str], set[str]]:
    """The contacts whose order makes `case` TRUE, and FALSE: `some (v ...)` and
    `some (NOT v ...)` select them."""
    return _expected(case, records, lambda r: _value_of(r["orders"][0], placement))


def _related_checks(kind: Kind, placement: str) -> list[tuple[Case, af.Filter, af.Filter]]:
    schema, _ = _related(kind, placement)
    return [
        (
            case,
            af.parse({"orders": {"some": {"v": case.where}}}, schema),
            af.parse({"orders": {"some": {"NOT": {"v": case.where}}}}, schema),
        )
        for case in _cases(kind)
        if _taken(case, placement)
    ]


IN_PROCESS = [
    p
    for p in ENGINES_USED
    if p.values[0].name in ("memory", "explain") or p.values[0].name.startswith("polars")
]


@pytest.mark.parametrize("engine", IN_PROCESS)
@pytest.mark.parametrize(("kind", "placement"), PLACED)
def test_inside_a_related_row_each_list_operator_answers_as_the_docs(
    kind: Kind, engine: Engine, placement: str, request: pytest.FixtureRequest
) -> None:
    _, records = _related(kind, placement)
    chosen = selector(engine, request)
    for case, flt, negated in _related_checks(kind, placement):
        true, false = _related_expected(case, records, placement)
        assert chosen(flt, records, None) == true, case.name
        assert chosen(negated, records, None) == false, f"NOT {case.name}"


def _tables(
    database: Database, kind: Kind, placement: str, records: list[dict[str, Any]]
) -> tuple[Table, Table]:
    """The contacts and their orders as two tables, created once per database."""
    tag = hashlib.sha256(f"{kind.type}:{placement}".encode()).hexdigest()[:8]
    orders_schema = _schema(kind, placement)
    stored = af.Schema(tuple(f for f in orders_schema.fields if not f.source))
    names = (f"af_jl_contacts_{tag}", f"af_jl_orders_{tag}")
    if names[1] not in database.tables:
        native = database.dialect in ("postgresql", "duckdb")
        contacts = Table(names[0], database.metadata, Column("id", String(64), primary_key=True))
        columns = [Column("id", String(64), primary_key=True), Column("contact_id", String(64))]
        columns += [Column(f.name, _column_type(f.type, database.engine)) for f in stored]
        orders = Table(names[1], database.metadata, *columns)
        rows = [
            {**_row(order, stored, native), "contact_id": record["id"]}
            for record in records
            for order in record["orders"]
        ]
        with database.engine.begin() as connection:
            for table in (orders, contacts):
                if inspect(connection).has_table(table.name):
                    table.drop(connection)
            contacts.create(connection)
            orders.create(connection)
            connection.execute(contacts.insert(), [{"id": r["id"]} for r in records])
            connection.execute(orders.insert(), rows)
        database.tables[names[0]], database.tables[names[1]] = contacts, orders
    return database.tables[names[0]], database.tables[names[1]]


@pytest.mark.parametrize("name", database_params())
@pytest.mark.parametrize(("kind", "placement"), PLACED)
def test_inside_a_related_row_each_list_operator_answers_alike_in_sql(
    kind: Kind, name: str, placement: str, request: pytest.FixtureRequest
) -> None:
    database = open_database(name, request)
    _, records = _related(kind, placement)
    contacts, orders = _tables(database, kind, placement, records)
    for case, flt, negated in _related_checks(kind, placement):
        for test, expected in zip(
            (flt, negated), _related_expected(case, records, placement), strict=True
        ):
            check = _in_sql(database, test, contacts, orders, expected, case.name)
            _answers(check, database.dialect, kind, case)


def _in_sql(
    database: Database,
    flt: af.Filter,
    contacts: Table,
    orders: Table,
    expected: set[str],
    name: str,
) -> Callable[[], None]:
    """A check that SQL text and SQLAlchemy select `expected`."""

    def check() -> None:
        sql = flt.to_sql(database.dialect, table=contacts.name, tables={"orders": orders.name})
        assert database.ids(database.query(contacts, sql)) == expected, (name, sql)
        statement = select(contacts.c.id).where(
            flt.to_sqlalchemy(contacts, relations={"orders": orders})
        )
        with database.engine.connect() as connection:
            assert set(connection.scalars(statement)) == expected, (name, "sqlalchemy")

    return check


def test_every_engine_is_in_the_cross_product() -> None:
    names = {engine.name for engine in ENGINES}
    assert {"memory", "explain", "polars", "sql-sqlite", "sql-duckdb", "sql-postgresql"} <= names


# --- PySpark: every case of a frame in one select ---------------------------------------------


Where = Callable[[Any], dict[str, Any]]
"""A case's condition `{"v": ...}` where it is read: on the contact, or inside its order."""
ON_CONTACT: tuple[Where, Where] = (lambda c: {"v": c}, lambda c: {"NOT": {"v": c}})
IN_ORDER: tuple[Where, Where] = (
    lambda c: {"orders": {"some": {"v": c}}},
    lambda c: {"orders": {"some": {"NOT": {"v": c}}}},
)


@pytest.mark.spark
@pytest.mark.parametrize(("kind", "placement"), PLACED)
def test_each_list_operator_answers_as_the_docs_on_pyspark(
    kind: Kind, placement: str, spark: Any
) -> None:
    related, related_records = _related(kind, placement)
    _agrees_on_spark(spark, kind, placement, _schema(kind, placement), _records(kind, placement))
    _agrees_on_spark(spark, kind, placement, related, related_records)


def _agrees_on_spark(
    spark: Any, kind: Kind, placement: str, schema: af.Schema, records: list[dict[str, Any]]
) -> None:
    """Every case on `records` in one select: a column per case and per negation."""
    from audiencefilter.backends.frames.spark import frame_for

    related = bool(schema.relations)
    positive, negative = IN_ORDER if related else ON_CONTACT
    cases = [c for c in _cases(kind) if _taken(c, placement)]
    columns = []
    for index, case in enumerate(cases):
        columns.append(af.parse(positive(case.where), schema).to_pyspark().alias(f"t{index}"))
        columns.append(af.parse(negative(case.where), schema).to_pyspark().alias(f"f{index}"))
    rows = (
        frame_for(spark, list[Mapping[str, Any]](records), schema).select("id", *columns).collect()
    )
    for index, case in enumerate(cases):
        read = (lambda r: _value_of(r["orders"][0], placement)) if related else None
        true, false = _expected(case, records, read or (lambda r: _value_of(r, placement)))
        assert {r["id"] for r in rows if r[f"t{index}"] is True} == true, case.name
        assert {r["id"] for r in rows if r[f"f{index}"] is True} == false, f"NOT {case.name}"
