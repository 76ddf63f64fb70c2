"""Relations: the schema's declarations, both readers, limits, simplify, memory, explain, and
the SQLAlchemy ORM form (the conformance data and the differential test cover the engines)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from sqlalchemy import DateTime, ForeignKey, Integer, String, create_engine, select
from sqlalchemy.orm import DeclarativeBase, Mapped, Session, mapped_column, relationship

import audiencefilter as af
from audiencefilter import parse_text
from audiencefilter.language.nodes import Aggregated, Quantified
from audiencefilter.language.relations import Aggregate, Quantifier, Relation
from audiencefilter.where import fast

NOW = datetime(2026, 11, 22, 12, tzinfo=UTC)
SHARER = {
    "id": "c1",
    "actions": [
        {"id": "act_1", "name": "share", "increase": 5, "createdAt": "2026-11-20T00:00:00Z"},
        {"id": "act_2", "name": "login", "increase": 1, "createdAt": "2026-11-21T00:00:00Z"},
        {"id": "act_4", "name": "share", "increase": 5, "createdAt": "2026-11-01T00:00:00Z"},
        {"id": "act_9", "name": "share", "increase": None, "createdAt": "2026-10-24T00:00:00Z"},
    ],
}


def _errors(where: Any, schema: af.Schema = af.CONTACT) -> list[tuple[str, str, str | None]]:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where, schema)
    return [(i.path, i.message, i.suggestion) for i in caught.value.errors]


def test_the_contact_schema_has_actions_and_audiences() -> None:
    actions = af.CONTACT.relation("actions")
    audiences = af.CONTACT.relation("audiences")
    assert actions is not None and audiences is not None
    assert [(f.name, f.type.value) for f in actions.schema] == [
        ("id", "string"),
        ("name", "string"),
        ("increase", "number"),
        ("createdAt", "datetime"),
    ]
    assert audiences.schema.names == ("id", "name", "mode")
    assert (actions.table, actions.foreign_key, actions.key) == ("actions", "sub_id", "id")


def test_quantifiers_and_zero_rows() -> None:
    none_key: dict[str, Any] = {"id": "c0"}
    empty: dict[str, Any] = {"id": "c0", "actions": []}
    for record in (none_key, empty):
        assert not af.parse({"actions": {"some": {}}}).matches(record)
        assert af.parse({"actions": {"none": {}}}).matches(record)
        assert af.parse({"actions": {"every": {"name": "x"}}}).matches(record)
        assert af.parse({"actions": {"count": 0}}).matches(record)
        assert af.parse({"actions": {"sum": {"increase": 0}}}).matches(record)
        assert af.parse({"actions": {"max": {"createdAt": None}}}).matches(record)
        assert not af.parse({"actions": {"max": {"createdAt": {"lt": "2030-01-01"}}}}).matches(
            record
        )
        assert not af.parse({"NOT": {"actions": {"min": {"increase": {"lt": 0}}}}}).matches(record)


def test_every_needs_each_row_true_and_unknown_rows_break_it() -> None:
    assert not af.parse({"actions": {"every": {"increase": {"gte": 0}}}}).matches(SHARER)
    assert af.parse({"actions": {"every": {"createdAt": {"gte": "2026-01-01"}}}}).matches(SHARER)
    assert af.parse({"NOT": {"actions": {"every": {"increase": 5}}}}).matches(SHARER)


def test_aggregates_with_where_and_relative_windows_at_one_now() -> None:
    flt = af.parse(
        {
            "actions": {
                "where": {"name": "share", "createdAt": {"gte": {"ago": "P30D"}}},
                "count": {"gte": 3},
                "sum": {"increase": 10},
            }
        }
    )
    assert flt.matches(SHARER, now=NOW)
    assert not flt.matches(SHARER, now=datetime(2026, 11, 24, 12, tzinfo=UTC))
    sql = flt.to_sql("postgresql", now=NOW)
    assert sql.count("2026-10-23 12:00:00") == 2, sql  # both subqueries see the same instant


def test_keys_of_one_relation_object_are_anded() -> None:
    flt = af.parse({"actions": {"count": {"gte": 1, "lt": 3}}})
    assert isinstance(flt.root, af.And)
    assert [n.function for n in flt.root.items if isinstance(n, Aggregated)] == [
        Aggregate.COUNT,
        Aggregate.COUNT,
    ]
    assert not flt.matches(SHARER)


def test_explain_names_the_related_rows() -> None:
    flt = af.parse_text('count(actions where name = "share" and createdAt >= 30 days ago) >= 3')
    explanation = flt.explain(SHARER, now=NOW)
    assert explanation.matched
    assert "3 actions where" in explanation.render()
    assert "act_1, act_4, act_9" in explanation.render()
    none = af.parse({"actions": {"none": {"name": "login"}}}).explain(SHARER)
    assert not none.matched and '1 actions where name = "login": act_2' in none.render()


@pytest.mark.parametrize(
    ("where", "path", "message"),
    [
        ({"actions": {"sum": {"name": 1}}}, "actions.sum.name", "sum applies to number fields"),
        ({"actions": {"some": {"nam": 1}}}, "actions.some.nam", 'unknown field "nam"'),
        ({"actions": {"where": {}, "every": {}}}, "actions.where", "where narrows the rows"),
        ({"actions": {"som": {}}}, "actions.som", 'unknown key "som"'),
        ({"actions": {"is": {}}}, "actions.is", 'unknown key "is"'),
        ({"actions": {"some": {"actions": {"some": {}}}}}, "actions.some.actions", "unknown field"),
        ({"actions": {"min": {"increase": {"gte": "3"}}}}, "actions.min.increase.gte", "number"),
        ({"actions": 3}, "actions", "expected an object"),
    ],
)
def test_errors_are_located_with_suggestions(where: Any, path: str, message: str) -> None:
    ((found, text, _),) = _errors(where)
    assert found == path and message in text


def test_suggestions() -> None:
    assert _errors({"actions": {"some": {"nam": 1}}})[0][2] == 'did you mean "name"?'
    assert _errors({"actions": {"som": {}}})[0][2] == 'did you mean "some"?'
    assert _errors({"actionz": {"some": {}}})[0][2] == 'did you mean "actions"?'
    assert "sum takes increase" in (_errors({"actions": {"sum": {"name": 1}}})[0][2] or "")


def test_text_errors_have_line_and_column() -> None:
    with pytest.raises(af.FilterError) as caught:
        parse_text("points > 1 and\nsum(actions.name) > 3")
    (issue,) = caught.value.errors
    assert (issue.line, issue.column) == (2, 13)
    assert "sum applies to number fields" in issue.message
    with pytest.raises(af.FilterError) as caught:
        parse_text('actions some (nam = "x")')
    (issue,) = caught.value.errors
    assert (issue.line, issue.column, issue.suggestion) == (1, 15, 'did you mean "name"?')


@pytest.mark.parametrize(
    "text",
    [
        'actions some (name = "share" and createdAt >= 30 days ago)',
        'count(actions where name = "share") >= 3',
        "sum(actions.increase) >= 100 and not (actions none (true))",
        "max(actions.createdAt) is null or min(actions.createdAt) != 2025-01-01T00:00:00Z",
        'actions every (increase > 0 or name in ["a"]) and audiences some (name = "VIP")',
        'audiences some (name = "VIP") and audiences none (name = "Churned")',
        "count(actions) in [1, 2]",
    ],
)
def test_text_round_trips(text: str) -> None:
    flt = parse_text(text)
    assert flt.to_text() == text
    assert af.parse(flt.to_json()) == flt
    assert parse_text(flt.to_text()) == flt


def test_words_of_the_syntax_stay_usable_as_field_names() -> None:
    schema = af.Schema.of(some="number", count="number", where="string")
    flt = parse_text('some = 1 and count >= 2 and `where` = "x"', schema)
    assert flt.to_text() == 'some = 1 and count >= 2 and `where` = "x"'


def test_fast_reader_falls_back_to_the_plain_reader() -> None:
    text = '{"email": "a@b.c", "actions": {"some": {"name": "share"}}}'
    assert fast.read_fast(text, af.CONTACT, af.DEFAULT_LIMITS) is None
    assert af.parse(text).root == af.parse(af.parse(text).to_dict()).root


def test_relation_conditions_count_toward_the_limits() -> None:
    where = {"actions": {"some": {"name": "x", "increase": 1}}}
    af.parse(where, limits=af.Limits(max_nodes=4))
    assert "more than 3 conditions" in _limit_error(where, af.Limits(max_nodes=3))
    deep: dict[str, Any] = {"actions": {"some": {"AND": [{"NOT": {"name": "x"}}]}}}
    af.parse(deep, limits=af.Limits(max_depth=4))
    assert "nested deeper than 3" in _limit_error(deep, af.Limits(max_depth=3))
    # Text is held to the limits of its canonical JSON.
    for where in (deep, {"actions": {"where": {"NOT": {"name": "x"}}, "count": {"not": 1}}}):
        flt = af.parse(where)
        for depth in range(1, 6):
            limits = af.Limits(max_depth=depth)
            by_json = _valid(af.parse, flt.to_json(), limits)
            by_text = _valid(parse_text, flt.to_text(), limits)
            assert by_json == by_text, (where, depth)


def _valid(read: Any, source: str, limits: af.Limits) -> bool:
    try:
        read(source, limits=limits)
    except af.FilterError:
        return False
    return True


def _limit_error(where: Any, limits: af.Limits) -> str:
    with pytest.raises(af.FilterError) as caught:
        af.parse(where, limits=limits)
    return caught.value.errors[0].message


ORDERS = af.Schema.of("order", total="number", placedAt="datetime")
LINES = af.Schema.of("line", sku="string", quantity="number")
NESTED = af.Schema.of("customer", email="string").with_relations(
    Relation("orders", ORDERS.with_relations(Relation("lines", LINES))),
    Relation("profile", af.Schema.of("profile", plan="string"), many=False),
)


def test_a_custom_schema_declares_relations_nested_and_to_one() -> None:
    customer = {
        "email": "a@b.c",
        "orders": [{"total": 30, "lines": [{"sku": "X", "quantity": 2}]}, {"total": 5}],
        "profile": {"plan": "pro"},
    }
    flt = af.parse({"orders": {"some": {"lines": {"some": {"sku": "X"}}}}}, NESTED)
    assert flt.matches(customer)
    assert flt.to_text() == 'orders some (lines some (sku = "X"))'
    assert 'EXISTS (SELECT 1 FROM "lines" AS "r2"' in flt.to_sql("sqlite")
    assert af.parse({"profile": {"is": {"plan": "pro"}}}, NESTED).matches(customer)
    assert not af.parse({"profile": {"isNot": {"plan": "pro"}}}, NESTED).matches(customer)
    assert af.parse({"profile": {"is": None}}, NESTED).matches({"email": "x"})
    assert parse_text('profile is not (plan = "pro")', NESTED).root == Quantified(
        "profile", Quantifier.IS_NOT, af.Comparison("plan", af.Op.EQUALS, "pro")
    )
    assert _errors({"profile": {"some": {}}}, NESTED)[0][0] == "profile.some"
    assert _errors({"orders": {"some": {"profile": {"is": {}}}}}, NESTED)[0][0] == (
        "orders.some.profile"
    )


def test_simplify_folds_what_w_decides() -> None:
    assert af.parse({"actions": {"some": {"OR": []}}}).simplify().root == af.FALSE
    assert af.parse({"actions": {"none": {"OR": []}}}).simplify().root == af.TRUE
    assert af.parse({"actions": {"every": {}}}).simplify().root == af.TRUE
    every_false = af.parse({"actions": {"every": {"OR": []}}}).simplify()
    assert every_false.matches({}) and not every_false.matches(SHARER)


class _Base(DeclarativeBase):
    pass


class Contact(_Base):
    __tablename__ = "contacts"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    actions: Mapped[list[Action]] = relationship()


class Action(_Base):
    __tablename__ = "actions"
    id: Mapped[str] = mapped_column(String(16), primary_key=True)
    subId: Mapped[str] = mapped_column("sub_id", ForeignKey("contacts.id"))
    name: Mapped[str | None] = mapped_column(String(32))
    increase: Mapped[int | None] = mapped_column(Integer)
    createdAt: Mapped[datetime | None] = mapped_column("created_at", DateTime(timezone=True))


def test_sqlalchemy_follows_an_orm_relationship() -> None:
    engine = create_engine("sqlite://")
    _Base.metadata.create_all(engine)
    with Session(engine) as session:
        session.add_all([Contact(id="c0"), Contact(id="c1")])
        for action in SHARER["actions"]:
            created = datetime.fromisoformat(action["createdAt"].replace("Z", "+00:00"))
            session.add(
                Action(
                    id=action["id"],
                    subId="c1",
                    name=action["name"],
                    increase=action["increase"],
                    createdAt=created,
                )
            )
        session.commit()
        cases = {
            '{"actions": {"some": {"name": "share"}}}': {"c1"},
            '{"actions": {"none": {}}}': {"c0"},
            '{"actions": {"every": {"increase": {"gte": 0}}}}': {"c0"},
            '{"actions": {"where": {"name": "share"}, "count": 3}}': {"c1"},
            '{"actions": {"sum": {"increase": 0}}}': {"c0"},
            '{"actions": {"max": {"createdAt": {"gte": {"ago": "P3D"}}}}}': {"c1"},
        }
        for where, expected in cases.items():
            flt = af.parse(where)
            query = select(Contact.id).where(flt.to_sqlalchemy(Contact, now=NOW))
            assert set(session.scalars(query)) == expected, where
            assert {r["id"] for r in (SHARER, {"id": "c0"}) if flt.matches(r, now=NOW)} == expected
