"""Audiences that refer to audiences: `{"audiences": {"some": {"id": "aud_..."}}}`.

A smart audience may select the contacts of other audiences of its list ("in VIP and not in
Churned"). The library reads the `audiences` relation from the stored membership
(`relations.py`), so a referring audience is as exact as the audiences it names, and the store
must refresh it after them. That needs the references to be known, so a stored filter names
the audiences it reads by id:

- every `audiences` condition of a stored smart filter bounds the ids it can see: its where
  clause is an `id` equality or `in`, or an AND holding one, or an OR of such (`every` is
  refused: it reads every audience the contact is in);
- each id names an audience of the same list;
- references form no cycle (an audience reaching itself through others, or naming itself);
- an audience that others name is not deleted (409, naming them).

A preview applies the second rule too (`check_known`): a reference to an audience that is not
one of the list's is refused there as creating the audience would refuse it. Previews and
`GET /v4/contacts?filters=` need not bound their references, nor can they form a cycle:
nothing depends on them. `ordered` and `dependents` give the store the order in which to refresh.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence

from sqlalchemy import select
from sqlalchemy.orm import Session

from ... import Aggregated, And, Comparison, Filter, Node, Not, Or, Quantified, Quantifier
from ..db.models import Audience
from ..ground.errors import AudienceRuleError, Conflict
from .audience_filters import StoredAudience, filter_of
from .relations import AUDIENCES

UNBOUNDED = "An audiences condition of a smart audience must name the audiences it reads by id"
UNKNOWN = "Filters refer to an audience that is not an audience of this list"
CYCLE = "Filters refer to audiences in a cycle"
REFERENCED = "The audience is used by the filters of other audiences"


def _bounded(node: Node) -> frozenset[str] | None:
    """The ids an `audiences` where clause can be TRUE for, or None when it is unbounded."""
    if isinstance(node, Comparison) and node.field == "id" and not node.path:
        named = node.only_at
        if named is None or not isinstance(node.value, str | tuple):
            return None
        return frozenset(str(v) for v in named)
    if isinstance(node, And):
        found = [ids for ids in map(_bounded, node.items) if ids is not None]
        return frozenset().union(*found) if found else None
    if isinstance(node, Or):
        each = [_bounded(item) for item in node.items]
        if not each or any(ids is None for ids in each):
            return None
        return frozenset().union(*(ids for ids in each if ids is not None))
    return None


def _conditions(node: Node, path: str) -> Iterable[tuple[str, Quantified | Aggregated]]:
    """Every `audiences` condition of the tree, with a path naming it."""
    if isinstance(node, (Quantified, Aggregated)):
        if node.relation == AUDIENCES:
            yield path or AUDIENCES, node
        return
    if isinstance(node, (And, Or)):
        name = "AND" if isinstance(node, And) else "OR"
        for index, item in enumerate(node.items):
            yield from _conditions(item, f"{path}.{name}[{index}]".lstrip("."))
    elif isinstance(node, Not):
        yield from _conditions(node.item, f"{path}.NOT".lstrip("."))


def referenced(flt: Filter | None) -> frozenset[str]:
    """The ids of the audiences a stored filter reads (checked by `check`)."""
    if flt is None:
        return frozenset()
    ids: set[str] = set()
    for _, node in _conditions(flt.root, ""):
        ids |= _bounded(node.where) or frozenset()
    return frozenset(ids)


def _detail(path: str, message: str, suggestion: str) -> dict[str, str]:
    return {"path": path, "message": message, "suggestion": suggestion}


def check(session: Session, list_id: str, audience_id: str | None, flt: Filter | None) -> None:
    """Refuse (400) a stored smart filter whose audience references break the rules above;
    `audience_id` is the audience that will hold it (None: a new one)."""
    if flt is None:
        return
    ids: set[str] = set()
    for path, node in _conditions(flt.root, ""):
        bound = None
        if not (isinstance(node, Quantified) and node.quantifier is Quantifier.EVERY):
            bound = _bounded(node.where)
        if bound is None:
            raise AudienceRuleError(
                UNBOUNDED,
                [
                    _detail(
                        path,
                        "the condition reads every audience the contact is in",
                        'name them: {"audiences": {"some": {"id": {"in": ["aud_..."]}}}}',
                    )
                ],
            )
        ids |= bound
    if not ids:
        return
    _check_known(session, list_id, ids)
    if audience_id is None:
        return  # a new audience: nothing refers to it yet
    graph = _graph(session, list_id)
    graph[audience_id] = frozenset(ids)
    chain = _path(graph, audience_id, audience_id)
    if chain is not None:
        names = _names(session, chain)
        raise AudienceRuleError(
            CYCLE,
            [
                _detail(
                    AUDIENCES,
                    "the audience would depend on itself: "
                    + " -> ".join(f"{names.get(i, i)} ({i})" for i in chain),
                    "refer only to audiences that do not refer back to this one",
                )
            ],
        )


def check_known(session: Session, list_id: str, flt: Filter) -> None:
    """Refuse (400) a filter naming an audience id that is not an audience of the list: the
    rule `check` applies to a stored filter, applied to a preview too, so a preview never
    answers 0 contacts for a reference that creating the audience would refuse."""
    ids = set(referenced(flt))
    if ids:
        _check_known(session, list_id, ids)


def _check_known(session: Session, list_id: str, ids: set[str]) -> None:
    statement = select(Audience.id, Audience.listId).where(Audience.id.in_(sorted(ids)))
    found = {id_: owner for id_, owner in session.execute(statement)}
    for id_ in sorted(ids):
        if found.get(id_) != list_id:
            raise AudienceRuleError(
                UNKNOWN,
                [
                    _detail(
                        AUDIENCES,
                        f"{id_!r} is not an audience of list {list_id!r}",
                        "refer to audiences of the same list by their id",
                    )
                ],
            )


def check_deletable(session: Session, audience: Audience) -> None:
    """Refuse (409) deleting an audience that other audiences' filters name."""
    users = [
        (other.id, other.name)
        for other in _smart(session, audience.listId)
        if audience.id in referenced(_filter(other))
    ]
    if users:
        named = ", ".join(f"{name} ({id_})" for id_, name in users)
        raise Conflict(
            f"{REFERENCED}: {audience.name} ({audience.id}) is named by {named}; change or "
            "delete those audiences first",
        )


