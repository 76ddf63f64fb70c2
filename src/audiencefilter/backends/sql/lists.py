"""List fields in SQL: how each engine stores a list and tests its items (`language/lists.py`).

Storage, per engine (docs/backends.md, "Lists"):
- PostgreSQL: a native array (`text[]`, `numeric[]`, `boolean[]`, `timestamptz[]`), tested
  with `@>`, `&&` and `=` (which an index on the array can serve), and through `unnest` when
  case-insensitive.
- DuckDB: a native LIST (`VARCHAR[]`, `DOUBLE[]`, `BOOLEAN[]`, `TIMESTAMPTZ[]`), tested with
  `list_filter`. Its numbers are doubles, so an integer no double holds (2^53 + 1) matches no
  item: it is dropped here, before DuckDB could round it to a neighbour.
- SQLite: JSON text holding an array, read with `json_each`, each item tested together with
  its JSON type (`true` is no number, `"1"` no number). Date-time lists are refused: JSON has
  no date-time type, and SQLite has no exact parse of ISO 8601 text to the microsecond.
- MySQL/MariaDB: JSON holding an array, its items numbered by `JSON_TABLE` and read with
  their JSON type, as data paths are read (`dialects/mysql.py`); numbers compare as doubles
  there, so an integer no double holds matches no item. Date-time lists are refused, as on
  SQLite.
- Spark SQL (and PySpark, which writes it through `F.expr`): an `array` column (`array<string>`,
  `array<double>`, `array<boolean>`, `array<timestamp>`), tested with `exists` over a lambda
  whose NULL is FALSE (Spark's `exists` is three-valued on null items); numbers compare as
  doubles, as on DuckDB.

Every test is written for a present list and wrapped in `CASE WHEN <column> IS NOT NULL THEN
... END`, so a null list is UNKNOWN whatever the operator, as `lists.truth` has it; null items
are passed over (an item test on NULL is never TRUE, and `COALESCE(..., FALSE)` where a
position is compared).

JSON arrays at a data path (`array_test`: `array_contains`, `array_starts_with`,
`array_ends_with`) are read as each engine reads other data paths, each item with its JSON
type; UNKNOWN where the path finds nothing or JSON null, FALSE for another JSON type.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from ...language.fields import FieldType, ListOp
from ...language.lists import refused
from ...language.nodes import ListTest
from ...language.values import double_exact

if TYPE_CHECKING:
    from .text import SqlWriter

_PG_TYPES = {
    FieldType.STRING: "text",
    FieldType.NUMBER: "numeric",
    FieldType.BOOLEAN: "boolean",
    FieldType.DATETIME: "timestamptz",
}


def list_test(writer: SqlWriter, node: ListTest, column: str) -> str:
    """`node` on the list column `column`, in the writer's dialect; every literal through the
    writer, in the order written, so placeholders and parameters stay in step."""
    kind = writer.schema[node.field].type
    element = kind.element
    assert element is not None
    name = writer.dialect.name
    if name == "postgresql":
        test = _postgresql(writer, node, column, element)
    elif name == "duckdb":
        test = _duckdb(writer, node, column, element)
    elif name == "sqlite":
        if element is FieldType.DATETIME:
            raise refused(node, "SQLite", "a JSON array holds date-times as text")
        test = _sqlite(writer, node, column, element)
    elif name == "spark":
        test = _spark(writer, node, column, element)
    elif name == "mysql":
        if element is FieldType.DATETIME:
            raise refused(node, "MySQL/MariaDB", "a JSON array holds date-times as text")
        test = _mysql(writer, node, column, element)
    else:
        raise refused(node, name, "lists are stored and compared differently there")
    return f"CASE WHEN {column} IS NOT NULL THEN {test} END"


def _literal(writer: SqlWriter, element: FieldType) -> Callable[[Any], str]:
    if element is FieldType.STRING:
        return writer.text
    return writer.number if element is FieldType.NUMBER else writer.scalar


def _all(tests: list[str]) -> str:
    return "(" + " AND ".join(tests) + ")" if len(tests) > 1 else tests[0]


def _postgresql(writer: SqlWriter, node: ListTest, column: str, element: FieldType) -> str:
    render = _literal(writer, element)
    if node.op is ListOp.IS_EMPTY:
        return f"cardinality({column}) = 0"
    subject = column
    if node.insensitive:
        folded = writer.dialect.fold("v")
        subject = (
            f"ARRAY(SELECT {folded} FROM unnest({column}) WITH ORDINALITY AS e(v, i) ORDER BY i)"
        )
    values = ", ".join(render(v) for v in node.value)
    array = f"CAST(ARRAY[{values}] AS {_PG_TYPES[element]}[])"
    operator = {ListOp.HAS_SOME: "&&", ListOp.EQUALS: "="}.get(node.op, "@>")
    return f"{subject} {operator} {array}"


def _duckdb(writer: SqlWriter, node: ListTest, column: str, element: FieldType) -> str:
    if node.op is ListOp.IS_EMPTY:
        return f"len({column}) = 0"
    values: tuple[Any, ...] = node.value
    if element is FieldType.NUMBER:
        # DOUBLE items: an integer no double holds equals none of them.
        values = tuple(v for v in values if double_exact(v))
        if len(values) < len(node.value) and node.op is not ListOp.HAS_SOME:
            return writer.dialect.false
        if not values:
            return writer.dialect.false
    render = _literal(writer, element)
    item = writer.dialect.fold("x") if node.insensitive else "x"
    if node.op is ListOp.EQUALS:
        tests = [f"len({column}) = {len(values)}"]
        for index, value in enumerate(values, start=1):
            at = f"{column}[{index}]"
            at = writer.dialect.fold(at) if node.insensitive else at
            tests.append(f"COALESCE({at} = {render(value)}, FALSE)")
        return _all(tests)
    if node.op is ListOp.HAS_EVERY:
        return _all(
            [f"len(list_filter({column}, lambda x: {item} = {render(v)})) > 0" for v in values]
        )
    choices = ", ".join(render(v) for v in values)
    return f"len(list_filter({column}, lambda x: {item} IN ({choices}))) > 0"


_SQLITE_TYPES = {
    FieldType.STRING: "('text')",
    FieldType.NUMBER: "('integer', 'real')",
}


def _sqlite(writer: SqlWriter, node: ListTest, column: str, element: FieldType) -> str:
    if node.op is ListOp.IS_EMPTY:
        return f"json_array_length({column}) = 0"
    render = _literal(writer, element)
    item = writer.dialect.fold("e.value") if node.insensitive else "e.value"

    def matches(value: Any) -> str:
        if element is FieldType.BOOLEAN:
            return f"e.type = '{'true' if value else 'false'}'"
        return f"e.type IN {_SQLITE_TYPES[element]} AND {item} = {render(value)}"

    def exists(condition: str) -> str:
        return f"EXISTS (SELECT 1 FROM json_each({column}) AS e WHERE {condition})"

    if node.op is ListOp.EQUALS:
        tests = [f"json_array_length({column}) = {len(node.value)}"]
        for index, value in enumerate(node.value):
            tests.append(exists(f"e.key = {index} AND {matches(value)}"))
        return _all(tests)
    if node.op is ListOp.HAS_EVERY:
        return _all([exists(matches(v)) for v in node.value])
    return exists("(" + " OR ".join(matches(v) for v in node.value) + ")")


def _double_items(node: ListTest, element: FieldType) -> tuple[Any, ...] | None:
    """The literals an engine comparing numbers as doubles can match: an integer no double
    holds equals no item. None when the test is then FALSE for every present list."""
    if element is not FieldType.NUMBER:
        return node.value
    values = tuple(v for v in node.value if double_exact(v))
    if not values or (len(values) < len(node.value) and node.op is not ListOp.HAS_SOME):
        return None
    return values


def _mysql(writer: SqlWriter, node: ListTest, column: str, element: FieldType) -> str:
    dialect = writer.dialect
    if node.op is ListOp.IS_EMPTY:
        return f"JSON_LENGTH({column}) = 0"
    values = _double_items(node, element)
    if values is None:
        return dialect.false
    render = _literal(writer, element)
    names = ", ".join(f"'{name}'" for name in dialect.json_types[element])

    def matches(path: str, value: Any) -> str:
        of_type = f"{dialect.json_type(column, [], path)} IN ({names})"
        item = dialect.json_value(column, [], path, element)
        if element is FieldType.BOOLEAN:
            return f"({of_type} AND {item} = {dialect.boolean(bool(value))})"
        if element is FieldType.STRING:
            item = dialect.exact(dialect.fold(item) if node.insensitive else item)
        return f"({of_type} AND {item} = {render(value)})"

    def exists(value: Any) -> str:
        path = "CONCAT('$[', af_e.o - 1, ']')"
        return (
            f"EXISTS (SELECT 1 FROM JSON_TABLE({column}, '$[*]' COLUMNS (o FOR ORDINALITY)) "
            f"AS af_e WHERE {matches(path, value)})"
        )

    if node.op is ListOp.EQUALS:
        tests = [f"JSON_LENGTH({column}) = {len(values)}"]
        tests += [matches(f"'$[{index}]'", value) for index, value in enumerate(values)]
        return _all(tests)
    if node.op is ListOp.HAS_EVERY:
        return _all([exists(v) for v in values])
    return (
        "(" + " OR ".join(exists(v) for v in values) + ")" if len(values) > 1 else exists(values[0])
    )


# ---- JSON arrays at a data path (`array_contains`, `array_starts_with`, `array_ends_with`) ----


def array_test(writer: SqlWriter, node: ListTest) -> str:
    """`node` on the JSON array at `node.path` of a JSON column, as `lists.array_truth` has
    it: UNKNOWN where the path finds nothing or JSON null, FALSE for another JSON type, else
    the test of the items, each literal against items of its own JSON type."""
    name = writer.dialect.name
    if name == "postgresql":
        return _postgresql_array(writer, node)
    if name == "sqlite":
        return _sqlite_array(writer, node)
    if name == "mysql" and writer.dialect.json_path(node.path) is not None:
        return _mysql_array(writer, node)
    if name == "duckdb" and (writer.dialect.json_path(node.path) or "").startswith("$"):
        return _duckdb_array(writer, node)
    if name == "spark":
        return _spark_array(writer, node)
    raise refused(node, name, "JSON arrays at a data path are not read there yet")


def _pg_item(writer: SqlWriter, item: Callable[[], str], value: Any, insensitive: bool) -> str:
    """The item `item()` (written anew at each use: it may hold placeholders) equals `value`
    as a JSON value of the literal's type; pieces are written in the order they appear."""
    if isinstance(value, bool):
        return f"{item()} = CAST({writer.text('true' if value else 'false')} AS JSONB)"
    if isinstance(value, str):
        of_type = f"jsonb_typeof({item()}) = 'string'"
        text = f"({item()} #>> '{{}}')"
        text = writer.dialect.fold(text) if insensitive else text
        return f"({of_type} AND {text} = {writer.text(value)})"
    of_type = f"jsonb_typeof({item()}) = 'number'"
    return f"({of_type} AND CAST({item()} AS NUMERIC) = {writer.number(value)})"


