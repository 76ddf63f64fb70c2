"""Database settings and declared collations (tests/shapes/settings.py) against the oracle:
every string operation of the column-type space, both ways of asking, on a database created
with the distribution's defaults or a column declaring a collation."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from tests.servers import pg_setting_missing
from tests.shapes import TALLY
from tests.shapes.columns import ColumnShape
from tests.shapes.settings import NONDETERMINISTIC, SETTINGS, Setting, cell, ways
from tests.test_column_types import NOW, ask, filters, load

_MARKS = {"postgresql": (pytest.mark.postgres,), "mysql": (pytest.mark.mysql,)}


def _new_engine(setting: Setting, request: pytest.FixtureRequest) -> Engine:
    if setting.engine == "postgresql":
        missing = pg_setting_missing(setting.database)
        if missing is not None:
            pytest.skip(missing)
        url = request.getfixturevalue("pg_settings_database")(setting.database)
        made = create_engine(url)
        with made.begin() as connection:
            connection.execute(
                text(
                    f'CREATE COLLATION IF NOT EXISTS "{NONDETERMINISTIC}" (provider = icu, '
                    "locale = 'und-u-ks-level2', deterministic = false)"
                )
            )
        return made
    if setting.engine == "mysql":
        return create_engine(request.getfixturevalue("mysql_url"))
    made = create_engine(
        "sqlite://" if setting.engine == "sqlite" else "duckdb:///:memory:", poolclass=StaticPool
    )
    if setting.engine == "sqlite":
        af.register_sqlite_functions(made)
    return made


@pytest.fixture(scope="module")
def engines(request: pytest.FixtureRequest) -> Iterator[Callable[[Setting], Engine]]:
    """The engine of each setting's database, made on first use."""
    made: dict[tuple[str, str], Engine] = {}

    def engine(setting: Setting) -> Engine:
        key = (setting.engine, setting.database)
        if key not in made:
            made[key] = _new_engine(setting, request)
        return made[key]

    yield engine
    for made_engine in made.values():
        made_engine.dispose()


def _params() -> list[object]:
    return [
        pytest.param(s, way, id=cell(s, way).id, marks=_MARKS.get(s.engine, ()))
        for s in SETTINGS
        for way in ways(s)
    ]


@pytest.mark.parametrize(("setting", "way"), _params())
def test_a_setting_answers_as_the_oracle_or_is_refused(
    setting: Setting, way: str, engines: Callable[[Setting], Engine]
) -> None:
    engine = engines(setting)
    column = ColumnShape(setting.engine, setting.ddl, setting.sqlalchemy, "string")
    table, rows = load(engine, column)
    flts = filters(column)
    answers = ask(engine, table, way, flts)
    wrong = []
    for flt, answer in zip(flts, answers, strict=True):
        expected = {row["id"] for row in rows if flt.matches(row, now=NOW)}
        if answer != expected:
            shown = answer if isinstance(answer, str) else sorted(answer ^ expected)
            wrong.append(f"{flt.to_json()}: {shown}")
    TALLY.note(cell(setting, way), len(flts), len(rows), len(wrong))
    assert len(flts) > 100
    assert not wrong, f"{len(wrong)} of {len(flts)} filters differ:\n" + "\n".join(wrong[:8])
