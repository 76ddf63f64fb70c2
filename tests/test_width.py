"""A type's and an operator's real width: the files docs/architecture.md says a new field type
or a new operator touches are the files that name one in code.

A module names a type when it reads a `FieldType` member (`FieldType.DATE`, `af.FieldType.DATE`)
and an operator when it reads an `Op` member; a builder script when it quotes a type's or an
operator's JSON spelling. The field table itself (`language/fields.py`) is where both are
declared, so it is in neither list. A new branch on a type or an operator in a module the list
leaves out, or a list entry no code needs any more, fails here until the documentation says so.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from audiencefilter.language.fields import FieldType, Op

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "src" / "audiencefilter"
DOC = ROOT / "docs" / "architecture.md"
TABLE = "language/fields.py"
SCRIPTS = PACKAGE / "service" / "static"
#: Spellings too common in a script to mean an operator or a type there (`in`, `not`, the JSON
#: Schema words); the distinctive ones are enough to find the scripts that list them.
_PLAIN_WORDS = frozenset({"in", "equals", "string", "number", "boolean", "json"})


def _members(tree: ast.AST, enum: str) -> bool:
    """Whether the module reads a member of `enum` (`enum.MEMBER`, through any prefix)."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and node.attr.isupper():
            owner = node.value
            name = owner.attr if isinstance(owner, ast.Attribute) else getattr(owner, "id", "")
            if name == enum:
                return True
    return False


def _python(enum: str) -> set[str]:
    found = set()
    for path in PACKAGE.rglob("*.py"):
        relative = path.relative_to(PACKAGE).as_posix()
        if relative != TABLE and _members(ast.parse(path.read_text()), enum):
            found.add(relative)
    return found


def _scripts(spellings: set[str]) -> set[str]:
    words = "|".join(re.escape(s) for s in sorted(spellings - _PLAIN_WORDS))
    quoted = re.compile(rf"""["'`](?:{words})["'`]""")
    return {
        path.relative_to(PACKAGE).as_posix()
        for path in SCRIPTS.rglob("*.js")
        if quoted.search(path.read_text())
    }


def documented(kind: str) -> set[str]:
    """The files listed between `<!-- width:kind -->` and `<!-- /width:kind -->`, one
    backquoted path per bullet."""
    text = DOC.read_text()
    match = re.search(rf"<!-- width:{kind} -->\n(.*?)<!-- /width:{kind} -->", text, re.S)
    assert match, f"docs/architecture.md has no list marked width:{kind}"
    return set(re.findall(r"`([^`]+\.(?:py|js))`", match.group(1)))


def in_code(kind: str) -> set[str]:
    if kind == "type":
        return _python("FieldType") | _scripts({t.value for t in FieldType})
    return _python("Op") | _scripts({o.value for o in Op})


@pytest.mark.parametrize("kind", ["type", "operator"])
def test_documented_width_is_the_code(kind: str) -> None:
    code, docs = in_code(kind), documented(kind)
    assert not code - docs, f"name a {kind} in code, missing from the docs: {sorted(code - docs)}"
    assert not docs - code, f"listed for a {kind}, naming none in code: {sorted(docs - code)}"


def test_scripts_are_found() -> None:
    """The builder's operator controls are found, so the script search cannot pass by missing
    everything."""
    assert "service/static/builder/model.js" in in_code("operator")


def test_short_operator_list_is_inside_the_width() -> None:
    """The short "Files a new operator touches" list names only the field table and modules
    that do name an operator, so it cannot keep a file that no longer decides one."""
    text = DOC.read_text()
    start = text.index("### Files a new operator touches")
    paragraph = text[start : text.index("###", start + 3)]
    modules = set(re.findall(r"`([a-z_/]+\.py)`", paragraph))
    named = {m for m in modules if not m.startswith("tests/")} - {TABLE}
    assert named, "the short operator list names no module"
    assert named <= in_code("operator"), sorted(named - in_code("operator"))
