"""Every visitor in the library handles every node kind."""

from __future__ import annotations

import importlib
import pkgutil

import audiencefilter
from audiencefilter.language.fields import Op
from audiencefilter.language.nodes import TRUE, And, Comparison, IsNull, Node, Not, Or
from audiencefilter.language.visitor import Rebuild, Visitor, missing_handlers


def _all_subclasses(cls: type) -> list[type]:
    found = []
    for sub in cls.__subclasses__():
        found.append(sub)
        found.extend(_all_subclasses(sub))
    return found


def test_every_visitor_covers_every_node_kind() -> None:
    for module in pkgutil.walk_packages(audiencefilter.__path__, "audiencefilter."):
        if ".service" in module.name:
            continue
        try:
            importlib.import_module(module.name)
        except ImportError:  # optional extras (columnar) may be absent
            continue
    visitors = [v for v in _all_subclasses(Visitor) if ".service." not in v.__module__]
    assert visitors, "no visitors found"
    for visitor in visitors:
        assert missing_handlers(visitor) == [], visitor.__qualname__


class _Renamed(Rebuild):
    """Only what a pass changes: each comparison's field renamed."""

    def visit_comparison(self, node: Comparison) -> Node:
        return Comparison(node.field.upper(), node.op, node.value)


def test_the_tree_copying_base_rebuilds_groups_and_keeps_other_nodes() -> None:
    points = Comparison("points", Op.GTE, 5)
    tree = And((Or((points, IsNull("city"))), Not(points), TRUE))
    assert Rebuild().visit(tree) == tree
    renamed = Comparison("POINTS", Op.GTE, 5)
    assert _Renamed().visit(tree) == And((Or((renamed, IsNull("city"))), Not(renamed), TRUE))
