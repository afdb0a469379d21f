"""Every field type on every column type, on both dialects: served or refused, never both.

Each cell of the matrix (dialect × catalog field type × stored column type of
`typed_columns.COLUMNS`) is a catalog whose one field `f` is that type on that
column. `qdsl catalog check` either passes the cell, and then a filter (`=`,
`>=`, `in`), a sort, a status and a compare on it answer exactly what the
test's own oracle reads from the rows, for two tenants sharing ids, with the
values rendered as the answer writes them; or it refuses the cell with a
finding naming the entity, the field, the column and both types. Which cells
are served is written out by hand (`typed_columns.SERVED`), so the test fails
if the check and the executor drift apart from each other or from the docs.
"""

from __future__ import annotations

import asyncio
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy import Engine, event
from sqlalchemy.ext.asyncio import AsyncEngine
from typed_columns import (
    IDS,
    KINDS,
    NULL_ID,
    SERVED,
    TENANTS,
    as_json,
    build,
    by_name,
    cell_catalog,
    columns,
    literal,
    meaning,
    shown,
    stored_values,
)

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.plan_cache import compile_source
from qdsl.executor.result import ExecutionResult
from qdsl.executor.run import aexecute, execute
from qdsl.facts.check import check_catalog
from qdsl.facts.check.columns import columns_exist
from qdsl.facts.check.types import field_types
from qdsl.facts.db import make_async_engine, make_engine
from qdsl.render import render

_ORDERED = ("number", "date", "datetime")
_LISTED = ("text", "enum", "id", "number", "date")


def _cells() -> list[Any]:
    out = []
    for dialect in ("sqlite", "postgresql"):
        marks = [pytest.mark.pg] if dialect == "postgresql" else []
        for kind in KINDS:
            for col in columns(dialect):
                out.append(
                    pytest.param(
                        dialect, kind, col.name, marks=marks, id=f"{dialect}-{kind}-{col.name}"
                    )
                )
    return out


@pytest.fixture(scope="module")
def typed_engines(request: pytest.FixtureRequest) -> Iterator[Callable[[str], Engine]]:
    """A built `things` database per dialect, made on first use."""
    made: dict[str, Engine] = {}
    with tempfile.TemporaryDirectory() as tmp:

        def get(dialect: str) -> Engine:
            if dialect not in made:
                if dialect == "sqlite":
                    url = f"sqlite+pysqlite:///{Path(tmp) / 'things.sqlite3'}"
                else:
                    url = request.getfixturevalue("pg_database_factory")()
                build(url, dialect)
                made[dialect] = make_engine(url)
            return made[dialect]

        yield get
        for engine in made.values():
            engine.dispose()


def _run(source: str, catalog: Catalog, engine: Engine, tenant: str) -> tuple[Any, ExecutionResult]:
    normalized = compile_source(source, catalog, PlanContext(tenant_id=tenant))
    assert normalized.bound is not None
    return normalized.plan, execute(normalized.bound, catalog, engine, tenant)


def _ids(result: ExecutionResult) -> list[str]:
    return [r.entity_id for r in result.rows]


def _in_id_order(ids: list[str]) -> list[str]:
    return sorted(ids, key=int)  # the id column is INTEGER: its own order is numeric


def _sort_key(kind: str, raw: Any) -> Any:
    # the column's own order: an id kept as a number or a UUID sorts as one
    return raw if kind == "id" and not isinstance(raw, str) else meaning(kind, raw)


@pytest.mark.parametrize(("dialect", "kind", "column"), _cells())
def test_each_cell_is_served_or_refused(
    typed_engines: Callable[[str], Engine], dialect: str, kind: str, column: str
) -> None:
    engine = typed_engines(dialect)
    catalog = cell_catalog(kind, column, dialect)
    report = check_catalog(engine, catalog, rules=(columns_exist, field_types))
    if column not in SERVED[kind][dialect]:
        assert report.errors, f"`catalog check` passes {kind} on {column}, which is not served"
        (finding,) = report.errors
        assert finding.rule == "field_types"
        assert (finding.entity, finding.table, finding.column) == ("thing", "things", column)
        assert "entities.thing.fields.f" in finding.message
        assert f"`{kind}`" in finding.message
        assert finding.details["field_type"] == kind
        assert finding.details["column_type"] in finding.message
        assert finding.fix
        return
    assert not report.findings, [f.message for f in report.findings]
    for tenant in TENANTS:
        _served(engine, catalog, kind, column, tenant)


