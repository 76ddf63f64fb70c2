"""Fields declared inside JSON, as a format writer meets them: the one rule every writer
follows (docs/interop.md).

A schema may declare `plan = ("string", ("data", "plan"))`: a field that a back-end reads at
the key `plan` of the JSON column `data`. Another product knows no such declaration, so a
rule naming `plan` would mean a column of that name there, and the reader would read it back
as something else (or refuse it). A writer therefore writes the read the field stands for:

- a format that reads paths inside JSON (JsonLogic's `{"var": "data.plan"}`,
  react-querybuilder's field `data.plan`) gets the condition at the path, which its reader
  reads back as that path's condition: the same contacts;
- a format that has no such path (SQL WHERE, MongoDB) refuses it, naming the field and
  where it is stored;
- a declared date or list has no path form a reader reads as the declaration means (its text
  is compared as text, its items as an array's): refused everywhere, but a date in CEL,
  whose writer first tests its text at the path beside the text's type
  (`cel/json_paths.py`'s `in_json`), and a list in CEL, as `array_contains` at its path.

The place is `Field.read_at`, the rule lowering follows too.
"""

from __future__ import annotations

from dataclasses import replace

from ..language.fields import JSON_VALUE_TYPES, Field, Schema
from ..language.nodes import (
    Blank,
    Comparison,
    IsNull,
    ListTest,
    Node,
    Quantified,
)
from ..language.visitor import Rebuild
from .reading import refuse

_SCALARS = JSON_VALUE_TYPES


def at_paths(node: Node, schema: Schema, title: str, *, paths: bool) -> Node:
    """`node` with each condition on a field declared inside JSON written at its path
    (`paths`: the format reads paths), or a `FilterError` naming the field (it does not, or
    the field is a date or a list)."""
    if not any(f.source for f in schema.fields):
        return node
    return _AtPaths(schema, title, paths).visit(node)


class _AtPaths(Rebuild):
    """Conditions on declared fields moved to their paths; a field reference is kept as it
    is (the readers refuse references to fields inside JSON), an aggregate too."""

    def __init__(self, schema: Schema, title: str, paths: bool) -> None:
        self.schema = schema
        self.title = title
        self.paths = paths

    def placed(self, field: str, path: tuple[str, ...]) -> tuple[str, tuple[str, ...]]:
        """Where a condition on `field` reads, or the refusal of a declaration the format
        cannot write."""
        declared = self.schema.get(field)
        if path or declared is None or not declared.source:
            return field, path
        if not self.paths or declared.type not in _SCALARS:
            raise self.refused(declared)
        return declared.read_at()

    def refused(self, declared: Field) -> Exception:
        stored = ".".join(declared.source)
        if declared.type not in _SCALARS:
            why = (
                f"a {declared.type.value} field declared inside JSON ({stored}) is compared "
                f"as the declaration says, which a condition at a path in {self.title} "
                "does not say"
            )
        else:
            why = (
                f'"{declared.name}" is declared inside JSON ({stored}), and {self.title} has '
                "no condition at a path inside JSON"
            )
        return refuse(declared.name, why, "keep this condition in the JSON form")

    def visit_comparison(self, node: Comparison) -> Node:
        field, path = self.placed(node.field, node.path)
        return node if field == node.field else replace(node, field=field, path=path)

    def visit_is_null(self, node: IsNull) -> Node:
        field, path = self.placed(node.field, node.path)
        return node if field == node.field else IsNull(field, path)

    def visit_blank(self, node: Blank) -> Node:
        field, path = self.placed(node.field, node.path)
        return node if field == node.field else replace(node, field=field, path=path)

    def visit_list_test(self, node: ListTest) -> Node:
        self.placed(node.field, node.path)
        return node

    def visit_quantified(self, node: Quantified) -> Node:
        relation = self.schema.relation(node.relation)
        if relation is None:
            return node
        inner = at_paths(node.where, relation.schema, self.title, paths=self.paths)
        return node if inner is node.where else replace(node, where=inner)
