"""Deciding one question: is there a record meeting every demand, and which one.

Each open branch of the tableau is read field by field. Conditions on one column that the
representatives model (`domains.py`) are decided exactly there: a field none of whose
representatives meets its literals closes the branch, a proof. Every other condition (JSON
paths, field references, relations, anniversaries, a node kind added later) is opaque: it can
close a branch only by clashing with itself, and otherwise only guides the search for a record.
A candidate record is a witness only once the caller's `target` (the in-memory back-end over the
whole filters) accepts it, so a wrong model can cost an answer, never give a wrong one.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..backends.memory.compiler import compile_node
from ..language.fields import FieldType, Schema
from ..language.nodes import (
    Aggregated,
    Comparison,
    FieldComparison,
    IsNull,
    ListTest,
    Node,
    Not,
    Quantified,
    fields_used,
    walk,
)
from ..language.relations import relation_of, rows_schema
from .domains import MISSING, candidates, modelled
from .patterns import clash
from .tableau import (
    QUESTION_STEPS,
    Branch,
    Budget,
    Demand,
    F,
    Mode,
    T,
    TooManyBranches,
    Truths,
    U,
    branches,
    bulk,
)

Record = dict[str, Any]
Target = Callable[[Mapping[str, Any]], bool]
Memo = dict[frozenset[tuple[Node, Truths]], tuple[list[Any], bool]]
"""A field's literals on a branch and the values meeting them, shared by the branches and
by the questions over one schema (`_Kept`)."""
_TRIES = 300
_PER_FIELD = 4
_ROW_STEPS = 2_000


@dataclass
class Outcome:
    """A question's answer: a checked `witness`, or `empty` (proved: no record), or neither."""

    witness: Record | None = None
    empty: bool = False
    reason: str = ""
    blamed: list[Node] = field(default_factory=list)
    """The conditions that closed the branches of a proof (for a reason naming them)."""
    steps: int = 0
    """The steps the question took (`tableau.Budget`)."""


def too_many(steps: int) -> str:
    """The reason of a question left undecided by its budget."""
    return f"too many cases to decide within {steps:,} steps"


def decide(
    demands: Sequence[Demand], schema: Schema, target: Target, steps: int = QUESTION_STEPS
) -> Outcome:
    """Search the branches of `demands` for a record `target` accepts, proving emptiness when
    every branch closes; past `steps` steps, undecided."""
    search = _Search(schema, target, _kept(schema), Budget(steps), _size(demands))
    search.budget.check = search.open
    try:
        found = search.run(demands)
    except TooManyBranches:
        found = Outcome(reason=f"undecided: {too_many(steps)}")
    found.steps = min(search.budget.spent, steps)
    return found


def _size(demands: Sequence[Demand]) -> int:
    """The nodes of the question's trees: the steps of judging one candidate record."""
    return sum(1 for node, _ in demands for _ in walk(node))


@dataclass
class _Search:
    """One question's search: its schema and target, the values known per field's literals,
    its budget, its size (what judging a record costs), and what it learnt on the way."""

    schema: Schema
    target: Target
    kept: _Kept
    budget: Budget
    size: int
    fields: dict[int, str | None] = field(default_factory=dict)
    closing: list[Node] = field(default_factory=list)

    def run(self, demands: Sequence[Demand]) -> Outcome:
        undecided = ""
        for branch in branches(list(demands), self.budget):
            found = _branch(branch, self)
            if found.witness is not None:
                return found
            if not found.empty:
                undecided = undecided or found.reason
        if undecided:
            return Outcome(reason=f"undecided: {undecided}")
        return Outcome(empty=True, reason="proved", blamed=[*self.closing, *self.budget.clashes])

    def open(self, branch: Branch, node: Node) -> bool:
        return _open(branch, node, self)


Functions = list[Callable[..., bool] | None]
"""A condition's compiled "is TRUE" and, once a record needs it, "is FALSE"."""


@dataclass
class _Kept:
    """What the questions over one schema share from call to call: each condition's compiled
    tests, and each field's literals with the values meeting them (both depend on the schema
    and the literals alone: relative values are resolved before a question is asked)."""

    schema: Schema
    compiled: dict[Node, Functions] = field(default_factory=dict)
    values: Memo = field(default_factory=dict)
    weight: int = 0
    """The literals and values `values` holds: its keys can be long (a field's literals on a
    branch), so it is bounded by them, not by its entries alone."""