def _served(engine: Engine, catalog: Catalog, kind: str, column: str, tenant: str) -> None:
    raw = stored_values(by_name(column), tenant)
    means = {i: meaning(kind, v) for i, v in raw.items()}
    target = means["20"]
    where = f"{kind} on {column} for {tenant}"

    # a filter binds a value of the column's type and compares as the field type
    _, got = _run(f"list thing where f = {literal(kind, target)}", catalog, engine, tenant)
    expected = _in_id_order([i for i, m in means.items() if m == target])
    assert _ids(got) == expected, where
    if kind in _ORDERED:
        _, got = _run(f"list thing where f >= {literal(kind, target)}", catalog, engine, tenant)
        expected = _in_id_order([i for i, m in means.items() if m is not None and m >= target])
        assert _ids(got) == expected, where
    if kind in _LISTED:
        other = means["3"]
        source = f"list thing where f in ({literal(kind, target)}, {literal(kind, other)})"
        _, got = _run(source, catalog, engine, tenant)
        expected = _in_id_order([i for i, m in means.items() if m in (target, other)])
        assert _ids(got) == expected, where
    if kind == "id":
        # a value the column cannot hold matches nothing (no database error)
        _, got = _run('list thing where f = "no-such-id"', catalog, engine, tenant)
        assert _ids(got) == [], where

    # a sort in the column's own order, NULLs last, ties by id (a number)
    _, got = _run("list thing order by f asc", catalog, engine, tenant)
    present = [i for i in raw if raw[i] is not None]
    expected = sorted(present, key=lambda i: (_sort_key(kind, raw[i]), int(i)))
    expected += _in_id_order([i for i in raw if raw[i] is None])
    assert _ids(got) == expected, where

    # status: the value typed, and written as an answer writes it
    plan, got = _run("status thing about thing 20", catalog, engine, tenant)
    (row,) = got.rows
    assert row.entity_id == "20" and row.tenant_id == tenant
    assert row.values["f"] == as_json(kind, target), where
    for language in ("zh", "en"):
        text = render(plan, got, language=language, catalog=catalog).text
        assert shown(kind, target, language) in text, (where, text)
        assert "T00:00:00" not in text or kind == "text", text

    # compare: both subjects' values, the difference stated when they differ
    plan, got = _run("compare thing about thing 3, thing 20", catalog, engine, tenant)
    assert {r.entity_id: r.values["f"] for r in got.rows} == {
        "3": as_json(kind, means["3"]),
        "20": as_json(kind, target),
    }, where
    if means["3"] != target:
        text = render(plan, got, language="en", catalog=catalog).text
        assert shown(kind, means["3"], "en") in text and shown(kind, target, "en") in text, text


def test_the_matrix_covers_every_column_and_kind() -> None:
    """Every served column exists on its dialect, and each dialect serves every kind."""
    for kind, per_dialect in SERVED.items():
        for dialect, served in per_dialect.items():
            names = {c.name for c in columns(dialect)}
            assert served <= names, (kind, dialect, served - names)
            assert served, (kind, dialect)
    assert NULL_ID not in IDS


def _served_cells() -> list[Any]:
    return [p for p in _cells() if p.values[2] in SERVED[p.values[1]][p.values[0]]]


@pytest.fixture(scope="module")
def other_paths(
    typed_engines: Callable[[str], Engine],
) -> Iterator[Callable[[str], tuple[Engine, AsyncEngine]]]:
    """Per dialect, an engine a listener watches (SQLAlchemy's `Connection` path) and an
    asyncio engine, on the same database as `typed_engines`' (the bare driver path)."""
    made: dict[str, tuple[Engine, AsyncEngine]] = {}

    def get(dialect: str) -> tuple[Engine, AsyncEngine]:
        if dialect not in made:
            url = typed_engines(dialect).url.render_as_string(hide_password=False)
            watched = make_engine(url)
            event.listen(watched, "before_cursor_execute", lambda *args: None)
            made[dialect] = (watched, make_async_engine(url))
        return made[dialect]

    yield get
    for watched, aengine in made.values():
        watched.dispose()
        asyncio.run(aengine.dispose())


@pytest.mark.parametrize(("dialect", "kind", "column"), _served_cells())
def test_every_execution_path_reads_a_cell_alike(
    typed_engines: Callable[[str], Engine],
    other_paths: Callable[[str], tuple[Engine, AsyncEngine]],
    dialect: str,
    kind: str,
    column: str,
) -> None:
    """The bare driver path, SQLAlchemy's `Connection` path and asyncio read the same."""
    bare = typed_engines(dialect)
    watched, aengine = other_paths(dialect)
    catalog = cell_catalog(kind, column, dialect)
    for tenant in TENANTS:
        for source in ("list thing order by f asc", "status thing about thing 20"):
            normalized = compile_source(source, catalog, PlanContext(tenant_id=tenant))
            assert normalized.bound is not None
            got = [
                execute(normalized.bound, catalog, bare, tenant),
                execute(normalized.bound, catalog, watched, tenant),
                asyncio.run(aexecute(normalized.bound, catalog, aengine, tenant)),
            ]
            rows = [[(r.entity_id, r.values) for r in g.rows] for g in got]
            assert rows[0] == rows[1] == rows[2], (source, tenant, rows)
            assert rows[0], source


@pytest.mark.pg
def test_an_enum_type_serves_a_field_not_a_text_search_column(
    typed_engines: Callable[[str], Engine],
) -> None:
    engine = typed_engines("postgresql")
    catalog = cell_catalog("enum", "c_enum", "postgresql", text_search=("c_enum",))
    (finding,) = check_catalog(engine, catalog, rules=(field_types,)).errors
    assert "entities.thing.text_search" in finding.message and finding.column == "c_enum"
