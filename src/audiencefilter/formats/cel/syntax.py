"""A CEL expression as a small syntax tree, by recursive descent with an explicit depth bound.

Design choices:
- The parser follows CEL's grammar (`?:`, `||`, `&&`, relations, `+ -`, `* / %`, unary `!`
  and `-`, member selection, calls, indexes, list and map literals) so that everything CEL
  can say is understood as CEL means it; the reader (`reader.py`) then takes the subset that maps
  onto filters and refuses the rest by name at its own position.
- `||` and `&&` chains are read in loops into n-ary nodes, and every other nesting (a
  parenthesis, a unary operator, a call's arguments, a list's items) counts one level against
  the library's depth limit: no text can make the parser recurse without bound.
- Each node keeps the offset of the token that names it (the operator, the name, the
  literal), which is where an error about it points.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...language.limits import Limits
from .lexer import Token, Tokens, describe


@dataclass(frozen=True, slots=True)
class Literal:
    """`"FR"`, `100.0`, `true`, `null`: `kind` is the lexer's (`string`, `double`, `int`,
    `uint`, `bytes`) or `bool`/`null`."""

    kind: str
    value: object
    text: str
    offset: int


@dataclass(frozen=True, slots=True)
class Name:
    """An identifier: `points`."""

    name: str
    offset: int


@dataclass(frozen=True, slots=True)
class Select:
    """`operand.field`: a key of a map, a field of a row."""

    operand: Node
    field: str
    offset: int


@dataclass(frozen=True, slots=True)
class Call:
    """`function(args)` or `target.function(args)` (a method: `email.startsWith("a")`)."""

    target: Node | None
    function: str
    args: tuple[Node, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class Index:
    """`operand[key]`."""

    operand: Node
    key: Node
    offset: int


@dataclass(frozen=True, slots=True)
class ListOf:
    """`[a, b]`."""

    items: tuple[Node, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class MapOf:
    """`{k: v}`: read only to be refused by name."""

    offset: int


@dataclass(frozen=True, slots=True)
class Unary:
    """`!x` or `-x`."""

    op: str
    operand: Node
    offset: int


@dataclass(frozen=True, slots=True)
class Binary:
    """`a op b` for a relation (`==`, `<`, `in`...) or arithmetic (`+`, `*`...)."""

    op: str
    left: Node
    right: Node
    offset: int


@dataclass(frozen=True, slots=True)
class Logic:
    """`a && b && c` or `a || b`: n-ary, as CEL evaluates them (commutatively)."""

    op: str
    items: tuple[Node, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class Choice:
    """`c ? a : b`: read as the guard of a list of numbers (`lists.py`), refused
    elsewhere."""

    offset: int
    condition: Node | None = None
    then: Node | None = None
    otherwise: Node | None = None


Node = Literal | Name | Select | Call | Index | ListOf | MapOf | Unary | Binary | Logic | Choice
"""A node of a CEL expression."""

RELATIONS = ("==", "!=", "<", "<=", ">", ">=", "in")
_SUMS = ("+", "-")
_PRODUCTS = ("*", "/", "%")
_LITERAL_WORDS = {"true": True, "false": False, "null": None}


def parse(text: str, limits: Limits) -> Node:
    """The syntax tree of `text`.

    Raises:
        FilterError: the first syntax error, at its line and column, or nesting past
            `limits.max_depth`.
    """
    parser = _Parser(Tokens(text), limits)
    tree = parser.expr(0)
    end = parser.tokens.current
    if end.kind != "end":
        raise parser.unexpected("an operator such as &&, || or ==")
    return tree


class _Parser:
    def __init__(self, tokens: Tokens, limits: Limits) -> None:
        self.tokens = tokens
        self.limits = limits

    def unexpected(self, expected: str) -> Exception:
        token = self.tokens.current
        return self.tokens.error(
            token.offset, f"expected {expected}, found {describe(token)}", _hint(token)
        )

    def deeper(self, depth: int) -> int:
        if depth >= self.limits.max_depth:
            token = self.tokens.current
            raise self.tokens.error(
                token.offset,
                f"the expression is nested deeper than {self.limits.max_depth} levels",
                "flatten it: && and || take any number of conditions",
            )
        return depth + 1

    def expect(self, text: str, what: str) -> Token:
        if not self.tokens.at(text):
            raise self.unexpected(what)
        return self.tokens.advance()

    def expr(self, depth: int) -> Node:
        depth = self.deeper(depth)
        first = self.logic("||", depth)
        if not self.tokens.at("?"):
            return first
        offset = self.tokens.advance().offset
        then = self.logic("||", depth)
        self.expect(":", '":" of the conditional c ? a : b')
        return Choice(offset, first, then, self.expr(depth))

    def logic(self, op: str, depth: int) -> Node:
        """`a || b || ...` (or `&&`) read in a loop; `&&` binds tighter."""
        inner = "&&" if op == "||" else None
        items = [self.logic(inner, depth) if inner else self.relation(depth)]
        offset = self.tokens.current.offset
        while self.tokens.at(op):
            self.tokens.advance()
            items.append(self.logic(inner, depth) if inner else self.relation(depth))
        return items[0] if len(items) == 1 else Logic(op, tuple(items), offset)

    def relation(self, depth: int) -> Node:
        left = self.arithmetic(_SUMS, depth)
        if not self.tokens.at(*RELATIONS):
            return left
        token = self.tokens.advance()
        right = self.arithmetic(_SUMS, depth)
        if self.tokens.at(*RELATIONS):
            raise self.unexpected("&&, || or the end of the condition (one comparison at a time)")
        return Binary(token.text, left, right, token.offset)

    def arithmetic(self, ops: tuple[str, ...], depth: int) -> Node:
        """Sums of products, read in loops; kept only to be refused by name."""
        inner = _PRODUCTS if ops == _SUMS else None
        left = self.arithmetic(inner, depth) if inner else self.unary(depth)
        while self.tokens.at(*ops):
            token = self.tokens.advance()
            right = self.arithmetic(inner, depth) if inner else self.unary(depth)
            left = Binary(token.text, left, right, token.offset)
        return left

    def unary(self, depth: int) -> Node:
        if self.tokens.at("!", "-"):
            token = self.tokens.advance()
            return Unary(token.text, self.unary(self.deeper(depth)), token.offset)
        return self.member(depth)

    def member(self, depth: int) -> Node:
        node = self.primary(depth)
        while self.tokens.at(".", "["):
            token = self.tokens.advance()
            if token.text == "[":
                key = self.expr(depth)
                self.expect("]", '"]"')
                node = Index(node, key, token.offset)
                continue
            name = self.tokens.current
            if name.kind != "ident":
                raise self.unexpected("a field or method name after the dot")
            self.tokens.advance()
            if self.tokens.at("("):
                node = Call(node, name.text, self.arguments(depth), name.offset)
            else:
                node = Select(node, name.text, name.offset)
        return node

    def arguments(self, depth: int) -> tuple[Node, ...]:
        self.expect("(", '"("')
        return self.items(")", depth)

    def items(self, closing: str, depth: int) -> tuple[Node, ...]:
        """Expressions separated by commas up to `closing` (a trailing comma allowed)."""
        found: list[Node] = []
        while not self.tokens.at(closing):
            found.append(self.expr(depth))
            if not self.tokens.at(","):
                break
            self.tokens.advance()
        self.expect(closing, f'"," or "{closing}"')
        return tuple(found)

    def primary(self, depth: int) -> Node:
        token = self.tokens.current
        if token.kind == "ident":
            return self.name(token, depth)
        if token.kind in ("string", "bytes", "int", "uint", "double"):
            self.tokens.advance()
            return Literal(token.kind, token.value, token.text, token.offset)
        if self.tokens.at("("):
            self.tokens.advance()
            inner = self.expr(depth)
            self.expect(")", '")"')
            return inner
        if self.tokens.at("["):
            self.tokens.advance()
            return ListOf(self.items("]", self.deeper(depth)), token.offset)
        if self.tokens.at("{"):
            self.skip_map(depth)
            return MapOf(token.offset)
        if self.tokens.at("."):  # a name from the root container: `.points`
            self.tokens.advance()
            return self.primary(depth)
        raise self.unexpected("a name, a literal, ( or [")

    def name(self, token: Token, depth: int) -> Node:
        self.tokens.advance()
        if token.text in _LITERAL_WORDS:
            value = _LITERAL_WORDS[token.text]
            kind = "null" if value is None else "bool"
            return Literal(kind, value, token.text, token.offset)
        if self.tokens.at("("):
            return Call(None, token.text, self.arguments(depth), token.offset)
        return Name(token.text, token.offset)

    def skip_map(self, depth: int) -> None:
        """A map literal `{k: v, ...}`, read to its end so that a later error is found."""
        self.tokens.advance()
        depth = self.deeper(depth)
        while not self.tokens.at("}"):
            self.expr(depth)
            self.expect(":", '":" between a key and its value')
            self.expr(depth)
            if not self.tokens.at(","):
                break
            self.tokens.advance()
        self.expect("}", '"," or "}"')


def _hint(token: Token) -> str:
    if token.kind == "ident" and token.text.lower() in ("and", "or", "not"):
        spelled = {"and": "&&", "or": "||", "not": "!"}[token.text.lower()]
        return f"CEL writes {token.text.lower()} as {spelled}"
    return 'write conditions such as points >= 100.0 && country in ["FR", "DE"]'
