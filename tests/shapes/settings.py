"""Database settings and declared collations: their cells for the support matrix
(tests/shapes/__init__.py).

A string column's answers must not hang on how the database was created (PostgreSQL's libc
`C.UTF-8` or `en_US.UTF-8` against ICU's root locale) nor on a collation its column declares
(PostgreSQL's nondeterministic case-insensitive one, MariaDB's `utf8mb4` collations and a
`latin1` column, SQLite's and DuckDB's `NOCASE` and `RTRIM`): each setting is run by
`tests/test_shapes_settings.py` over every string operation of the column-type space, both
ways of asking, against the oracle.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy import String, Text
from sqlalchemy.dialects import mysql
from sqlalchemy.types import TypeEngine

from audiencefilter.backends.sql.dialects.mysql import PROVEN_COLLATIONS
from tests.servers import PG_SETTINGS
from tests.shapes import Cell
from tests.shapes.columns import TITLES, WAYS

NONDETERMINISTIC = "ci"
"""PostgreSQL's recommended case-insensitive collation, created in the test database:
`CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false)`."""


MARIADB_COLLATIONS = tuple(sorted(PROVEN_COLLATIONS - {"utf8mb4_0900_ai_ci"}))
"""The utf8mb4 collations a MariaDB column is run with: each one the gate takes
(`dialects/mysql.PROVEN_COLLATIONS`) that MariaDB has, so none is taken unrun."""


@dataclass(frozen=True)
class Setting:
    """A string column on a database: the engine, the database's settings (a name of
    `tests.servers.PG_SETTINGS` on PostgreSQL, else ""), the column's DDL as the user writes
    it and its SQLAlchemy type."""

    engine: str
    database: str
    ddl: str
    sqlalchemy: TypeEngine[Any]

    @property
    def backend(self) -> str:
        where = f" ({self.database})" if self.database else ""
        return f"{TITLES[self.engine]}{where}"


PG_LOCALE_COLLATIONS = ("tr-x-icu", "sv-x-icu", "de-x-icu", "ja-x-icu", "el-x-icu")
"""ICU locale collations a column may declare, chosen where a locale folds or orders unlike
the root: Turkish dotted and dotless i, Swedish letters after z, German sharp s, Japanese
kana, Greek final sigma. Every other deterministic collation PostgreSQL lists is met by the
same rule: the comparison names its own collation, so the column's is never read."""


SETTINGS: tuple[Setting, ...] = (
    *(Setting("postgresql", name, "text", Text()) for name in PG_SETTINGS if name != "ICU und"),
    *(
        Setting("postgresql", name, "varchar(50)", String(50))
        for name in PG_SETTINGS
        if name != "ICU und"
    ),
    Setting(
        "postgresql",
        "libc C.UTF-8",
        f'text COLLATE "{NONDETERMINISTIC}" (nondeterministic)',
        Text(collation=NONDETERMINISTIC),
    ),
    *(
        Setting("postgresql", "libc C.UTF-8", f'text COLLATE "{name}"', Text(collation=name))
        for name in ("C", "POSIX", "ucs_basic", *PG_LOCALE_COLLATIONS)
    ),
    *(
        Setting("mysql", "", f"VARCHAR(50) COLLATE {name}", String(50, collation=name))
        for name in MARIADB_COLLATIONS
    ),
    Setting(
        "mysql",
        "",
        "VARCHAR(50) CHARACTER SET latin1",
        mysql.VARCHAR(50, charset="latin1"),
    ),
    Setting(
        "mysql",
        "",
        "VARCHAR(50) COLLATE utf8mb4_turkish_ci",
        mysql.VARCHAR(50, collation="utf8mb4_turkish_ci"),
    ),
    Setting("sqlite", "", "TEXT COLLATE NOCASE", Text(collation="NOCASE")),
    Setting("sqlite", "", "TEXT COLLATE RTRIM", Text(collation="RTRIM")),
    *(
        Setting("duckdb", "", f"VARCHAR COLLATE {name}", String(collation=name))
        for name in ("NOCASE", "NOACCENT", "NFC", "ICU_NOACCENT")
    ),
)
"""The settings asked: each PostgreSQL database setting but the default (ICU, which the
column-type cells run on), and each declared collation."""

ONLY: dict[str, tuple[str, ...]] = {"mysql": ("to_sqlalchemy",)}
"""Engines whose settings are asked through some ways only. `to_sql` text does not see a
MariaDB column's collation, and folds under it: a column declaring `utf8mb4_general_ci` or
`utf8mb4_bin` folds with Unicode 4.0's case tables (`ẞ` stays), where `to_sqlalchemy` reads
the declared collation and folds under Unicode 5.2's; the cell is left out rather than shown
as exact."""

LATIN1_FIX = (
    "convert the column to utf8mb4 (ALTER TABLE ... MODIFY ... CHARACTER SET utf8mb4), or map "
    "the field to CONVERT(column USING utf8mb4) typed with type_coerce(..., String())"
)
COLLATION_FIX = (
    "declare one of utf8mb4_0900_ai_ci, utf8mb4_bin, utf8mb4_general_ci, "
    "utf8mb4_general_nopad_ci, utf8mb4_nopad_bin, utf8mb4_uca1400_ai_ci, "
    "utf8mb4_unicode_520_ci, utf8mb4_unicode_ci, or none"
)

REFUSED: dict[tuple[str, str], str] = {
    ("VARCHAR(50) CHARACTER SET latin1", "to_sqlalchemy"): LATIN1_FIX,
    ("VARCHAR(50) COLLATE utf8mb4_turkish_ci", "to_sqlalchemy"): COLLATION_FIX,
}
"""Refused cells, by (DDL, way): the fix the error suggests."""


def cell(setting: Setting, way: str) -> Cell:
    note = REFUSED.get((setting.ddl, way))
    outcome = "refused" if note is not None else "exact"
    return Cell("settings", f"{setting.backend} {way}", setting.ddl, "string", outcome, note or "")


def ways(setting: Setting) -> tuple[str, ...]:
    return ONLY.get(setting.engine, WAYS)


DJANGO_CELLS: dict[str, Cell] = {
    column: Cell("settings", "Django (PostgreSQL libc C.UTF-8) to_django", shape, "string", "exact")
    for column, shape in (
        ("name", "CharField()"),
        ("name_ci", f'CharField(db_collation="{NONDETERMINISTIC}") (nondeterministic)'),
    )
}
"""The Django cells, by the test model's column."""

CELLS: list[Cell] = [
    *(cell(s, way) for s in SETTINGS for way in ways(s)),
    *DJANGO_CELLS.values(),
]
