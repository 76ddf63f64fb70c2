"""Date-times in SQL text: the one spelling every engine reads as the same instant
(docs/interop.md, "Date-times in SQL text").

A date-time column is kept as users keep it, through SQLAlchemy's `DateTime`: a `TIMESTAMP`
on PostgreSQL and DuckDB, a `DATETIME` on MariaDB, and on SQLite the text
`2025-01-01 00:00:00.000000` (UTC here, as a naive value means UTC). The first three convert a
quoted literal to an instant; SQLite compares the column's text with the literal's text. So a
literal means the same on all four exactly when its text orders against every stored text as
its instant does:

- written as SQLite keeps it (`'2025-01-01 00:00:00.000000'`), for every operator: the writers
  write every date-time so;
- written shorter, as a beginning of that text (`'2025-01-01'`, `'2025-01-01 10:30'`), for
  `>=` and `<` only: a stored text that begins with the literal is longer, so it sorts after
  it, which `>=` and `<` read as the instant's midnight (or minute) does; `=`, `>`, `<=` and a
  list part at that very instant (`createdAt = '2025-01-01'` holds for no text on SQLite);
- with a `T`, an offset, `Z` or more digits than microseconds: refused, since SQLite orders
  that text otherwise (`'2025-01-01T00:00:00Z'` sorts after every time of 1 January), and
  PostgreSQL's `TIMESTAMP` drops an offset without converting.

The readers of SQL WHERE and of react-querybuilder's rules (whose SQL export quotes the value
as it is) check each date-time literal here; a literal read is the instant our where clause
reads (a date alone is midnight UTC).
"""

from __future__ import annotations

from datetime import UTC, datetime

from ..language.fields import Op
from ..language.values import parse_datetime

_PREFIX_OPS = (Op.GTE, Op.LT)
"""The operators a shortened literal means the same with on every engine."""


def sql_text(value: datetime) -> str:
    """An instant as SQLite keeps it through SQLAlchemy: UTC, a space, microseconds."""
    utc = value.astimezone(UTC) if value.tzinfo else value
    return utc.replace(tzinfo=None).isoformat(sep=" ", timespec="microseconds")


def unportable(text: str, op: Op) -> tuple[str, str] | None:
    """Why the date-time literal `text` compared with `op` means one thing on SQLite and
    another on PostgreSQL, DuckDB and MariaDB, and what to write instead; None when it means
    the same instant everywhere (or is no date-time, which the condition builder reports)."""
    try:
        stored = sql_text(parse_datetime(text))
    except ValueError:
        return None
    if text == stored or (stored.startswith(text) and op in _PREFIX_OPS):
        return None
    fix = f"write '{stored}', the instant in UTC as SQLite keeps it"
    if not stored.startswith(text):
        why = (
            f"SQLite keeps a date-time as text ('{stored}') and compares '{text}' with it as "
            "text, which orders otherwise (a T, an offset, Z or digits past microseconds), "
            "while PostgreSQL, DuckDB and MariaDB compare instants"
        )
        return why, fix
    why = (
        f"SQLite keeps a date-time as text ('{stored}'), which sorts after '{text}', so "
        f"{_SPELLED.get(op, op.value)} parts at that very instant from PostgreSQL, DuckDB "
        "and MariaDB, which read midnight (or the time given)"
    )
    return why, f"{fix}, or use >= and < ('{text}' is read so with them)"


_SPELLED = {Op.EQUALS: "=", Op.GT: ">", Op.LTE: "<=", Op.IN: "IN", Op.NOT_IN: "NOT IN"}