_KEPT: dict[int, _Kept] = {}
_KEEP = 20_000
_KEEP_WEIGHT = 200_000
_KEEP_SCHEMAS = 32


def _kept(schema: Schema) -> _Kept:
    """The shared state of `schema`, looked up by identity (hashing a schema on every call
    would cost more than the lookup saves); bounded in schemas, entries and weight, so a
    long-lived process stays small whatever its questions and schemas."""
    kept = _KEPT.get(id(schema))
    if kept is None or kept.schema is not schema:
        kept = _KEPT[id(schema)] = _Kept(schema)
        while len(_KEPT) > _KEEP_SCHEMAS:
            del _KEPT[next(iter(_KEPT))]  # the schema first kept
    if len(kept.compiled) > _KEEP or len(kept.values) > _KEEP or kept.weight > _KEEP_WEIGHT:
        kept.compiled.clear()
        kept.values.clear()
        kept.weight = 0
    return kept


def _truth_functions(atom: Node, schema: Schema) -> Functions:
    """The compiled tests of one condition: "is FALSE" is compiled only when first needed (a
    record for which "is TRUE" failed), which many conditions never meet."""
    table = _kept(schema).compiled
    found = table.get(atom)
    if found is None:
        found = table[atom] = [compile_node(atom, schema), None]
    return found


def truth(atom: Node, schema: Schema, record: Mapping[str, Any]) -> str | None:
    """The three-valued truth of one condition over `record` (None: the oracle refused it)."""
    functions = _truth_functions(atom, schema)
    is_true, is_false = functions
    try:
        if is_true is not None and is_true(record):
            return T
        if is_false is None:
            is_false = functions[1] = compile_node(Not(atom), schema)
        return F if is_false(record) else U
    except Exception:  # a value the oracle refuses holds no record  # noqa: BLE001
        return None


def _open(branch: Branch, node: Node, search: _Search) -> bool:
    """False when `node`'s field, with the branch's other literals on it, has no value left."""
    name = _modelled_field(node, search.schema, search.fields)
    if name is None:
        return True
    # Every literal of the branch went through this check as it joined, so its field is
    # known; one left out would only make the test weaker, never close a branch wrongly.
    search.budget.spend(bulk(len(branch)))
    fields = search.fields
    literals = [(atom, allowed) for atom, allowed in branch.items() if fields.get(id(atom)) == name]
    found, complete = _remembered(name, literals, search)
    if not found and complete:
        search.closing.extend(atom for atom, _ in literals)
        return False
    return True


def _modelled_field(atom: Node, schema: Schema, fields: dict[int, str | None]) -> str | None:
    """The field of `atom` when the representatives model it, else None; kept by the atom's
    identity for one question (its tree holds the atom alive meanwhile)."""
    key = id(atom)
    if key in fields:
        return fields[key]
    name = getattr(atom, "field", None)
    declared = schema.get(name) if isinstance(name, str) else None
    found = declared.name if declared and modelled(atom, declared.type) else None
    fields[key] = found
    return found


def _branch(branch: Branch, search: _Search) -> Outcome:
    search.budget.spend(bulk(len(branch)))
    groups, opaque = _grouped(branch, search.schema)
    options: dict[str, list[Any]] = {}
    exact = not opaque
    for name, literals in groups.items():
        found, complete = _remembered(name, literals, search)
        if not found:
            if complete:
                return Outcome(empty=True)
            return Outcome(reason=f"no value of {name} was found for its conditions")
        exact = exact and complete
        options[name] = found[:_PER_FIELD]
    for name, pool in _opaque_pools(opaque, branch, search).items():
        options.setdefault(name, pool)
    for record in itertools.islice(_records(options), _TRIES):
        search.budget.spend(search.size)
        if _accepted(search.target, record):
            return Outcome(witness=record)
    if exact:
        return Outcome(reason="a witness built by the model failed the check")
    return Outcome(reason="conditions outside the decided fragment, and no record found")


