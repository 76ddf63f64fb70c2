"""Database settings and declared collations (tests/shapes/settings.py) against the oracle:
every string operation of the column-type space, both ways of asking, on a database created
with the distribution's defaults or a column declaring a collation."""

from __future__ import annotations

from collections.abc import Callable, Iterator

import pytest
from sqlalchemy import Engine, Table, create_engine, text
from sqlalchemy.pool import StaticPool

import audiencefilter as af
from audiencefilter.testing.space import STRINGS, edge_conditions, every_condition
from tests.servers import pg_setting_missing
from tests.shapes import TALLY
from tests.shapes.columns import ColumnShape
from tests.shapes.settings import DJANGO_CELLS, NONDETERMINISTIC, SETTINGS, Setting, cell, ways
from tests.test_column_types import NOW, _unrefused, ask, filters, load, loaded

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
    if cell(setting, way).outcome == "refused":
        table, _rows = load(engine, column)
        _assert_refused(setting, way, table, filters(column))
        return
    # A filter the engine refuses by its literal (a case-insensitive sigma on MySQL and
    # DuckDB) must be refused when built; the others answer as the oracle. The table, its
    # rows and the oracle's answers are worked out once for both ways of asking.
    held = loaded(engine, column)
    table, rows, flts = held.table, held.rows, held.asked
    wrong = _unrefused(engine, table, way, held.refused)
    answers = ask(engine, table, way, flts)
    for flt, answer, expected in zip(flts, answers, held.expected, strict=True):
        if answer != expected:
            shown = answer if isinstance(answer, str) else sorted(answer ^ expected)
            wrong.append(f"{flt.to_json()}: {shown}")
    TALLY.note(cell(setting, way), len(flts), len(rows), len(wrong))
    assert len(flts) > 100
    assert not wrong, f"{len(wrong)} of {len(flts)} filters differ:\n" + "\n".join(wrong[:8])


def _assert_refused(setting: Setting, way: str, table: Table, flts: list[af.Filter]) -> None:
    """Every filter on a refused setting is refused when built, naming the fix; none is
    answered but a constant (a `latin1` column's `CAST(x AS BINARY)` is latin1 bytes, which
    no utf8mb4 literal equals: `label = "é"` selected nothing)."""
    built = []
    for flt in flts:
        try:
            sql = str(flt.to_sqlalchemy(table, now=NOW))
        except af.FilterError as refusal:
            assert cell(setting, way).note in str(refusal), str(refusal)
            continue
        if table.name in sql:  # not a constant (`in []`), which reads no column
            built.append(flt.to_json())
    assert len(flts) > 100
    assert not built, f"{len(built)} of {len(flts)} filters built:\n" + "\n".join(built[:8])


# ---- Django --------------------------------------------------------------------------------

_DJANGO_SCHEMA = af.Schema.from_mapping({"name": "string"})


def _django_filters() -> list[af.Filter]:
    """Every string operation with the probe operand and with every edge literal."""
    wheres = [w for _s, _o, w in every_condition(_DJANGO_SCHEMA)]
    wheres += [w for _s, _o, w in edge_conditions(_DJANGO_SCHEMA, NOW, every=True)]
    found = []
    for where in {repr(w): w for w in wheres}.values():
        try:
            found.append(af.parse(where, _DJANGO_SCHEMA))
        except af.FilterError:
            continue
    return found


def _django_alias(url: str) -> str:
    """A Django connection to the database at `url`, added once."""
    from django.db import connections
    from sqlalchemy.engine import make_url

    import tests.django_engines  # noqa: F401  (configures Django)

    alias = "settings_libc"
    if alias not in connections.settings:
        parsed = make_url(url)
        given = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": parsed.database,
            "USER": parsed.username or "",
            "PASSWORD": parsed.password or "",
            "HOST": parsed.host or "",
            "PORT": str(parsed.port or ""),
        }
        configured = connections.configure_settings({"default": {}, alias: given})
        connections.settings[alias] = configured[alias]
    return alias


@pytest.mark.postgres
def test_django_on_a_libc_database_and_a_nondeterministic_column_answers_as_the_oracle(
    engines: Callable[[Setting], Engine],
) -> None:
    """`to_django` on a database created with libc's `C.UTF-8`, over a plain `CharField` and
    one declaring the nondeterministic case-insensitive collation (`db_collation=`)."""
    from django.db import connections, models

    setting = next(s for s in SETTINGS if s.database == "libc C.UTF-8")
    engine = engines(setting)  # the database, its collation created
    alias = _django_alias(engine.url.render_as_string(hide_password=False))
    meta = type("Meta", (), {"app_label": "tests", "db_table": "settings_dj_person"})
    person = type(
        "SettingsPerson",
        (models.Model,),
        {
            "__module__": __name__,
            "Meta": meta,
            "id": models.CharField(max_length=20, primary_key=True),
            "name": models.CharField(max_length=50, null=True),
            "name_ci": models.CharField(max_length=50, null=True, db_collation=NONDETERMINISTIC),
        },
    )
    values = [None, *(s for s in STRINGS if "\x00" not in s)]
    with connections[alias].schema_editor() as editor:
        editor.create_model(person)
    rows = [{"id": f"r{n}", "name": v} for n, v in enumerate(values)]
    objects = [person(id=r["id"], name=r["name"], name_ci=r["name"]) for r in rows]
    person.objects.using(alias).bulk_create(objects)
    wrong = []
    flts = _django_filters()
    for column, django_cell in DJANGO_CELLS.items():
        before = len(wrong)
        for flt in flts:
            condition = flt.to_django(person, columns={"name": column}, now=NOW)
            found = set(person.objects.using(alias).filter(condition).values_list("id", flat=True))
            expected = {r["id"] for r in rows if flt.matches(r, now=NOW)}
            if found != expected:
                wrong.append(f"{column} {flt.to_json()}: {sorted(found ^ expected)}")
        TALLY.note(django_cell, len(flts), len(rows), len(wrong) - before)
    assert len(flts) > 100
    assert not wrong, f"{len(wrong)} differ:\n" + "\n".join(wrong[:8])
