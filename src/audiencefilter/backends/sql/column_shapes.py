"""The column types `to_sqlalchemy` answers exactly, and the refusal of every other.

Why: a filter compared with a column the library has not proven goes into SQL as it is, and
the answer is whatever the engine makes of it: a native `ENUM` orders by declaration and
refuses `LIKE`, a `uuid` refuses a text literal, a blank-padded `char(n)` ignores trailing
spaces, a `TypeDecorator` that stores cents never sees the literal. So the world is closed:
each SQLAlchemy type class the library knows has a rule here (the field types it holds,
compared as they are or through a known rewrite, or a refusal with its reason and fix), the
support matrix's cells (tests/shapes/columns.py) run every rule marked exact on the real
engines, and a column of any other shape is refused when the expression is built, with a
`FilterError` naming the field, the column, its type and the fix.

A user's subclass of a listed type takes its nearest listed ancestor's rule. A
`TypeDecorator` is its `impl` when it converts nothing (it overrides none of the value
hooks, as a JSON column that only changes `compare_values`); one that converts values on the
way in or out is refused, since the filter's literal is the stored unit's only by chance;
a decorator whose class says `keeps_bound_literals = True` is taken as its `impl`: the
library's own `UtcDateTime` (`sqlite_datetime_column`) turns an aware value into UTC, which
every date-time literal the SQL back-ends bind already is.
A type with variants (`with_variant`) is exact when its own type and every variant are.
An untyped expression (`literal_column`, a function SQLAlchemy does not know) has no rule:
the fix is to give it a type (`type_coerce(expression, String())`).

Collations are mostly not decided here: a `String(collation=...)` is the string it holds,
and the `mode: "insensitive"` rules of each dialect (`dialects/`) decide what a collation
changes. But a MariaDB/MySQL string column declaring a character set other than utf8mb4 (a
`latin1` column: its bytes are not the utf8mb4 literal's), or a utf8mb4 collation no cell
proves (`dialects/mysql.PROVEN_COLLATIONS`), is refused (`declared_charset`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from sqlalchemy import types as sqltypes
from sqlalchemy.dialects import mysql, postgresql, sqlite
from sqlalchemy.dialects.postgresql import ranges
from sqlalchemy.ext.compiler import compiles
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import ColumnElement
from sqlalchemy.sql.visitors import InternalTraversal
from sqlalchemy.types import TypeDecorator, TypeEngine

from ...errors import FilterError, Issue
from ...language.fields import FieldType
from .dialects import DIALECTS
from .dialects.mysql import CHARACTER_SET, CHARACTER_SETS, PROVEN_COLLATIONS

Compared = Literal["as is", "as text", "widened"]
"""How an exact column is compared: as it is; as the text it holds (`AsText`: an enum's
label, a uuid's canonical lower-case form, a `citext` as case-sensitive `text`); or a
single-precision float as the double it holds exactly (`Widened`)."""

STRING, NUMBER, BOOLEAN = FieldType.STRING, FieldType.NUMBER, FieldType.BOOLEAN
DATE, DATETIME, JSON = FieldType.DATE, FieldType.DATETIME, FieldType.JSON


@dataclass(frozen=True)
class Rule:
    """What a column type holds: the scalar field types it answers exactly and how it is
    compared; for every other field type, why it is refused and the fix."""

    holds: frozenset[FieldType]
    compared: Compared = "as is"
    reason: str = ""
    fix: str = ""


@dataclass(frozen=True)
class Verdict:
    """A column's rule for one field type: exact (compared as `compared`) or refused."""

    exact: bool
    compared: Compared = "as is"
    reason: str = ""
    fix: str = ""


def _holds(*kinds: FieldType, compared: Compared = "as is", note: str = "") -> Rule:
    return Rule(frozenset(kinds), compared, note)


def _refused(reason: str, fix: str) -> Rule:
    return Rule(frozenset(), reason=reason, fix=fix)


_TEXT = _holds(STRING)
_NUMBER = _holds(NUMBER)
_AS_TEXT = _holds(STRING, compared="as text")
_BLANK_PADDED = _refused(
    "a blank-padded CHAR(n) compares ignoring trailing spaces on PostgreSQL and MariaDB, "
    "where the field compares the text as it is",
    "declare the column VARCHAR(n) or Text, or map the field to the trimmed text: "
    "columns={field: func.rtrim(column)} typed with type_coerce(..., String())",
)
_BINARY = _refused(
    "a binary column holds bytes, which no field type compares",
    "map the field to a text expression of the bytes (columns={field: ...}) or leave it out",
)
_TIME_OF_DAY = _refused(
    "a time of day or interval is no field type",
    "store a date-time, or map the field to an expression of a field type (columns=)",
)
_NO_FIELD_TYPE = _refused(
    "the column type holds values no field type compares",
    "map the field to an expression of a field type: columns={field: cast(column, Text)}",
)
_SINGLE_FLOAT = _refused(
    "MariaDB's FLOAT is single precision: literals are compared rounded to it",
    "declare the column DOUBLE",
)

_RULES_BY_NAME: tuple[tuple[Rule, tuple[type[Any], ...]], ...] = (
    (
        _TEXT,
        (
            sqltypes.String,
            sqltypes.Text,
            sqltypes.Unicode,
            sqltypes.UnicodeText,
            sqltypes.VARCHAR,
            sqltypes.TEXT,
            mysql.VARCHAR,
            mysql.TEXT,
            mysql.TINYTEXT,
            mysql.MEDIUMTEXT,
            mysql.LONGTEXT,
        ),
    ),
    (_AS_TEXT, (postgresql.CITEXT, sqltypes.Enum, postgresql.ENUM, mysql.ENUM)),
    (_AS_TEXT, (sqltypes.Uuid, sqltypes.UUID)),
    (_BLANK_PADDED, (sqltypes.CHAR, sqltypes.NCHAR, mysql.CHAR, mysql.NCHAR)),
    (
        _refused(
            "NATIONAL VARCHAR is utf8mb3 on MariaDB: it holds no 4-byte character, and "
            "folds under no utf8mb4 collation",
            "declare the column String (Unicode) or VARCHAR(n)",
        ),
        (sqltypes.NVARCHAR, mysql.NVARCHAR),
    ),
    (
        _refused(
            "a MariaDB SET holds a set of labels, which no field type compares",
            "declare the field string[] over a JSON list, or map it to a text expression",
        ),
        (mysql.SET,),
    ),
    (
        _NUMBER,
        (
            sqltypes.Integer,
            sqltypes.SmallInteger,
            sqltypes.BigInteger,
            sqltypes.INTEGER,
            sqltypes.INT,
            sqltypes.SMALLINT,
            sqltypes.BIGINT,
            sqltypes.Numeric,
            sqltypes.NUMERIC,
            sqltypes.DECIMAL,
            sqltypes.Double,
            sqltypes.DOUBLE,
            sqltypes.DOUBLE_PRECISION,
            mysql.INTEGER,
            mysql.BIGINT,
            mysql.SMALLINT,
            mysql.MEDIUMINT,
            mysql.NUMERIC,
            mysql.DECIMAL,
            mysql.DOUBLE,
            postgresql.DOUBLE_PRECISION,
        ),
    ),
    (_holds(NUMBER, BOOLEAN), (mysql.TINYINT,)),
    (
        _holds(NUMBER, compared="widened"),
        (sqltypes.REAL, postgresql.REAL, sqltypes.Float, sqltypes.FLOAT),
    ),
    (_SINGLE_FLOAT, (mysql.FLOAT,)),
    (
        _refused(
            "MariaDB's REAL is DOUBLE or single-precision FLOAT, as the sql_mode says",
            "declare the column DOUBLE",
        ),
        (mysql.REAL,),
    ),
    (_holds(BOOLEAN), (sqltypes.Boolean, sqltypes.BOOLEAN, mysql.BOOLEAN)),
    (_holds(DATE), (sqltypes.Date, sqltypes.DATE, sqlite.DATE)),
    (
        _holds(DATETIME),
        (
            sqltypes.DateTime,
            sqltypes.DATETIME,
            sqltypes.TIMESTAMP,
            sqlite.DATETIME,
            mysql.DATETIME,
            postgresql.TIMESTAMP,
        ),
    ),
    (
        _refused(
            "a TIMESTAMP column of MariaDB converts through the session time zone",
            "declare the column DATETIME(6)",
        ),
        (mysql.TIMESTAMP,),
    ),
    (
        _holds(JSON),
        (sqltypes.JSON, postgresql.JSON, postgresql.JSONB, mysql.JSON, sqlite.JSON),
    ),
    (
        _refused(
            "CLOB is a type of none of the engines the library writes for",
            "declare the column Text",
        ),
        (sqltypes.CLOB,),
    ),
    (
        _refused(
            "SQLite's binary JSONB is not read by the library's JSON functions",
            "declare the column JSON",
        ),
        (sqlite.JSONB,),
    ),
    (_BINARY, (sqltypes.LargeBinary, sqltypes.BINARY, sqltypes.VARBINARY, sqltypes.BLOB)),
    (_BINARY, (postgresql.BYTEA, mysql.TINYBLOB, mysql.MEDIUMBLOB, mysql.LONGBLOB)),
    (_BINARY, (mysql.BLOB, mysql.BINARY, mysql.VARBINARY, mysql.BIT, postgresql.BIT)),
    (_TIME_OF_DAY, (sqltypes.Time, sqltypes.TIME, sqltypes.Interval, postgresql.INTERVAL)),
    (_TIME_OF_DAY, (postgresql.TIME, mysql.TIME, sqlite.TIME)),
    (
        _refused(
            "a YEAR column holds a year MariaDB reads as a number or a date by context",
            "declare the column SMALLINT",
        ),
        (mysql.YEAR,),
    ),
    (
        _refused(
            "the type holds no value: an untyped expression, or a type SQLAlchemy reads as nothing",
            "give the expression a type: columns={field: type_coerce(expression, String())}",
        ),
        (sqltypes.NullType,),
    ),
    (
        _NO_FIELD_TYPE,
        (
            sqltypes.PickleType,
            sqltypes.MatchType,
            sqltypes.TupleType,
            sqltypes.UserDefinedType,
            sqltypes.TypeEngine,
            postgresql.HSTORE,
            postgresql.INET,
            postgresql.CIDR,
            postgresql.MACADDR,
            postgresql.MACADDR8,
            postgresql.MONEY,
            postgresql.OID,
            postgresql.REGCLASS,
            postgresql.REGCONFIG,
            postgresql.TSVECTOR,
            postgresql.TSQUERY,
            postgresql.JSONPATH,
            postgresql.DOMAIN,
            postgresql.NamedType,
            ranges.AbstractRange,
            ranges.AbstractSingleRange,
            ranges.AbstractMultiRange,
            postgresql.INT4RANGE,
            postgresql.INT8RANGE,
            postgresql.NUMRANGE,
            postgresql.DATERANGE,
            postgresql.TSRANGE,
            postgresql.TSTZRANGE,
            postgresql.INT4MULTIRANGE,
            postgresql.INT8MULTIRANGE,
            postgresql.NUMMULTIRANGE,
            postgresql.DATEMULTIRANGE,
            postgresql.TSMULTIRANGE,
            postgresql.TSTZMULTIRANGE,
            mysql.INET4,
            mysql.INET6,
        ),
    ),
    (
        _refused(
            "a list column is only compared as a list field",
            "declare the field as a list type (string[], number[], ...)",
        ),
        (sqltypes.ARRAY, postgresql.ARRAY),
    ),
)

RULES: Mapping[type[Any], Rule] = {cls: rule for rule, classes in _RULES_BY_NAME for cls in classes}
"""The rule of each SQLAlchemy type class; a subclass not listed takes its nearest
ancestor's (`rule_of`). tests/test_column_gate.py holds every type class of SQLAlchemy and
its dialect modules listed, and every exact rule run by a cell of the support matrix."""

_VALUE_HOOKS = (
    "process_bind_param",
    "process_result_value",
    "process_literal_param",
    "bind_expression",
    "column_expression",
    "bind_processor",
    "result_processor",
    "literal_processor",
    "coerce_compared_value",
)
"""The `TypeDecorator` methods through which a decorator changes a value or its SQL."""


def converts(decorator: TypeDecorator[Any]) -> str | None:
    """The first value hook a `TypeDecorator` overrides (None: it converts nothing, and is
    compared as its `impl`)."""
    cls = type(decorator)
    if getattr(cls, "keeps_bound_literals", False):
        return None
    return next(
        (hook for hook in _VALUE_HOOKS if getattr(cls, hook) is not getattr(TypeDecorator, hook)),
        None,
    )


FOREIGN_RULES: Mapping[tuple[str, str], Rule] = {
    ("duckdb_engine.datatypes", "UHugeInteger"): _refused(
        "DuckDB casts an integer literal to the UHUGEINT column's type: a negative one fails "
        "when the query runs",
        "declare the column HUGEINT or DECIMAL(38,0)",
    ),
}
"""Rules of type classes of dialects the library does not import (duckdb_engine), by module
and class name: checked before their SQLAlchemy ancestors' (`UHugeInteger` is an Integer)."""


def rule_of(type_: TypeEngine[Any]) -> Rule:
    """The rule of a type's class, or of its nearest listed ancestor."""
    for cls in type(type_).__mro__:
        foreign = FOREIGN_RULES.get((cls.__module__, cls.__qualname__))
        if foreign is not None:
            return foreign
        if cls in RULES:
            return RULES[cls]
    raise LookupError(type_)  # TypeEngine, every type's ancestor, has a rule


def verdict(type_: TypeEngine[Any], kind: FieldType) -> Verdict:
    """Whether a column of `type_` answers field type `kind` exactly, and how."""
    if isinstance(type_, TypeDecorator):
        hook = converts(type_)
        if hook is not None:
            return Verdict(
                False,
                reason=f"its TypeDecorator {type(type_).__name__} converts values "
                f"({hook}), which a filter's literal never goes through",
                fix="map the field to the stored column as its stored type "
                "(columns={field: type_coerce(column, <impl type>)}) and declare the "
                "field in the stored unit",
            )
        return verdict(type_.impl_instance, kind)
    found = _plain(type_, kind)
    for variant in getattr(type_, "_variant_mapping", {}).values():
        if found.exact and not verdict(variant, kind).exact:
            return verdict(variant, kind)
    return found


def _plain(type_: TypeEngine[Any], kind: FieldType) -> Verdict:
    element = kind.element
    if element is not None:
        return _list(type_, kind, element)
    rule = rule_of(type_)
    if kind in rule.holds:
        refused = _declared_text(type_) if kind is STRING else None
        return refused or Verdict(True, rule.compared)
    if rule.holds:
        held = " or ".join(sorted(k.value for k in rule.holds))
        return Verdict(
            False,
            reason=f"it holds {held}, not {kind.value}",
            fix=f"declare the field as {held}, or map it to an expression of a "
            f"{kind.value} type (columns={{field: cast(column, ...)}})",
        )
    return Verdict(False, reason=rule.reason, fix=rule.fix)


def declared_charset(type_: TypeEngine[Any]) -> str | None:
    """The MariaDB/MySQL character set a string type declares: its `charset=`, `ascii=True`
    (latin1) or `unicode=True` (ucs2), else the set its declared collation is named after
    (`latin1_swedish_ci`); None when it declares neither (a collation of another engine, such
    as PostgreSQL's `ci` or SQLite's `NOCASE`, names no set)."""
    if getattr(type_, "ascii", False):
        return "latin1"
    if getattr(type_, "unicode", False):
        return "ucs2"
    charset = getattr(type_, "charset", None)
    if charset:
        return str(charset).lower()
    collation = str(getattr(type_, "collation", None) or "").lower()
    return next((c for c in CHARACTER_SETS if _named(collation, c)), None)


def _named(collation: str, charset: str) -> bool:
    return collation == charset or collation.startswith(charset + "_")


def _declared_text(type_: TypeEngine[Any]) -> Verdict | None:
    """The refusal of a string column whose declared character set or collation the library's
    MariaDB rules do not prove (`dialects/mysql.py`): text in another set is compared as that
    set's bytes against utf8mb4 literals, and an unproven collation may fold otherwise."""
    charset = declared_charset(type_)
    collation = str(getattr(type_, "collation", None) or "").lower()
    return None if charset is None else _text_verdict(charset, collation)


def _text_verdict(charset: str, collation: str) -> Verdict | None:
    if charset != CHARACTER_SET:
        return Verdict(
            False,
            reason=f"its text is held in the {charset} character set and compared as its "
            f"bytes, where the library writes {CHARACTER_SET} literals",
            fix=f"convert the column to {CHARACTER_SET} (ALTER TABLE ... MODIFY ... CHARACTER "
            f"SET {CHARACTER_SET}), or map the field to CONVERT(column USING {CHARACTER_SET}) "
            "typed with type_coerce(..., String())",
        )
    if not collation or collation in PROVEN_COLLATIONS:
        return None
    return Verdict(
        False,
        reason=f"its collation {collation} is not one the support matrix proves",
        fix="declare one of " + ", ".join(sorted(PROVEN_COLLATIONS)) + ", or none",
    )


_TABLE_OPTIONS = ("default charset", "charset", "default character set", "character set")


def _table_text(column: ColumnElement[Any]) -> Verdict | None:
    """The refusal of a string column declaring no character set of its own in a MariaDB/MySQL
    table whose default is another (`DEFAULT CHARSET=latin1`, read by reflection into the
    table's `mysql_` options), or whose default collation no cell proves."""
    options = getattr(getattr(column, "table", None), "kwargs", None) or {}
    found = {k.split("_", 1)[1]: str(v).lower() for k, v in options.items() if "_" in k}
    charset = next((found[k] for k in _TABLE_OPTIONS if k in found), None)
    collation = found.get("collate", found.get("default collate", ""))
    charset = charset or next((c for c in CHARACTER_SETS if _named(collation, c)), None)
    return None if charset is None else _text_verdict(charset, collation)


def _list(type_: TypeEngine[Any], kind: FieldType, element: FieldType) -> Verdict:
    """A list field: a native array of items that hold the element type as they are (a
    `citext[]` too: the list tests compare its items case-sensitively), or a JSON list."""
    if isinstance(type_, sqltypes.JSON):
        return Verdict(True)
    if not isinstance(type_, sqltypes.ARRAY):
        return Verdict(
            False,
            reason=f"a {kind.value} field is held by an array or a JSON list",
            fix="map the field to the list column, or declare it a scalar type",
        )
    item = verdict(type_.item_type, element)
    citext = isinstance(type_.item_type, postgresql.CITEXT)
    if item.exact and (item.compared == "as is" or citext):
        return Verdict(True)
    if item.exact and item.compared == "widened":
        return Verdict(True, "widened")
    reason = item.reason or f"its items are compared {item.compared}, which lists are not"
    return Verdict(False, reason=f"its items: {reason}", fix=item.fix or "declare text[] items")


def gated(field: str, kind: FieldType, column: ColumnElement[Any]) -> ColumnElement[Any]:
    """The column of `field` as it is compared, or a `FilterError` naming the field, the
    column, its type and the fix when its shape is not one the support matrix proves."""
    found = verdict(column.type, kind)
    if found.exact and kind is STRING and declared_charset(column.type) is None:
        found = _table_text(column) or found
    if not found.exact:
        raise refused_column(field, kind, column, found)
    plain = column.type
    while isinstance(plain, TypeDecorator):
        plain = plain.impl_instance
    if plain is not column.type:
        column = TypeCoerced(column, plain)
    if found.compared == "as text":
        return AsText(column, uuid=isinstance(plain, sqltypes.Uuid))
    if found.compared == "widened":
        return Widened(column) if kind.element is None else WidenedArray(column)
    return column


def refused_column(
    field: str, kind: FieldType, column: ColumnElement[Any], found: Verdict
) -> FilterError:
    """The refusal of a column shape, naming the field, the column and its type."""
    message = (
        f"the {kind.value} field's column {_name(column)} is {_type_name(column.type)}, "
        f"which the library does not compare exactly: {found.reason}"
    )
    return FilterError([Issue(path=field, message=message, suggestion=found.fix)])


def _name(column: ColumnElement[Any]) -> str:
    table = getattr(getattr(column, "table", None), "name", None)
    name = getattr(column, "name", None)
    if name is None:
        return f"expression {str(column)[:60]!r}"
    return f"{table}.{name}" if table else str(name)


def _type_name(type_: TypeEngine[Any]) -> str:
    """The type as DDL (`CHAR(5)`) and its class, as the user declared it."""
    try:
        ddl = str(type_)
    except Exception:  # a type its own dialect alone compiles
        ddl = ""
    cls = type(type_).__name__
    return f"{ddl} ({cls})" if ddl and ddl != cls else cls


class TypeCoerced(ColumnElement[Any]):
    """A column read as another type with no SQL of its own (`type_coerce`, kept a column
    element so later checks see the type)."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]
    inherit_cache = True

    def __init__(self, element: ColumnElement[Any], type_: TypeEngine[Any]) -> None:
        self.element = element
        self.type = type_


@compiles(TypeCoerced)
def _compile_coerced(element: TypeCoerced, compiler: SQLCompiler, **kw: Any) -> str:
    return compiler.process(element.element, **kw)


class AsText(ColumnElement[Any]):
    """A column as the text it holds: `CAST(... AS TEXT)` (`VARCHAR` on DuckDB, `CHAR` on
    MariaDB); a uuid that SQLite keeps as 32 hex digits (SQLAlchemy's storage there) in the
    canonical hyphenated form PostgreSQL, DuckDB and MariaDB print."""

    _traverse_internals = [
        ("element", InternalTraversal.dp_clauseelement),
        ("uuid", InternalTraversal.dp_plain_obj),
    ]
    type = sqltypes.Text()
    inherit_cache = True

    def __init__(self, element: ColumnElement[Any], *, uuid: bool = False) -> None:
        self.element = element
        self.uuid = uuid


_TEXT_TYPE = {"duckdb": "VARCHAR", "mysql": "CHAR", "mariadb": "CHAR"}


@compiles(AsText)
def _compile_as_text(element: AsText, compiler: SQLCompiler, **kw: Any) -> str:
    sql = compiler.process(element.element, **kw)
    name = compiler.dialect.name
    if element.uuid and name == "sqlite":
        parts = ((1, 8), (9, 4), (13, 4), (17, 4), (21, 12))
        return " || '-' || ".join(f"substr({sql}, {a}, {n})" for a, n in parts)
    return f"CAST({sql} AS {_TEXT_TYPE.get(name, 'TEXT')})"


class Widened(ColumnElement[Any]):
    """A `REAL` column as the double it holds exactly (`Dialect.widened_float`): PostgreSQL
    compares `real IN (0.3, 2.5)` at single precision, where 0.3 is the stored `real`."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]
    type = sqltypes.Double()
    inherit_cache = True

    def __init__(self, element: ColumnElement[Any]) -> None:
        self.element = element


class WidenedArray(ColumnElement[Any]):
    """An array of floats as the doubles its items hold exactly: a generic `Float` is single
    precision on DuckDB, whose `list_contains` would meet 0.3 at single precision."""

    _traverse_internals = [("element", InternalTraversal.dp_clauseelement)]
    type = sqltypes.ARRAY(sqltypes.Double())
    inherit_cache = True

    def __init__(self, element: ColumnElement[Any]) -> None:
        self.element = element


@compiles(WidenedArray)
def _compile_widened_array(element: WidenedArray, compiler: SQLCompiler, **kw: Any) -> str:
    return _widened(element.element, compiler, "[]", **kw)


@compiles(Widened)
def _compile_widened(element: Widened, compiler: SQLCompiler, **kw: Any) -> str:
    return _widened(element.element, compiler, "", **kw)


def _widened(element: ColumnElement[Any], compiler: SQLCompiler, suffix: str, **kw: Any) -> str:
    """`element` cast to the dialect's double (`suffix` "[]" for an array of them)."""
    sql = compiler.process(element, **kw)
    dialect = DIALECTS.get(compiler.dialect.name)
    widened = dialect.widened_float if dialect is not None else "DOUBLE PRECISION"
    return f"CAST({sql} AS {widened}{suffix})" if widened else sql
