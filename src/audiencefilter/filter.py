"""`Filter`: a validated AST bound to its schema, and the one object users hold.

The facade is the only place that joins the user's tree to the back-ends: it lowers the tree
once (`rewrite/lower.py`; cached per filter, and per call for a relative filter at a given
`now`) and hands the lowered tree and the schema to each back-end, which never sees a `Filter`.
Every output is a one-line method that imports its back-end lazily, so importing the library
costs no SQLAlchemy compiler or grammar until a caller asks for SQL or text.

A filter with relative date-times (`{"ago": "P30D"}`) is evaluated against a clock: each call
of its predicate reads the clock and turns every relative value into an instant, so a
long-lived predicate never goes stale, while a filter without any keeps the plain compiled
function and pays nothing. SQL, polars and explanations take the instant as `now` (the clock
when they are built, by default), and `resolve(now)` gives the equivalent absolute filter.
What the answers do with time alone lives on `Filter.clock` (`filter_clock.py`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Iterator, Mapping
from datetime import datetime
from functools import cached_property
from typing import TYPE_CHECKING, Any, TypeVar, cast

from .filter_clock import FilterClock, Instant
from .language.contact import CONTACT
from .language.cost import DEFAULT_ROWS, Cost, cost
from .language.fields import Schema
from .language.limits import DEFAULT_LIMITS, Limits
from .language.nodes import Node, fields_used
from .language.relative import Ago, as_now, system_clock
from .record_keys import NamedMatcher, keys_read, named, named_predicate
from .rewrite.lower import durations_at, lower
from .where.read import read_where

if TYPE_CHECKING:
    from sqlalchemy import ColumnElement

    from .algebra import Verdict
    from .backends.memory.compiler import Evaluator
    from .explain import Explanation

R = TypeVar("R", bound=Mapping[str, Any])
F = TypeVar("F")
"""A frame: polars (DataFrame or LazyFrame), Spark (DataFrame), or an eager frame narwhals reads
(pandas, pyarrow); the same type comes back."""

Record = Mapping[str, Any]
Predicate = Callable[[Record], bool]
When = datetime | None
"""An instant, or None for the clock now (or, as `until`, no bound)."""


class _PydanticSerializer:
    """`Filter.__pydantic_serializer__`, made on first use: pydantic writes an object it finds
    in a value typed `Any` (`dict[str, Any]`, FastAPI's answer of a plain dict) with it, as
    its where clause. pydantic-core is imported then, never by the library itself; without it
    there is no such attribute."""

    made: Any = None

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if self.made is None:
            try:
                from pydantic_core import SchemaSerializer, core_schema
            except ImportError:
                raise AttributeError("__pydantic_serializer__") from None
            write = core_schema.plain_serializer_function_ser_schema(
                _where_clause, when_used="always"
            )
            self.made = SchemaSerializer(core_schema.any_schema(serialization=write))
        return self.made


def _where_clause(flt: Filter) -> dict[str, Any]:
    return flt.to_dict()


class Filter:
    """A smart-audience filter: an AST (`root`) and the schema it was validated against.

    Two filters are equal when their ASTs and schemas are, whatever JSON spelling they came from.
    Immutable, as a frozen dataclass is, but no dataclass: encoders that take a dataclass
    apart field by field (FastAPI's `jsonable_encoder`, `dataclasses.asdict`) would write its
    tree and schema. A filter written out is its where clause: `dict(flt)` (the mapping
    protocol those encoders fall back on) and pydantic's serializer of untyped values
    (`__pydantic_serializer__`) give `to_dict()`; a model field holding one is `FilterField`.
    """

    __match_args__ = ("root", "schema")
    __pydantic_serializer__ = _PydanticSerializer()
    root: Node
    schema: Schema

    def __init__(self, root: Node, schema: Schema = CONTACT) -> None:
        fields = self.__dict__
        fields["root"] = root
        fields["schema"] = schema

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot assign to field {name!r}")

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(f"cannot delete field {name!r}")

    def __eq__(self, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        assert isinstance(other, Filter)
        return self.root == other.root and self.schema == other.schema

    def __hash__(self) -> int:
        return hash((self.root, self.schema))

    def __repr__(self) -> str:
        return f"Filter(root={self.root!r}, schema={self.schema!r})"

    def keys(self) -> Iterable[str]:
        """The where clause's top-level keys: with `__getitem__`, `dict(flt) == flt.to_dict()`,
        which is how an encoder that does not know the class writes it."""
        return self.to_dict().keys()

    def __getitem__(self, key: str) -> Any:
        return self.to_dict()[key]

    @cached_property
    def predicate(self) -> Predicate:
        """The compiled in-memory predicate, built once per filter (on the system clock when
        the filter has relative date-times)."""
        if not self.clock.relatives:
            return self.evaluator
        return self.clock.predicate_at(system_clock)

    @cached_property
    def evaluator(self) -> Evaluator:
        """The compiled function behind every predicate: `(record, instants) -> bool`, where
        `instants` are those of `relatives` (and may be left out when there are none)."""
        from .backends.memory.compiler import compile_node

        return compile_node(self.lowered, self.schema)

    @cached_property
    def lowered(self) -> Node:
        """The tree the back-ends evaluate (`rewrite/lower.py`), relative date-times kept."""
        return lower(self.root, self.schema)

    def lowered_at(self, now: datetime | None = None) -> Node:
        """The lowered tree with relative date-times taken at `now` (default: the clock now)."""
        if not self.clock.relatives:
            return self.lowered
        return lower(self.root, self.schema, system_clock() if now is None else now)

    @cached_property
    def matches(self) -> NamedMatcher:
        """`matches(record, *, now=None, naming=None)`: whether `record` belongs to the
        audience, the whole filter being TRUE for it.

        A missing key is null; a comparison with null is UNKNOWN, and UNKNOWN is not TRUE.
        Relative date-times are taken at `now` (default: the system clock, read per call).
        `naming="snake_case"` (or a `str -> str` callable) reads a record keyed by column
        names, as ORM rows are (`first_name` for `firstName`); without it, a record that has
        none of the keys the filter reads but has them so named is a `RecordError`
        (record_keys.py).

        A function built once per filter rather than a method: a loop of `matches(record)`
        then pays one call more than the predicate, not a bound method and its look-ups too.
        """
        keys = keys_read(self.fields, self.schema)
        if not self.clock.relatives:
            return named_predicate(self.predicate, keys)
        from .backends.memory.compiler import matcher

        return named(matcher(self.lowered, self.schema, self.evaluator, system_clock), keys)

    @cached_property
    def clock(self) -> FilterClock[Filter]:
        """What the filter's answers do with time alone (`FilterClock`): its relative values
        and their instants, the absolute filter at an instant, a predicate on a clock, and
        when a record's answer next changes. Built once per filter."""
        return FilterClock(self, _new_filter)

    # Forwards kept for code written before the clock's members moved to `FilterClock`; the
    # user docs taught these six on `Filter` (docs/api.md#the-filters-clock).

    @property
    def is_relative(self) -> bool:
        """`clock.is_relative`, kept here: the clock is its home."""
        return self.clock.is_relative

    def resolve(self, now: datetime | None = None) -> Filter:
        """`clock.resolve(now)`, kept here: the clock is its home."""
        return self.clock.resolve(now)

    def next_change(
        self, record: Record, now: datetime | None = None, *, until: datetime | None = None
    ) -> datetime | None:
        """`clock.next_change(record, now, until=)`, kept here: the clock is its home."""
        return self.clock.next_change(record, now, until=until)

    def next_step(self, now: datetime | None = None) -> datetime | None:
        """`clock.next_step(now)`, kept here: the clock is its home."""
        return self.clock.next_step(now)

    def next_crossing(
        self, values: Iterable[datetime], now: When = None, *, until: When = None
    ) -> When:
        """`clock.next_crossing(values, now, until=)`, kept here: the clock is its home."""
        return self.clock.next_crossing(values, now, until=until)

    @property
    def moves_with_clock(self) -> bool:
        """`clock.moves_with_clock`, kept here: the clock is its home."""
        return self.clock.moves_with_clock

    def select(self, records: Iterable[R], *, now: datetime | None = None) -> Iterator[R]:
        """The records that match, lazily, in their order.

        Relative date-times are resolved once, at `now` or when `select` is called, so one
        batch is judged at one instant.
        """
        if not self.clock.relatives:
            return filter(self.predicate, records)
        evaluate, instants = self.evaluator, self.clock.instants(now)
        return (record for record in records if evaluate(record, instants))

    @cached_property
    def fields(self) -> frozenset[str]:
        """The field names the filter reads (worked out once: a service asks each of a list's
        audiences on every write)."""
        return fields_used(self.root)

    def to_dict(self) -> dict[str, Any]:
        """The canonical where clause as plain JSON-ready data."""
        from .where.write import to_dict

        return to_dict(self.root)

    def to_json(self, *, indent: int | None = None) -> str:
        """The canonical where clause as JSON text; `parse(f.to_json()) == f`."""
        from .where.write import to_json

        return to_json(self.root, indent=indent)

    def to_sqlalchemy(
        self,
        target: Any,
        *,
        now: datetime | None = None,
        relations: Mapping[str, Any] | None = None,
        columns: Mapping[str, Any] | None = None,
        naming: str | Callable[[str], str] | None = "snake_case",
        bind_durations: bool = False,
    ) -> ColumnElement[bool]:
        """A SQLAlchemy boolean expression over `target`: a Table, ORM class or name->column map.

        Relative date-times become the instants they are at `now` (default: the clock now).
        Relation conditions follow the ORM class's relationship of the relation's name, or the
        table or model given in `relations` (`{"actions": actions_table}`). A field's attribute
        is `columns[field]` (`{"createdAt": "created_at"}`; `"actions.createdAt"` for a
        related field), else the field's name, else the name `naming` gives (`"snake_case"` by
        default: `createdAt` -> `created_at`; None for none), as every back-end reading storage
        it did not build finds its columns; a field found nowhere raises ValueError naming the
        closest attribute.

        `bind_durations`: each duration (`{"ago": ...}`) compared with a date-time column
        becomes a named parameter instead of its instant; execute the statement with
        `sqlalchemy_parameters(now)`. The expression is then the same object from one instant
        to the next (built once, and one entry of SQLAlchemy's compiled cache), where otherwise
        a filter with a duration is built anew for every `now`. Calendar values and durations
        at a JSON path are still taken at `now`.
        """
        from .backends.sql.sqlalchemy import to_sqlalchemy

        resolvers = self._sqlalchemy_durations[1] if bind_durations else self.clock.resolvers
        moment = as_now(system_clock() if now is None else now) if resolvers else None
        written = tuple([instant_of(moment) for instant_of in resolvers]) if moment else ()
        given = (target, relations, columns, naming)
        key = (*map(id, given), bind_durations, written)
        held = _held(given)
        memo = self._sqlalchemy_memo
        kept_now = memo[0]  # one tuple, read at once and replaced whole: safe across threads
        for kept in kept_now:
            if (
                kept[0] == key
                and all(a is b for a, b in zip(kept[1], given, strict=True))
                and _same_held(kept[3], held)
            ):
                return cast("ColumnElement[bool]", kept[2])
        if moment is None:
            lowered = self.lowered  # nothing relative, or only durations kept as parameters
        else:
            lowered = lower(self.root, self.schema, moment, keep_durations=bind_durations)
        built = to_sqlalchemy(
            lowered, self.schema, target, relations, columns=columns, naming=naming
        )
        memo[0] = ((key, given, built, held), *kept_now[:3])
        return built

    def sqlalchemy_parameters(self, now: datetime | None = None) -> dict[str, datetime]:
        """The values, at `now` (default: the clock), of the parameters an expression built
        with `to_sqlalchemy(..., bind_durations=True)` holds: pass them to `execute`. Their
        names are shared by filters with the same duration (`af_ago_...`), so the parameters
        of several filters in one statement merge into one mapping."""
        if not self._sqlalchemy_durations[0]:
            return {}
        return self._duration_parameters(as_now(system_clock() if now is None else now))

    @cached_property
    def _duration_parameters(self) -> Callable[[datetime], dict[str, datetime]]:
        from .backends.sql.sqlalchemy import duration_parameters

        return duration_parameters(sorted(self._sqlalchemy_durations[0], key=repr))

    @cached_property
    def _sqlalchemy_durations(
        self,
    ) -> tuple[frozenset[Ago], tuple[Callable[[datetime], Instant], ...]]:
        """For `bind_durations`: the durations bound as parameters (those compared with a
        column), and the resolvers of the relative values still written into the expression
        (the memo's key, with the instants they give)."""
        at_column, at_path = durations_at(self.lowered)
        bound_only = at_column - at_path
        written = tuple(
            resolver
            for relative, resolver in zip(self.clock.relatives, self.clock.resolvers, strict=True)
            if relative not in bound_only
        )
        return at_column, written

    @cached_property
    def _sqlalchemy_memo(self) -> list[tuple[tuple[Any, ...], ...]]:
        """The last few expressions built, by target, relations and the instants their relative
        values stood for: a service judging the same audiences on every write builds each
        expression once per instant, not once per write (a filter without relative values, or
        only calendar ones, keeps one for a day or for good; with `bind_durations`, durations
        are not part of the key). Same target and relations objects only (identity, kept alive
        by the memo): a rebuilt table is another key."""
        return [()]

    def to_sql(
        self,
        dialect: str = "postgresql",
        columns: Mapping[str, str] | None = None,
        *,
        now: datetime | None = None,
        table: str = "contacts",
        tables: Mapping[str, str] | None = None,
    ) -> str:
        """A SQL condition for `dialect` with every literal inlined and safely quoted.

        Relative date-times become the instants they are at `now` (default: the clock now);
        relation conditions correlate with the contact table named `table`, and read each
        relation's table (`Relation.table`, or `tables["actions"]`).
        """
        from .backends.sql.text import to_sql

        return to_sql(
            self.lowered_at(now), self.schema, dialect, columns, table=table, tables=tables
        )

    def to_sql_params(
        self,
        dialect: str = "postgresql",
        columns: Mapping[str, str] | None = None,
        *,
        now: datetime | None = None,
        table: str = "contacts",
        tables: Mapping[str, str] | None = None,
    ) -> tuple[str, list[Any]]:
        """A SQL condition with placeholders, and its parameters in order."""
        from .backends.sql.text import to_sql_params

        return to_sql_params(
            self.lowered_at(now), self.schema, dialect, columns, table=table, tables=tables
        )

    def to_django(
        self,
        model: Any,
        *,
        columns: Mapping[str, str] | None = None,
        naming: str | Callable[[str], str] | None = "snake_case",
        now: datetime | None = None,
    ) -> Any:
        """A Django `Q` selecting the filter's rows of `model` (`Model.objects.filter(q)`; needs
        the `django` extra), on Django's SQLite and PostgreSQL back-ends.

        A field's attribute is `columns[field]` (`"actions.createdAt"` for a related field),
        else the field's name, else the name `naming` gives (`"snake_case"` by default:
        `createdAt` -> `created_at`); relations are reverse foreign keys, named alike. The
        condition is the SQL back-end's for the database that runs the query, so it answers
        as `to_sql_params` does there. Relative date-times become the instants they are at
        `now` (default: the clock now).
        """
        from .backends.django.orm import to_django

        return to_django(self.lowered_at(now), self.schema, model, columns, naming)

    def to_polars(
        self,
        dtypes: Mapping[str, Any] | None = None,
        *,
        columns: Mapping[str, str] | None = None,
        now: datetime | None = None,
    ) -> Any:
        """A polars boolean expression (the columnar back-end; needs the `columnar` extra):
        TRUE, FALSE, or null where UNKNOWN.

        `dtypes` are the frame's column types (`frame.schema`; each field's canonical type when
        left out), `columns` the column names of fields named differently, and relative
        date-times become the instants they are at `now` (default: the clock now).
        """
        return self._polars_expression(dtypes, columns, now)

    def _polars_expression(
        self,
        dtypes: Mapping[str, Any] | None,
        columns: Mapping[str, str] | None,
        now: datetime | None,
    ) -> Any:
        """`to_polars`, kept for the last few column types, names and instants: a frame
        filtered again and again (`select_frame` in a loop over batches of one schema) does
        not build its expression each time. polars expressions are immutable, so one serves
        every call."""
        from .backends.frames.polars import to_polars

        moment = as_now(system_clock() if now is None else now) if self.clock.relatives else None
        key = (
            None if dtypes is None else tuple(dtypes.items()),
            None if columns is None else tuple(sorted(columns.items())),
            self.clock.instants(moment) if moment else (),
        )
        memo = self._polars_memo
        kept_now = memo[0]  # one tuple, read at once and replaced whole: safe across threads
        for kept_key, kept in kept_now:
            if kept_key == key:
                return kept
        built = to_polars(self.lowered_at(moment), self.schema, dtypes, columns=columns)
        memo[0] = ((key, built), *kept_now[:3])
        return built

    @cached_property
    def _polars_memo(self) -> list[tuple[tuple[Any, Any], ...]]:
        return [()]

    def to_text(self) -> str:
        """The filter in the readable text syntax; `parse_text(f.to_text()) == f`."""
        from .text import to_text

        return to_text(self.root)

    def to_format(self, name: str) -> object:
        """The filter in the format `name`: `"json"` (the canonical where clause as data),
        `"text"`, or one of `audiencefilter.format_names()` (`"jsonlogic"`, `"mongodb"`,
        ...), written from the user's tree (docs/interop.md).

        Raises:
            FilterError: an unknown format, or a condition the format has no faithful form for.
        """
        if name == "json":
            return self.to_dict()
        if name == "text":
            return self.to_text()
        from .formats import write_format

        return write_format(self.root, name, self.schema)

    def explain(self, record: Record, *, now: datetime | None = None) -> Explanation:
        """Why `record` is in or out: each condition's TRUE/FALSE/UNKNOWN and the value seen;
        relative date-times are shown with the instant they stood for at `now`."""
        from .explain import explain

        return explain(self.root, self.schema, record, now=now)

    def simplify(self) -> Filter:
        """An equivalent filter (same members for every record), no larger than this one."""
        from .rewrite.simplify import simplify

        return Filter(simplify(self.root, self.schema), self.schema)

    def is_unsatisfiable(self) -> bool:
        """True when no record can ever match, e.g. `points > 10 AND points < 5` (sound, not
        complete: False means no contradiction was found)."""
        from .rewrite.simplify import is_unsatisfiable

        return is_unsatisfiable(self.root, self.schema)

    def implies(
        self, other: Filter, *, now: datetime | None = None, steps: int | None = None
    ) -> Verdict:
        """Whether every record this filter matches, `other` matches too (at `now`): True is
        a proof, False comes with a witness record (in this audience, not in `other`), None
        is undecided (docs/algebra.md), as past `steps` steps (None: the algebra's default,
        `QUESTION_STEPS`)."""
        from .algebra import implies

        return implies(self, other, now=now, steps=steps)

    def overlaps(
        self, other: Filter, *, now: datetime | None = None, steps: int | None = None
    ) -> Verdict:
        """Whether some record is in both audiences: True with a witness, False a proof."""
        from .algebra import overlaps

        return overlaps(self, other, now=now, steps=steps)

    def equivalent(
        self, other: Filter, *, now: datetime | None = None, steps: int | None = None
    ) -> Verdict:
        """Whether both audiences hold the same records: True a proof, False with a witness."""
        from .algebra import equivalent

        return equivalent(self, other, now=now, steps=steps)

    def can_match(self, *, now: datetime | None = None, steps: int | None = None) -> Verdict:
        """Whether any record can match: True with a witness, False a proof naming the
        conditions that cannot hold together."""
        from .algebra import can_match

        return can_match(self, now=now, steps=steps)

    def is_always_true(self) -> bool:
        """True when every record matches, e.g. `{"OR": [{"country": "XX"}, {}]}` or
        `NOT (country = "XX" AND false)`: the filter folds to TRUE, as the empty filter `{}`
        is (sound, not complete: `points > 5 OR points <= 5` is UNKNOWN for a null)."""
        from .rewrite.simplify import is_always_true

        return is_always_true(self.root, self.schema)

    def cost(
        self, rows: float = DEFAULT_ROWS, *, engine: str = "memory", indexed: Iterable[str] = ()
    ) -> Cost:
        """A static estimate of the work of judging one record on `engine` (`"memory"`, the
        compiled predicate, or `"sql"`): `units`, in comparisons of a column with a literal
        there; and the sizes a budget bounds: `conditions`, `values` (array items and JSON
        path steps) and the `depth` of the SQL expression. `rows`: the related rows a record
        is expected to have per to-many relation. `indexed`: related fields an index holds
        after the contact's key (`"actions.createdAt"`), which SQL engines seek instead of
        reading rows. Deterministic, computed from the tree alone without running it
        (docs/performance.md, "The cost model").

        Raises:
            ValueError: `rows` is not a number from 0 to 1e9, or `engine` is unknown.
        """
        chosen = tuple(indexed)
        if rows == DEFAULT_ROWS and engine == "memory" and not chosen:
            return self._cost
        return cost(self.root, self.schema, rows, engine, chosen)

    @cached_property
    def _cost(self) -> Cost:
        return cost(self.root, self.schema)

    def residual(self, known: Mapping[str, Any], *, now: datetime | None = None) -> Filter:
        """The filter left once the fields of `known` (a record's own values, null included;
        a relation's rows by its name) are substituted: TRUE, FALSE or a smaller filter over
        the other fields, equal in membership for every record holding those values.
        Conditions with relative date-times among them are answered at `now` (default: the
        clock), so the residual holds at that instant. docs/semantics.md, "Residual filters"."""
        from .rewrite.residual import residual

        def truth(node: Node) -> bool | None:
            holds, fails = self._conditions(node)
            if holds.matches(known, now=now):
                return True
            return False if fails.matches(known, now=now) else None

        return Filter(residual(self.root, self.schema, frozenset(known), truth), self.schema)

    def _conditions(self, node: Node) -> tuple[Filter, Filter]:
        """One condition of this filter and its negation as filters, each compiled once per
        filter (`residual` asks them again for every record)."""
        from .language.nodes import Not

        found = self._residual_conditions.get(node)
        if found is None:
            found = Filter(node, self.schema), Filter(Not(node), self.schema)
            self._residual_conditions[node] = found
        return found

    @cached_property
    def _residual_conditions(self) -> dict[Node, tuple[Filter, Filter]]:
        return {}

    def __str__(self) -> str:
        return self.to_json()

    def select_frame(
        self,
        frame: F,
        *,
        columns: Mapping[str, str] | None = None,
        naming: str | Callable[[str], str] | None = "snake_case",
        now: datetime | None = None,
    ) -> F:
        """The audience in a polars DataFrame or LazyFrame (the `columnar` extra), in a Spark
        DataFrame (the `spark` extra), or in a pandas DataFrame, pyarrow Table or another eager
        frame narwhals reads (the `pandas` extra): the rows that match, in order for polars and
        pandas, lazy in and lazy out.

        A field's column is `columns[field]`, else the field's name, else the name `naming`
        gives (`"snake_case"` by default: `createdAt` -> `created_at`; None for none), as on
        SQLAlchemy and Django; a field found nowhere is a `FrameError` naming the closest
        column. Their types are read from the frame, so every comparison is a native one of
        the engine; a column of a type the field cannot use raises `FrameError` (polars) or
        `TypeError` (Spark) naming it. Relative date-times are taken at `now` (default: the
        clock when the query is built).
        """
        columns = self._frame_columns(frame, columns, naming)
        if type(frame).__module__.startswith("pyspark."):
            from .backends.frames.spark import select_rows as select_spark_rows

            found = select_spark_rows(
                self.lowered_at(now), self.schema, cast(Any, frame), columns=columns
            )
            return cast(F, found)
        if not type(frame).__module__.startswith("polars."):  # pandas, pyarrow: `pandas` extra
            from .backends.frames.narwhals import select_rows as select_other_rows

            found = select_other_rows(self.lowered_at(now), self.schema, frame, columns=columns)
            return cast(F, found)
        from .backends.frames.polars import frame_dtypes

        polars_frame = cast(Any, frame)
        expression = self._polars_expression(frame_dtypes(polars_frame), columns, now)
        return cast(F, polars_frame.filter(expression))

    def frame_mask(
        self,
        frame: Any,
        *,
        columns: Mapping[str, str] | None = None,
        naming: str | Callable[[str], str] | None = "snake_case",
        now: datetime | None = None,
    ) -> Any:
        """A boolean column over a pandas (or other eager narwhals) frame, TRUE where the filter
        matches and FALSE where it does not or is UNKNOWN: `frame[flt.frame_mask(frame)]`, or
        combined with the caller's own masks (needs the `pandas` extra). Columns are found as
        `select_frame` finds them."""
        from .backends.frames.narwhals import frame_mask

        columns = self._frame_columns(frame, columns, naming)
        return frame_mask(self.lowered_at(now), self.schema, frame, columns=columns)

    def _frame_columns(
        self,
        frame: Any,
        columns: Mapping[str, str] | None,
        naming: str | Callable[[str], str] | None,
    ) -> dict[str, str]:
        """The column of each field the filter reads (`backends/frames/columns.py`); the fields
        read are the same at every instant, so the filter's own lowered tree tells."""
        from .backends.frames.columns import frame_columns

        return frame_columns(self.lowered, self.schema, frame, columns, naming)

    def to_pyspark(
        self,
        *,
        columns: Mapping[str, str] | None = None,
        dtypes: Mapping[str, Any] | None = None,
        now: datetime | None = None,
        session: Any = None,
    ) -> Any:
        """A boolean `pyspark.sql.Column` for `df.filter(...)` (needs the `spark` extra).

        Any thread may build it: without `session`, the thread's active session or else the
        process's default one is taken, as `pyspark.sql.functions` itself does.
        """
        from .backends.frames.spark import to_pyspark

        lowered = self.lowered_at(now)
        return to_pyspark(lowered, self.schema, columns=columns, dtypes=dtypes, session=session)


def _held(given: tuple[Any, ...]) -> tuple[tuple[tuple[Any, Any], ...] | None, ...]:
    """What each mapping among `to_sqlalchemy`'s arguments holds now (a `columns` or
    `relations` mapping, a mapping target): a mapping changed in place since an expression was
    built is another key of the memo, whose entry would name the old columns."""
    return tuple(tuple(g.items()) if isinstance(g, Mapping) else None for g in given)


def _same_held(
    kept: tuple[tuple[tuple[Any, Any], ...] | None, ...],
    held: tuple[tuple[tuple[Any, Any], ...] | None, ...],
) -> bool:
    """Whether the mappings hold the same keys and the very same values (`is`: a column
    expression's `==` builds a comparison)."""
    for old, new in zip(kept, held, strict=True):
        if old is None or new is None:
            if old is not new:
                return False
            continue
        if len(old) != len(new):
            return False
        if any(a[0] != b[0] or a[1] is not b[1] for a, b in zip(old, new, strict=True)):
            return False
    return True


def parse(
    where: str | bytes | Mapping[str, Any],
    schema: Schema = CONTACT,
    *,
    limits: Limits = DEFAULT_LIMITS,
) -> Filter:
    """Read a where clause into a validated `Filter`.

    Args:
        where: JSON text, or a mapping already decoded (values may also be `datetime`s).
        schema: The fields the filter may use; the contact schema of the spec by default.
        limits: Bounds on depth, size and array length.

    Returns:
        The filter, with its AST in `.root`.

    Raises:
        FilterError: listing every problem found, each with its path and, for text input,
            its line and column.
    """
    return _new_filter(read_where(where, schema, limits=limits), schema)


def parse_text(text: str, schema: Schema = CONTACT, *, limits: Limits = DEFAULT_LIMITS) -> Filter:
    """Read a filter written in the text syntax into a validated `Filter`.

    Args:
        text: The filter, e.g. `email contains "gmail" and points >= 100`.
        schema: The fields the filter may use; the contact schema of the spec by default.
        limits: Bounds on depth, size, list length and text size, those of the JSON form.

    Returns:
        The filter, equal to the one `parse` reads from the same filter's JSON.

    Raises:
        FilterError: listing every problem found, each with its line and column; `.source`
            holds `text`, so `render_error` can show where.
    """
    from .text import read_text  # lark is imported on first use

    return _new_filter(read_text(text, schema, limits=limits), schema)


def from_format(source: object, name: str, schema: Schema = CONTACT) -> Filter:
    """Read a filter written in the format `name` into a validated `Filter`.

    Args:
        source: The rule: JSON text or decoded data (a string for the text syntax).
        name: `"json"` (a where clause, as `parse`), `"text"` (as `parse_text`), or one of
            `audiencefilter.format_names(readable=True)` (`"jsonlogic"`, `"mongodb"`, ...).
        schema: The fields the filter may use; the contact schema of the spec by default.

    Raises:
        FilterError: an unknown format, or every problem found in the rule, each at its path;
            a rule the format means otherwise than any filter here is refused, never guessed.
    """
    if name == "json":
        return parse(cast(Any, source), schema)
    if name == "text":
        if not isinstance(source, str):
            raise TypeError(f"the text syntax is a str, not {type(source).__name__}")
        return parse_text(source, schema)
    from .formats import read_format

    return _new_filter(read_format(source, name, schema), schema)


def _filter_builder() -> Callable[[Node, Schema], Filter]:
    """`Filter(root, schema)` without calling `__init__`: a filter without slots keeps its
    fields in the instance `__dict__`, which is filled directly (a call less on every small
    `parse`). Only while `Filter` is exactly that class of those two fields; otherwise the
    class itself is used."""
    if "__slots__" in vars(Filter) or Filter.__init__.__code__.co_varnames[1:3] != (
        "root",
        "schema",
    ):
        return Filter
    new = object.__new__

    def build(root: Node, schema: Schema) -> Filter:
        made = new(Filter)
        fields = made.__dict__
        fields["root"] = root
        fields["schema"] = schema
        return made

    return build


_new_filter = _filter_builder()