def _postgresql_array(writer: SqlWriter, node: ListTest) -> str:
    column = writer.column(node.field)

    def document() -> str:  # written anew at each use, so parameters stay in order
        return writer.dialect.json_document(column, [writer.text(key) for key in node.path])

    head = f"CASE WHEN jsonb_typeof({document()}) = 'array' THEN "
    if node.op is ListOp.ARRAY_CONTAINS:
        tests = [
            f"EXISTS (SELECT 1 FROM jsonb_array_elements({document()}) AS e(v) WHERE "
            f"{_pg_item(writer, lambda: 'e.v', value, node.insensitive)})"
            for value in node.value
        ]
        test = _all(tests) if tests else writer.dialect.true
    else:
        index = "0" if node.op is ListOp.ARRAY_STARTS_WITH else "-1"
        first = node.value[0]
        test = _pg_item(writer, lambda: f"({document()} -> {index})", first, node.insensitive)
        test = f"COALESCE({test}, FALSE)"
    other = f" WHEN jsonb_typeof({document()}) <> 'null' THEN FALSE END"
    return head + test + other


def _sqlite_item(writer: SqlWriter, value: Any, insensitive: bool) -> str:
    if isinstance(value, bool):
        return f"e.type = '{'true' if value else 'false'}'"
    if isinstance(value, str):
        item = writer.dialect.fold("e.value") if insensitive else "e.value"
        return f"(e.type = 'text' AND {item} = {writer.text(value)})"
    return f"(e.type IN ('integer', 'real') AND e.value = {writer.number(value)})"