def _remembered(
    name: str, literals: list[tuple[Node, Truths]], search: _Search
) -> tuple[list[Any], bool]:
    """`_field_values`, looked up first among those already found."""
    search.budget.spend(bulk(len(literals)))
    key = frozenset(literals)
    values = search.kept.values
    found = values.get(key)
    if found is None:
        found = values[key] = _field_values(name, literals, search)
        search.kept.weight += len(key) + len(found[0])
    return found


def _grouped(
    branch: Branch, schema: Schema
) -> tuple[dict[str, list[tuple[Node, Truths]]], list[Node]]:
    groups: dict[str, list[tuple[Node, Truths]]] = {}
    opaque: list[Node] = []
    for atom, allowed in branch.items():
        name = getattr(atom, "field", None)
        declared = schema.get(name) if isinstance(name, str) else None
        if modelled(atom, declared.type if declared else None):
            groups.setdefault(str(name), []).append((atom, allowed))
        else:
            opaque.append(atom)
    return groups, opaque


def _field_values(
    name: str, literals: list[tuple[Node, Truths]], search: _Search
) -> tuple[list[Any], bool]:
    """The representatives of field `name` meeting every literal, and whether they are all."""
    schema = search.schema
    atoms = [a for a, _ in literals]
    demanded = [a for a, allowed in literals if allowed == Mode.TRUE.value]
    search.budget.spend(len(atoms))  # the literal values, sorted into regions
    found = candidates(schema[name].type, atoms, demanded)
    complete = found.complete
    if not complete and schema[name].type is FieldType.STRING:
        search.budget.spend(bulk(len(literals) ** 2))  # each pattern against each
        if clash(literals):
            return [], True
    meeting = []
    order = literals[::-1]
    for value in found.values:
        record = {} if value is MISSING else {name: value}
        meets = _meets(record, order, search)
        if meets is None:
            complete = False
        elif meets:
            meeting.append(value)
    return meeting, complete


def _meets(record: Record, order: list[tuple[Node, Truths]], search: _Search) -> bool | None:
    """Whether one field's `record` meets every literal; None when the oracle refuses it
    for one and no other excludes it. Judged until one excludes it: first the literal that
    joined the branch last (the one a check as it joins is about), then, as the values come
    in order, the one that excluded the value before (moved to the front of `order`)."""
    refused = False
    for place, (atom, allowed) in enumerate(order):
        search.budget.spend()
        judged = truth(atom, search.schema, record)
        if judged is None:
            refused = True
        elif judged not in allowed:
            if place:
                order.insert(0, order.pop(place))
            return False
    return None if refused else True


def _accepted(target: Target, record: Record) -> bool:
    try:
        return target(record)
    except Exception:  # a record the oracle refuses is no witness  # noqa: BLE001
        return False


def _records(options: dict[str, list[Any]]) -> Iterator[Record]:
    names = sorted(options)
    for values in itertools.product(*(options[n] for n in names)):
        yield {n: v for n, v in zip(names, values, strict=True) if v is not MISSING}


def _opaque_pools(opaque: list[Node], branch: Branch, search: _Search) -> dict[str, list[Any]]:
    """Values to try for the fields the opaque conditions read."""
    pools: dict[str, list[Any]] = {}
    for atom in opaque:
        for name in sorted(fields_used(atom)):
            search.budget.spend(bulk(len(branch)))
            pool = pools.setdefault(name, [])
            pool.extend(_guesses(atom, name, branch, search))
    return {n: list(_unique(p))[:8] for n, p in pools.items()}


def _unique(values: list[Any]) -> Iterator[Any]:
    seen: list[Any] = []
    for value in values:
        if not any(type(value) is type(s) and value == s for s in seen):
            seen.append(value)
            yield value


def _guesses(atom: Node, name: str, branch: Branch, search: _Search) -> list[Any]:
    schema = search.schema
    if isinstance(atom, Quantified | Aggregated):
        return _relation_guesses(atom, search)
    declared = schema.get(name)
    kind = declared.type if declared else None
    if isinstance(atom, Comparison | IsNull | ListTest) and atom.path:
        return _json_guesses(atom, branch)
    if isinstance(atom, FieldComparison) and kind is not None:
        return list(_TYPE_POOLS.get(kind, ()))
    value = getattr(atom, "value", None)
    literal = [v for v in (value if isinstance(value, tuple) else (value,)) if v is not None]
    return [*literal[:2], *_TYPE_POOLS.get(kind, ()), None, MISSING] if kind else [MISSING]


