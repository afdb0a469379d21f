"""The same answer on both databases for any text (issue 13, item 10).

Text filters compare `lower(column)`; SQLite's built-in lower() folds ASCII
only, so `ÄRGER`, `ΣΟΦΙΑ` or `ＡＢＣ` matched on PostgreSQL and not on SQLite.
The executor registers `sql_lower` (PostgreSQL's lower() on a UTF-8 database)
on its SQLite connections. Tested on a catalog of another domain (cities).
And the asyncio SQLite path now interrupts a statement at the timeout, as
the other drivers do, instead of checking between statements only.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tomllib
import unicodedata
from collections.abc import Callable
from pathlib import Path

import pytest
import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType
from qdsl.executor.run import aexecute, execute
from qdsl.executor.sqlite_functions import sql_lower
from qdsl.facts.db import make_async_engine, make_engine, upgrade

CITIES = """
[entities.city]
table = "cities"
label = "name"
default_projection = ["id", "name"]
query_types = ["list", "count"]

[entities.city.fields.country]
column = "country"
type = "text"
operators = ["equals", "contains", "in"]
"""
NAMES = [
    ("1", "ÄRGERLICH", "DEUTSCHLAND"),
    ("2", "Straße", "Österreich"),
    ("3", "İSTANBUL", "TÜRKİYE"),
    ("4", "ΣΟΦΙΑΣ", "ΕΛΛΑΣ"),
    ("5", "ＡＢＣ Town", "ＪＡＰＡＮ"),
    ("6", "東京", "日本"),
    ("7", "e\u0301cole", "FRANCE"),
    ("8", "ǅemal", "BOSNA"),
    ("9", "Zürich", "SCHWEIZ"),
]
VALUES = [
    "ärgerlich", "ÄRGER", "straße", "STRASSE", "ss", "ß", "istanbul", "i̇stanbul", "İstanbul",
    "σοφιας", "σοφιασ", "ΣΟΦΙΑΣ", "ａｂｃ", "abc", "ＡＢＣ", "東京", "e\u0301", "é", "ǆemal",
    "ǅ", "zÜrich", "türki̇ye", "türkiye", "österreich", "ελλας",
]


def _catalog() -> Catalog:
    return catalog_from_mapping(tomllib.loads(CITIES))


def _fill(engine: Engine) -> None:
    with engine.begin() as conn:
        conn.execute(
            sa.text(
                "CREATE TABLE cities (tenant_id TEXT NOT NULL, id TEXT NOT NULL, "
                "name TEXT NOT NULL, country TEXT NOT NULL)"
            )
        )
        for tenant in ("t1", "t2"):
            conn.execute(
                sa.text("INSERT INTO cities VALUES (:t, :i, :n, :c)"),
                [{"t": tenant, "i": i, "n": n, "c": c} for i, n, c in NAMES],
            )
        if engine.dialect.name == "postgresql":
            conn.execute(sa.text("GRANT SELECT ON cities TO qdsl_reader"))


@pytest.fixture(scope="module")
def city_engines(
    pg_database_factory: Callable[[], str], tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Engine]:
    lite = make_engine(f"sqlite:///{tmp_path_factory.mktemp('cities') / 'cities.sqlite3'}")
    url = pg_database_factory()
    upgrade(url)  # the reader role the executor runs as
    pg = make_engine(url)
    for engine in (lite, pg):
        _fill(engine)
    return {"sqlite": lite, "postgresql": pg}


def _ids(engine: Engine, field: str, op: Operator, value: str) -> tuple[str, ...]:
    plan = Plan(
        query_type=QueryType.LIST,
        entity_type="city",
        filters=(Filter(field=field, operator=op, value=(value,) if op is Operator.IN else value),),
        limit=50,
    )
    return tuple(r.entity_id for r in execute(plan, _catalog(), engine, "t1").rows)


def test_non_ascii_text_matches_the_same_on_sqlite_and_postgresql(
    city_engines: dict[str, Engine],
) -> None:
    matched = 0
    for value in VALUES:
        for field in ("name", "country"):
            for op in (Operator.EQUALS, Operator.CONTAINS, Operator.IN):
                lite = _ids(city_engines["sqlite"], field, op, value)
                pg = _ids(city_engines["postgresql"], field, op, value)
                assert lite == pg, (value, field, op)
                matched += bool(lite)
    assert matched >= 10  # the fold matters: many of these values do match


def test_sql_lower_is_postgresqls_lower_for_every_cased_character(
    city_engines: dict[str, Engine],
) -> None:
    pg = city_engines["postgresql"]
    with pg.connect() as conn:
        encoding = conn.execute(sa.text("SHOW server_encoding")).scalar_one()
        ctype = conn.execute(sa.text("SELECT datctype FROM pg_database WHERE datname = "
                                     "current_database()")).scalar_one()
        if encoding != "UTF8" or ctype in ("C", "POSIX"):
            pytest.skip(f"lower() folds ASCII only in a {ctype}/{encoding} database")
        cased = [
            chr(c)
            for c in range(0x41, 0x30000)
            if not 0xD800 <= c <= 0xDFFF
            and unicodedata.category(chr(c)) in ("Lu", "Ll", "Lt")
        ]
        for start in range(0, len(cased), 4000):
            text = " ".join(cased[start : start + 4000])
            got = conn.execute(sa.select(sa.func.lower(sa.literal(text, sa.Text())))).scalar_one()
            assert got == sql_lower(text)


@pytest.fixture
def slow_sqlite_url(tmp_path: Path) -> str:
    path = tmp_path / "slow.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute(
            "CREATE VIEW slow_items AS WITH RECURSIVE c(x) AS "
            "(SELECT 1 UNION ALL SELECT x + 1 FROM c LIMIT 1000000000) "
            "SELECT 't1' AS tenant_id, CAST(x AS TEXT) AS id, 'slow' AS title FROM c"
        )
    return f"sqlite+pysqlite:///{path}"


def test_async_sqlite_interrupts_a_statement_at_the_timeout(slow_sqlite_url: str) -> None:
    catalog = catalog_from_mapping(
        tomllib.loads(
            '[entities.slow]\ntable = "slow_items"\nlabel = "title"\n'
            'default_projection = ["id", "title"]\nquery_types = ["count"]\n'
        )
    )

    async def go() -> None:
        engine = make_async_engine(slow_sqlite_url)
        try:
            # one statement counting 10^9 rows: only an interrupt inside it ends it
            await aexecute(
                Plan(query_type=QueryType.COUNT, entity_type="slow"),
                catalog,
                engine,
                "t1",
                timeout_ms=200,
            )
        finally:
            await engine.dispose()

    with pytest.raises(DatabaseError) as info:
        asyncio.run(go())
    assert info.value.code == "database/timeout"