def _sqlite_array(writer: SqlWriter, node: ListTest) -> str:
    def kind() -> str:
        return writer.json_type(node.field, node.path)

    def document() -> str:  # the array as JSON text
        return writer.json_value(node.field, node.path, FieldType.STRING)

    head = f"CASE WHEN {kind()} = 'array' THEN "
    if node.op is ListOp.ARRAY_CONTAINS:
        tests = [
            f"EXISTS (SELECT 1 FROM json_each({document()}) AS e WHERE "
            f"{_sqlite_item(writer, value, node.insensitive)})"
            for value in node.value
        ]
        test = _all(tests) if tests else writer.dialect.true
    else:
        if node.op is ListOp.ARRAY_STARTS_WITH:
            where = "e.key = 0"
        else:
            where = f"e.key = json_array_length({document()}) - 1"
        test = (
            f"EXISTS (SELECT 1 FROM json_each({document()}) AS e WHERE {where} AND "
            f"{_sqlite_item(writer, node.value[0], node.insensitive)})"
        )
    return head + test + f" WHEN {kind()} <> 'null' THEN {writer.dialect.false} END"


def _spark(writer: SqlWriter, node: ListTest, column: str, element: FieldType) -> str:
    if node.op is ListOp.IS_EMPTY:
        return f"size({column}) = 0"
    values = _double_items(node, element)
    if values is None:
        return writer.dialect.false
    render = _literal(writer, element)
    subject = column
    if node.insensitive:
        subject = f"transform({column}, af_x -> {writer.dialect.fold('af_x')})"
    if node.op is ListOp.EQUALS:
        items = ", ".join(render(v) for v in values)
        return f"COALESCE({subject} = array({items}), FALSE)"
    if node.op is ListOp.HAS_EVERY:
        return _all(
            [f"exists({subject}, af_x -> COALESCE(af_x = {render(v)}, FALSE))" for v in values]
        )
    items = ", ".join(render(v) for v in values)
    return f"exists({subject}, af_x -> COALESCE(af_x IN ({items}), FALSE))"


