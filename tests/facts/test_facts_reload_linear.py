"""Reloading an unchanged facts file is linear in its size (issue 25, R1).

The reload was quadratic: 20,000 rows without a source_ref took 38 s on
PostgreSQL, which planned `source_ref IS NOT DISTINCT FROM` like `=` (never
true for NULL) and a semantic_facts without statistics as nearly empty, so it
ran nested loops that scanned the staged rows once per stored fact; SQLite
scanned every value of a key once per value. No test here times anything:

* SQLite: the virtual machine instructions the reload executes (sqlite3's
  progress handler), at N and 4N rows: linear work grows about 4×,
  quadratic 16×;
* PostgreSQL: the plans of the reload's statements, as EXPLAIN gives them
  inside the load: no nested loop may scan its inner side (only an index
  probe per outer row is linear).

benchmarks/bench_facts_reload.py measures the times.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from load_support import fact, fresh_url

from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.db import make_engine
from qdsl.facts.load import load_facts


def _rows(shape: str, n: int) -> list[dict[str, Any]]:
    if shape == "no_source_ref":  # one value per entity, as most exports write facts
        return [fact(str(i), value=f"theme {i % 50}") for i in range(n)]
    # ten entities with ever more values each (a many-valued predicate)
    return [fact(str(i % 10), value=f"theme {i}") for i in range(n)]


SHAPES = ["no_source_ref", "many_values_per_key"]


def _reload_steps(url: str, rows: list[dict[str, Any]]) -> int:
    """SQLite VM instructions (in thousands) of loading `rows` a second time."""
    engine = make_engine(url)
    steps = [0]
    counting = [False]

    def count() -> int:
        if counting[0]:
            steps[0] += 1
        return 0

    @sa.event.listens_for(engine, "connect")
    def _watch(dbapi_conn: Any, _record: Any) -> None:
        dbapi_conn.set_progress_handler(count, 1000)

    try:
        load_facts(rows, engine=engine, catalog=demo_catalog())
        counting[0] = True
        report = load_facts(rows, engine=engine, catalog=demo_catalog())
        assert report.unchanged == len(rows)
    finally:
        engine.dispose()
    return steps[0]


@pytest.mark.parametrize("shape", SHAPES)
def test_sqlite_reload_work_grows_linearly(tmp_path: Path, shape: str) -> None:
    small, large = 1500, 6000
    steps = []
    for n in (small, large):
        url = f"sqlite:///{tmp_path / f'{shape}-{n}.sqlite3'}"
        from qdsl.facts.db import upgrade

        upgrade(url)
        steps.append(_reload_steps(url, _rows(shape, n)))
    growth = steps[1] / steps[0]
    assert growth < 6.0, (shape, steps)  # 4× the rows: linear ~4×, quadratic ~16×


# -- PostgreSQL: the plans -------------------------------------------------------------

_PROBES = {"Index Scan", "Index Only Scan", "Bitmap Heap Scan"}


def _nested_loops(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
    if node.get("Node Type") == "Nested Loop":
        yield node
    for child in node.get("Plans", []):
        yield from _nested_loops(child)


def _inner(node: dict[str, Any]) -> dict[str, Any]:
    inner = node["Plans"][1]
    while inner["Node Type"] in ("Memoize", "Materialize") and inner.get("Plans"):
        if inner["Node Type"] == "Materialize":
            return inner  # a materialized inner side is scanned again for every outer row
        inner = inner["Plans"][0]
    return inner


_UPSERTS = ("DELETE FROM SEMANTIC", "UPDATE SEMANTIC", "INSERT INTO SEMANTIC")


def _reload_plans(url: str, rows: list[dict[str, Any]]) -> list[tuple[str, dict[str, Any]]]:
    """The plans of the reload's upsert statements, EXPLAINed inside the load (where
    its staging table exists) and then not run: a quadratic plan is found without
    waiting for it. The stored facts, which the plans read, are the same either way."""
    engine = make_engine(url)
    plans: list[tuple[str, dict[str, Any]]] = []
    watching = [False]

    def explain(
        _conn: Any, cursor: Any, statement: str, parameters: Any, _ctx: Any, _many: bool
    ) -> tuple[str, Any]:
        head = statement.lstrip()[:40].upper()
        if not (watching[0] and head.startswith(_UPSERTS)):
            return statement, parameters
        with cursor.connection.cursor() as probe:
            probe.execute("EXPLAIN (FORMAT JSON) " + statement, parameters)
            plans.append((head.split()[0], probe.fetchone()[0][0]["Plan"]))
        return "SELECT 1 WHERE false", {}

    sa.event.listen(engine, "before_cursor_execute", explain, retval=True)
    try:
        load_facts(rows, engine=engine, catalog=demo_catalog())
        watching[0] = True
        load_facts(rows, engine=engine, catalog=demo_catalog())
    finally:
        engine.dispose()
    return plans


@pytest.mark.parametrize("shape", SHAPES)
def test_postgresql_reload_plans_never_rescan(
    pg_database_factory: Any, tmp_path: Path, request: pytest.FixtureRequest, shape: str
) -> None:
    url = fresh_url("postgresql", tmp_path, request)
    # as many rows as made the planner choose nested loops over the staged rows
    plans = _reload_plans(url, _rows(shape, 20_000))
    assert {kind for kind, _ in plans} == {"DELETE", "UPDATE", "INSERT"}
    for kind, plan in plans:
        for loop in _nested_loops(plan):
            inner = _inner(loop)
            assert inner["Node Type"] in _PROBES, (kind, inner["Node Type"], plan)
