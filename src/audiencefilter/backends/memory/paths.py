"""An accelerator of the in-memory back-end: a JSON data-path equality written out inline.

The plain path answers `{"data": {"path": ["plan"], "equals": "pro"}}` by calling
`data_paths.truth`, which walks the document for any `Mapping`, types the value it finds by the
JSON types and compares through `values.holds`: five calls and about eight `isinstance` tests
a record, ten times a hand-written `r.get("data", {}).get("plan") == "pro"`. Most documents are
plain `dict`s holding plain values, so the compiled function walks those itself and compares a
value of the literal's own class directly:

    (_v == "pro") if (_v := <walk>).__class__ is str else (_v is not None and <plain>)

where `<walk>` is, step by step, `d.get(key) if d.__class__ is dict else (None if d is None
else ...)`: a missing key or a null step gives None (UNKNOWN, as in `lookup`), anything that is
not a plain `dict` gives `...`, which is no literal's class, so the plain call decides. The
plain call also decides every value not of the literal's class (`1` against `true`, `1.0`
against `1`, a `str` subclass, an array), so the JSON type rules stay in `data_paths` alone;
a value of the literal's class compares as `holds` does, with `==` (and `!=` for FALSE, which
holds for NaN as the plain path's "not a number, so FALSE" does).

Only keys that cannot stand for a non-string key are walked inline (`data_paths.plain_key`),
and only case-sensitive `equals` of a string, number or boolean literal. Switched with the
other in-memory accelerators (`memory_fast.ENABLED`); `tests/test_memory_fast.py` compares both
paths on generated documents.
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import Any, cast

from ...language.data_paths import plain_key
from ...language.fields import Op
from ...language.nodes import Comparison
from . import fast as memory_fast

_CLASSES: dict[type, frozenset[type]] = {
    str: frozenset({str}),
    bool: frozenset({bool}),
    int: frozenset({int, float}),
    float: frozenset({int, float}),
}
"""The exact classes of values compared inline with a literal of each class: a number literal
meets `int` and `float` values alike (`1 == 1.0`, as `holds` has it)."""


def inlined(node: Comparison) -> bool:
    """Whether `node` is a data-path equality this module writes out."""
    return (
        memory_fast.ENABLED
        and bool(node.path)
        and node.op is Op.EQUALS
        and not node.insensitive
        and type(node.value) in _CLASSES
        and all(plain_key(key) for key in node.path)
    )


def equality(
    node: Comparison,
    want: bool,
    document: ast.expr,
    plain: ast.expr,
    local: Callable[[], str],
    bind: Callable[[Any], ast.expr],
) -> ast.expr:
    """The inline test that `node` is `want` (TRUE or FALSE) on the document `document`
    reads; `plain` is the plain path's test, for what the walk cannot decide. `local` names a
    fresh local, `bind` a value the function may read."""
    step = document
    for key in node.path:
        step = _step(step, key, local(), bind(dict))
    value = local()
    classes = _CLASSES[type(node.value)]
    read = ast.NamedExpr(target=ast.Name(value, ast.Store()), value=step)
    cls = ast.Attribute(value=read, attr="__class__", ctx=ast.Load())
    if len(classes) == 1:
        own = _compare(cls, ast.Is(), bind(type(node.value)))
    else:
        own = _compare(cls, ast.In(), bind(classes))
    literal = ast.Constant(cast(Any, node.value))  # a str, int, float or bool (`inlined`)
    compared = _compare(_load(value), ast.Eq() if want else ast.NotEq(), literal)
    other = ast.BoolOp(
        op=ast.And(), values=[_compare(_load(value), ast.IsNot(), ast.Constant(None)), plain]
    )
    return ast.IfExp(test=own, body=compared, orelse=other)


def _step(mapping: ast.expr, key: str, name: str, dict_class: ast.expr) -> ast.expr:
    """`d.get(key) if (d := mapping).__class__ is dict else (None if d is None else ...)`."""
    held = ast.NamedExpr(target=ast.Name(name, ast.Store()), value=mapping)
    is_dict = _compare(ast.Attribute(value=held, attr="__class__", ctx=ast.Load()), ast.Is(),
                       dict_class)  # fmt: skip
    get = ast.Call(
        func=ast.Attribute(value=_load(name), attr="get", ctx=ast.Load()),
        args=[ast.Constant(key)],
        keywords=[],
    )
    unknown = ast.IfExp(
        test=_compare(_load(name), ast.Is(), ast.Constant(None)),
        body=ast.Constant(None),
        orelse=ast.Constant(...),
    )
    return ast.IfExp(test=is_dict, body=get, orelse=unknown)


def _load(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _compare(left: ast.expr, op: ast.cmpop, right: ast.expr) -> ast.expr:
    return ast.Compare(left=left, ops=[op], comparators=[right])