def _mysql_array(writer: SqlWriter, node: ListTest) -> str:
    """As `_mysql`, over the array `JSON_EXTRACT(column, path)`; numbers compare as doubles
    there, as every JSON number on MySQL/MariaDB does (an integer no double holds matches no
    item)."""
    dialect = writer.dialect
    column = writer.column(node.field)
    path = dialect.json_path(node.path)
    assert path is not None
    values = tuple(v for v in node.value if isinstance(v, bool | str) or double_exact(v))
    if len(values) < len(node.value):
        return f"CASE WHEN {_mysql_array_kind(writer, column, path)} <> 'NULL' THEN FALSE END"

    def document() -> str:
        return f"JSON_EXTRACT({column}, {writer.text(path)})"

    def matches(item: Callable[[], str], value: Any) -> str:
        kind = (
            FieldType.BOOLEAN
            if isinstance(value, bool)
            else (FieldType.STRING if isinstance(value, str) else FieldType.NUMBER)
        )
        names = ", ".join(f"'{name}'" for name in dialect.json_types[kind])
        of_type = f"{dialect.json_type(document(), [], item())} IN ({names})"
        read = dialect.json_value(document(), [], item(), kind)
        if kind is FieldType.BOOLEAN:
            return f"({of_type} AND {read} = {dialect.boolean(value)})"
        if kind is FieldType.STRING:
            read = dialect.exact(dialect.fold(read) if node.insensitive else read)
            return f"({of_type} AND {read} = {writer.text(value)})"
        return f"({of_type} AND {read} = {writer.number(value)})"

    head = f"CASE WHEN {_mysql_array_kind(writer, column, path)} = 'ARRAY' THEN "
    if node.op is ListOp.ARRAY_CONTAINS:
        tests = []
        for value in values:
            source = f"JSON_TABLE({document()}, '$[*]' COLUMNS (o FOR ORDINALITY)) AS af_e"
            item = matches(lambda: "CONCAT('$[', af_e.o - 1, ']')", value)
            tests.append(f"EXISTS (SELECT 1 FROM {source} WHERE {item})")
        test = _all(tests) if tests else dialect.true
    elif node.op is ListOp.ARRAY_STARTS_WITH:
        test = f"COALESCE({matches(lambda: chr(39) + '$[0]' + chr(39), values[0])}, FALSE)"
    else:
        last = lambda: f"CONCAT('$[', JSON_LENGTH({document()}) - 1, ']')"  # noqa: E731
        test = f"COALESCE({matches(last, values[0])}, FALSE)"
    return head + test + f" WHEN {_mysql_array_kind(writer, column, path)} <> 'NULL' THEN FALSE END"


def _mysql_array_kind(writer: SqlWriter, column: str, path: str) -> str:
    return f"JSON_TYPE(JSON_EXTRACT({column}, {writer.text(path)}))"