def _json_guesses(atom: Comparison | IsNull | ListTest, branch: Branch) -> list[Any]:
    """Documents holding each path of the branch's JSON conditions: the literals asked for,
    all at once and one at a time, and the empty document."""
    merged: dict[str, Any] = {}
    singles: list[Any] = []
    for other, allowed in branch.items():
        if not isinstance(other, Comparison | IsNull | ListTest):
            continue
        if other.field != atom.field or not other.path:
            continue
        value = _json_value(other)
        if value is MISSING:
            continue
        single: dict[str, Any] = {}
        _put(single, other.path, value)
        singles.append(single)
        if T in allowed:
            _put(merged, other.path, value)
    return [merged, *singles, {}, MISSING]


def _json_value(atom: Node) -> Any:
    if isinstance(atom, ListTest):
        return list(atom.value)
    if isinstance(atom, Comparison):
        value = atom.value[0] if isinstance(atom.value, tuple) and atom.value else atom.value
        return value if isinstance(value, str | int | float | bool) else MISSING
    return MISSING


def _put(document: dict[str, Any], path: tuple[str, ...], value: Any) -> None:
    for key in path[:-1]:
        inner = document.get(key)
        if not isinstance(inner, dict):
            inner = document[key] = {}
        document = inner
    document[path[-1]] = value


def _relation_guesses(atom: Quantified | Aggregated, search: _Search) -> list[Any]:
    """Related rows to try: none, one row for which the where clause holds, one for which it
    does not, and several copies (counts)."""
    relation = relation_of(search.schema, atom.relation)
    related = rows_schema(search.schema, relation)
    rows = [_row(atom.where, related, mode, search.budget) for mode in (Mode.TRUE, Mode.NOT_TRUE)]
    found = [r for r in rows if r is not None]
    if not relation.many:
        return [*found, None, MISSING]
    lists: list[Any] = [[], *([r] for r in found)]
    if found:
        lists += [[found[0]] * n for n in (2, 3, 5, 10)]
    return [*lists, MISSING]


def _row(where: Node, schema: Schema, mode: Mode, budget: Budget) -> Record | None:
    """A related row for which `where` holds (or does not): a question of its own, whose
    steps are the asking question's."""
    is_true = _truth_functions(where, schema)[0]
    assert is_true is not None

    def target(row: Mapping[str, Any]) -> bool:
        return bool(is_true(row)) if mode is Mode.TRUE else not is_true(row)

    found = decide([(where, mode)], schema, target, steps=min(_ROW_STEPS, budget.left))
    budget.spend(found.steps)
    return found.witness


_TYPE_POOLS: dict[FieldType, tuple[Any, ...]] = {
    FieldType.NUMBER: (0, 1, 2, -1),
    FieldType.STRING: ("a", "b", ""),
    FieldType.BOOLEAN: (True, False),
}


def describe(atoms: Sequence[Node]) -> str:
    """The distinct conditions of `atoms` in a few words each, for a reason."""
    return "; ".join(dict.fromkeys(_describe(atom) for atom in atoms[:50]))


def _describe(atom: Node) -> str:
    """A condition in a few words for a reason: `points gt 10`."""
    if isinstance(atom, Comparison):
        path = "".join(f".{k}" for k in atom.path)
        return f"{atom.field}{path} {atom.op} {atom.value!r}"
    if isinstance(atom, IsNull | ListTest):
        return (
            f"{atom.field} {getattr(atom, 'op', 'is null')} {getattr(atom, 'value', '')!r}".strip()
        )
    return f"the {atom.kind} condition on {', '.join(sorted(fields_used(atom)))}"


__all__ = [
    "QUESTION_STEPS",
    "Outcome",
    "decide",
    "describe",
    "too_many",
    "truth",
    "TooManyBranches",
    "T",
    "F",
    "U",
]
