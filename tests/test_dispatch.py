"""One dispatch: a node kind a walker does not know stops it loudly, naming walker and kind."""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any, ClassVar, cast

import pytest

import audiencefilter
from audiencefilter import TRUE, And, Not, Or
from audiencefilter.language.contact import CONTACT
from audiencefilter.language.nodes import (
    Node,
    UnhandledNodeError,
    fields_used,
    relative_values,
    resolve,
    walk,
)
from audiencefilter.language.visitor import Visitor, missing_handlers


@dataclass(frozen=True, slots=True)
class Frob:
    """A node kind no walker knows: what a new kind is until each walker learns it."""

    kind: ClassVar[str] = "frob"


def _visitors() -> list[type[Visitor[Any]]]:
    for module in pkgutil.walk_packages(audiencefilter.__path__, "audiencefilter."):
        if ".service" in module.name:
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # optional extras (columnar) may be absent
            continue
    found: list[type[Visitor[Any]]] = []
    pending = list(Visitor.__subclasses__())
    while pending:
        cls = pending.pop()
        if ".service." not in cls.__module__:  # the library's visitors (the service has its own)
            found.append(cls)
        pending.extend(cls.__subclasses__())
    return found


VISITORS = _visitors()


def test_every_visitor_handles_every_node_kind() -> None:
    assert len(VISITORS) >= 8, [v.__qualname__ for v in VISITORS]
    for visitor in VISITORS:
        assert missing_handlers(visitor) == [], visitor.__qualname__


@pytest.mark.parametrize("visitor", VISITORS, ids=lambda v: v.__qualname__)
def test_every_visitor_refuses_a_new_node_kind_by_name(visitor: type[Visitor[Any]]) -> None:
    instance = object.__new__(visitor)  # dispatch needs no state
    with pytest.raises(UnhandledNodeError, match=rf"{visitor.__qualname__} .*'frob'.*Frob"):
        instance.visit(cast(Node, Frob()))


def _function_walkers() -> dict[str, Callable[[Node], object]]:
    from audiencefilter.backends.memory.compiler import compile_node
    from audiencefilter.backends.sql.text import to_sql
    from audiencefilter.explain import explain
    from audiencefilter.formats.cel.write import write as to_cel
    from audiencefilter.rewrite.lower import lower
    from audiencefilter.rewrite.residual import residual
    from audiencefilter.rewrite.simplify import simplify, size
    from audiencefilter.text.limits import canonical_size
    from audiencefilter.text.write import to_text
    from audiencefilter.where.write import to_dict

    return {
        "walk": lambda n: list(walk(n)),
        "fields_used": fields_used,
        "relative_values": relative_values,
        "resolve": lambda n: resolve(n, CONTACT, datetime(2025, 1, 1, tzinfo=UTC)),
        "lower": lambda n: lower(n, CONTACT),
        "simplify": lambda n: simplify(n, CONTACT),
        "residual": lambda n: residual(n, CONTACT, frozenset(), lambda _: None),
        "size": size,
        "canonical_size": lambda n: canonical_size(n, 10),
        "compile_node": lambda n: compile_node(n, CONTACT)({}),
        "explain": lambda n: explain(n, CONTACT, {}),
        "to_sql": lambda n: to_sql(n, CONTACT),
        "to_text": to_text,
        "to_dict": to_dict,
        "to_cel": lambda n: to_cel(n, CONTACT),
    }


@pytest.mark.parametrize("name", sorted(_function_walkers()))
@pytest.mark.parametrize(
    "shape",
    [lambda f: f, lambda f: And((TRUE, f)), lambda f: Or((f, TRUE)), lambda f: Not(f)],
    ids=["alone", "in AND", "in OR", "under NOT"],
)
def test_every_walker_refuses_a_new_node_kind(name: str, shape: Callable[[Any], Node]) -> None:
    run = _function_walkers()[name]
    with pytest.raises(UnhandledNodeError, match=r"does not handle node kind 'frob' \(Frob\)"):
        run(shape(Frob()))