def _duckdb_array(writer: SqlWriter, node: ListTest) -> str:
    """The array read as a DuckDB list of JSON values (`CAST(... AS JSON[])`), each item with
    its `json_type`; numbers as doubles, as every JSON number on DuckDB (an integer no double
    holds matches no item)."""
    dialect = writer.dialect
    column = writer.column(node.field)
    path = dialect.json_path(node.path)
    assert path is not None

    def kind() -> str:
        return dialect.json_type(column, [], writer.text(path))

    values = tuple(v for v in node.value if isinstance(v, bool | str) or double_exact(v))
    if len(values) < len(node.value):
        return f"CASE WHEN {kind()} <> 'NULL' THEN FALSE END"

    def items() -> str:
        return f"CAST(json_extract(CAST({column} AS JSON), {writer.text(path)}) AS JSON[])"

    def matches(item: Callable[[], str], value: Any) -> str:
        found = (
            FieldType.BOOLEAN
            if isinstance(value, bool)
            else (FieldType.STRING if isinstance(value, str) else FieldType.NUMBER)
        )
        names = ", ".join(f"'{name}'" for name in dialect.json_types[found])
        of_type = f"json_type({item()}) IN ({names})"  # written first, as it reads
        read = dialect.json_value(item(), [], "'$'", found)
        if found is FieldType.STRING and node.insensitive:
            read = dialect.fold(read)
        literal = (
            dialect.boolean(value)
            if found is FieldType.BOOLEAN
            else writer.text(value)
            if found is FieldType.STRING
            else writer.number(value)
        )
        # CASE, not AND: DuckDB would cast a string item to a number before testing its type.
        return f"CASE WHEN {of_type} THEN {read} = {literal} ELSE FALSE END"

    head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
    if node.op is ListOp.ARRAY_CONTAINS:
        tests = [
            f"len(list_filter({items()}, lambda af_x: {matches(lambda: 'af_x', value)})) > 0"
            for value in values
        ]
        test = _all(tests) if tests else dialect.true
    else:
        index = "1" if node.op is ListOp.ARRAY_STARTS_WITH else "-1"
        test = matches(lambda: f"{items()}[{index}]", values[0])
        test = f"COALESCE({test}, FALSE)"
    return head + test + f" WHEN {kind()} <> 'NULL' THEN FALSE END"


def _spark_array(writer: SqlWriter, node: ListTest) -> str:
    """The array read as `array<variant>` (`variant_get`), each item typed by its variant
    schema inside a `CASE`; numbers as doubles, as every JSON number on Spark."""
    dialect = writer.dialect
    column = writer.column(node.field)
    path = dialect.json_path(node.path)
    assert path is not None

    def kind() -> str:
        return dialect.json_type(column, [], writer.text(path))

    values = tuple(v for v in node.value if isinstance(v, bool | str) or double_exact(v))
    if len(values) < len(node.value):
        return f"CASE WHEN {kind()} <> 'VOID' THEN FALSE END"

    def items() -> str:
        return f"variant_get(parse_json({column}), {writer.text(path)}, 'array<variant>')"

    def matches(item: Callable[[], str], value: Any) -> str:
        found = (
            FieldType.BOOLEAN
            if isinstance(value, bool)
            else (FieldType.STRING if isinstance(value, str) else FieldType.NUMBER)
        )
        names = ", ".join(f"'{name}'" for name in dialect.json_types[found])
        of_type = f"regexp_extract(schema_of_variant({item()}), '^[A-Z]+', 0) IN ({names})"
        cast = {FieldType.STRING: "string", FieldType.NUMBER: "double"}.get(found, "boolean")
        read = f"variant_get({item()}, '$', '{cast}')"
        if found is FieldType.STRING and node.insensitive:
            read = dialect.fold(read)
        literal = (
            dialect.boolean(value)
            if found is FieldType.BOOLEAN
            else writer.text(value)
            if found is FieldType.STRING
            else writer.number(value)
        )
        return f"CASE WHEN {of_type} THEN {read} = {literal} ELSE FALSE END"

    head = f"CASE WHEN {kind()} = 'ARRAY' THEN "
    if node.op is ListOp.ARRAY_CONTAINS:
        tests = [f"exists({items()}, af_x -> {matches(lambda: 'af_x', value)})" for value in values]
        test = _all(tests) if tests else dialect.true
    else:
        index = "1" if node.op is ListOp.ARRAY_STARTS_WITH else "-1"
        test = matches(lambda: f"try_element_at({items()}, {index})", values[0])
        test = f"COALESCE({test}, FALSE)"
    return head + test + f" WHEN {kind()} <> 'VOID' THEN FALSE END"