def _filter(audience: Audience) -> Filter | None:
    return filter_of(audience.mode, audience.filters, audience.fields)


def _smart(session: Session, list_id: str) -> Sequence[Audience]:
    statement = select(Audience).where(Audience.listId == list_id, Audience.mode == "smart")
    return session.scalars(statement).all()


def _graph(session: Session, list_id: str) -> dict[str, frozenset[str]]:
    return {a.id: referenced(_filter(a)) for a in _smart(session, list_id)}


def _names(session: Session, ids: Sequence[str]) -> dict[str, str]:
    statement = select(Audience.id, Audience.name).where(Audience.id.in_(list(ids)))
    return {id_: name for id_, name in session.execute(statement)}


def _path(graph: Mapping[str, frozenset[str]], start: str, goal: str) -> list[str] | None:
    """A chain of references from `start` back to `goal`, or None."""
    seen: set[str] = set()
    stack: list[tuple[str, list[str]]] = [(start, [start])]
    while stack:
        node, chain = stack.pop()
        for nxt in sorted(graph.get(node, frozenset())):
            if nxt == goal:
                return [*chain, nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append((nxt, [*chain, nxt]))
    return None


def ordered(audiences: Sequence[StoredAudience]) -> list[StoredAudience]:
    """The audiences with each after those it refers to (stable otherwise)."""
    by_id = {a.id: a for a in audiences}
    done: set[str] = set()
    result: list[StoredAudience] = []

    def visit(audience: StoredAudience, depth: int) -> None:
        if audience.id in done or depth > len(audiences):  # cycles are refused on write
            return
        for id_ in sorted(referenced(audience.flt)):
            if id_ in by_id:
                visit(by_id[id_], depth + 1)
        if audience.id not in done:
            done.add(audience.id)
            result.append(audience)

    for audience in audiences:
        visit(audience, 0)
    return result


def dependents(audiences: Sequence[StoredAudience], changed: Iterable[str]) -> list[StoredAudience]:
    """The audiences that read any of `changed`, directly or through others, in refresh order."""
    reached = set(changed)
    found: set[str] = set()
    grew = True
    while grew:
        grew = False
        for audience in audiences:
            if audience.id not in found and referenced(audience.flt) & reached:
                found.add(audience.id)
                reached.add(audience.id)
                grew = True
    return [a for a in ordered(audiences) if a.id in found]
