"""Results read from the session's rows are the results the executor built
before, output for output.

`reference_flow` is the result-building code as it was (rows as dicts, the
whole result validated in one call). Every plan runs twice through the same
`execute` / `aexecute` (same connections, same guards, same execution id):
once with today's steps, once with the reference's. The two results must be
the same objects: equal, the same class and fields set for the result and
every row and evidence, the same repr, the same `model_dump` leaf for leaf
(types included: 1 and 1.0 differ) and the same JSON. Property over generated
plans of every query type, with and without the text fallback, on SQLite and
PostgreSQL; and a value of another type than its field's (an integer id, a
BLOB label) is converted or refused exactly as validation did.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tomllib
from collections.abc import Callable, Generator, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import reference_flow
from exec_support import CATALOG, NOW, TENANTS, Snapshot, as_dicts, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from pydantic import BaseModel, ValidationError
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Plan, QueryType
from qdsl.executor import run as run_module
from qdsl.executor.result import ExecutionResult
from qdsl.executor.rows import Rows
from qdsl.executor.run import aexecute, execute
from qdsl.facts.db import make_async_engine, make_engine

_SNAPSHOTS: dict[int, Snapshot] = {}
FIXED_ID = "0123456789abcdef0123456789abcdef"


def _data(engine: Engine) -> Snapshot:
    if id(engine) not in _SNAPSHOTS:
        _SNAPSHOTS[id(engine)] = snapshot(engine)
    return _SNAPSHOTS[id(engine)]


def _reference(prep: Any, execution_id: str) -> Generator[Any, Rows, Callable[[], ExecutionResult]]:
    """The reference steps, fed the dicts they were fed before."""
    flow = reference_flow.run_flow(prep, execution_id)
    request = next(flow)
    while True:
        rows = yield request
        try:
            request = flow.send(as_dicts(rows))
        except StopIteration as stop:
            result: ExecutionResult = stop.value
            return lambda: result


@contextmanager
def _steps(monkeypatch: pytest.MonkeyPatch, reference: bool) -> Iterator[None]:
    with monkeypatch.context() as m:
        m.setattr(run_module, "new_execution_id", lambda: FIXED_ID)
        if reference:
            m.setattr(run_module, "run_flow", _reference)
        yield


def _both(monkeypatch: pytest.MonkeyPatch, run: Callable[[], ExecutionResult]) -> tuple[Any, Any]:
    """(today's, the reference's) result of `run`, or the error each raised."""
    out = []
    for reference in (False, True):
        with _steps(monkeypatch, reference):
            try:
                out.append(run())
            except (QdslError, ValidationError) as exc:
                out.append(exc)
    return out[0], out[1]


def _leaves(value: Any) -> Any:
    """`value` with every leaf paired with its type (so 1 and 1.0 differ)."""
    if isinstance(value, dict):
        return {k: _leaves(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return (type(value).__name__, [_leaves(v) for v in value])
    return (type(value), value)


def _same_object(new: BaseModel, old: BaseModel) -> None:
    assert type(new) is type(old)
    assert new == old
    assert repr(new) == repr(old)
    assert new.model_fields_set == old.model_fields_set
    assert list(new.__dict__) == list(old.__dict__)


def assert_same(new: Any, old: Any) -> None:
    if isinstance(old, Exception):
        assert type(new) is type(old), (new, old)
        if isinstance(old, QdslError):
            assert new.to_dict() == old.to_dict()
        else:
            assert new.errors() == old.errors()
        return
    assert isinstance(new, ExecutionResult)
    # the one field that differs between two runs
    new = new.model_copy(update={"elapsed_ms": 0.0})
    old = old.model_copy(update={"elapsed_ms": 0.0})
    _same_object(new, old)
    for a, b in zip(new.rows, old.rows, strict=True):
        _same_object(a, b)
    for c, d in zip(new.evidence, old.evidence, strict=True):
        _same_object(c, d)
    assert _leaves(new.model_dump()) == _leaves(old.model_dump())
    assert new.model_dump(mode="json") == old.model_dump(mode="json")
    assert new.model_dump_json() == old.model_dump_json()


@settings(max_examples=120, deadline=None)
@given(st_data=st.data())
def test_results_equal_the_reference(
    engine: Engine, monkeypatch: pytest.MonkeyPatch, st_data: st.DataObject
) -> None:
    data = _data(engine)
    fallback = st_data.draw(st.booleans())
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=fallback))
    tenant = st_data.draw(st.sampled_from(TENANTS))
    new, old = _both(monkeypatch, lambda: execute(plan, CATALOG, engine, tenant, now=NOW))
    assert_same(new, old)


@settings(max_examples=20, deadline=None)
@given(st_data=st.data())
def test_async_results_equal_the_reference(
    engine: Engine, db_url: str, monkeypatch: pytest.MonkeyPatch, st_data: st.DataObject
) -> None:
    data = _data(engine)
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=st_data.draw(st.booleans())))
    tenant = st_data.draw(st.sampled_from(TENANTS))

    def run() -> ExecutionResult:
        async def go() -> ExecutionResult:
            aengine = make_async_engine(db_url)
            try:
                return await aexecute(plan, CATALOG, aengine, tenant, now=NOW)
            finally:
                await aengine.dispose()

        return asyncio.run(go())

    new, old = _both(monkeypatch, run)
    assert_same(new, old)


def test_every_template_with_rows_and_facts_is_compared(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Not only empty results: templates that report facts, fact evidence and
    projected values of every kind are among what the property compares."""
    from exec_support import sample_plan

    from qdsl.dsl.kinds import kind_of

    seen_facts = seen_rows = 0
    for name, spec in CATALOG.entities.items():
        for qt in spec.query_types:
            if kind_of(qt).build is not None:
                continue  # a kind's own statements: the reference flow never ran them
            plan = sample_plan(name, qt)
            new, old = _both(monkeypatch, lambda p=plan: execute(p, CATALOG, engine, "t1", now=NOW))
            assert_same(new, old)
            if isinstance(new, ExecutionResult):
                seen_rows += len(new.rows)
                seen_facts += sum(1 for e in new.evidence if e.kind == "fact")
    assert seen_rows and seen_facts


# -- values of another type than their field's -----------------------------------------

_ODD = """
[entities.odd]
table = "odd_items"
label = "title"
default_projection = ["id", "title", "size"]
query_types = ["list"]

[entities.odd.fields.size]
column = "size"
type = "number"
"""


def _odd_database(tmp_path: Path, select: str) -> tuple[Engine, Catalog]:
    path = tmp_path / "odd.sqlite3"
    with sqlite3.connect(path) as raw:
        raw.execute(f"CREATE VIEW odd_items AS {select}")
    engine = make_engine(f"sqlite+pysqlite:///{path}")
    return engine, catalog_from_mapping(tomllib.loads(_ODD))


@pytest.mark.parametrize(
    "select",
    [
        # an integer id: validation refuses it (a string field)
        "SELECT 't1' AS tenant_id, 7 AS id, 'seven' AS title, 7 AS size",
        # a BLOB label: validation reads it as text
        "SELECT 't1' AS tenant_id, '7' AS id, CAST('seven' AS BLOB) AS title, 7 AS size",
        # a NULL label and a text size, as they are
        "SELECT 't1' AS tenant_id, '7' AS id, NULL AS title, 'big' AS size",
    ],
)
def test_values_of_other_types_are_handled_as_validation_did(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, select: str
) -> None:
    engine, catalog = _odd_database(tmp_path, select)
    try:
        plan = Plan(query_type=QueryType.LIST, entity_type="odd")
        new, old = _both(monkeypatch, lambda: execute(plan, catalog, engine, "t1"))
        assert_same(new, old)
    finally:
        engine.dispose()


def test_a_fact_of_another_type_is_handled_as_validation_did(
    sqlite_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A fact whose text is a BLOB (SQLite keeps what it is given): validation
    reads it as text, in the fact's evidence and in the row's facts alike."""
    from qdsl.dsl.plan.load import load_plan

    source = sqlite3.connect(sqlite_url.removeprefix("sqlite+pysqlite:///"))
    path = tmp_path / "blob-fact.sqlite3"
    copy = sqlite3.connect(path)
    source.backup(copy)
    source.close()
    copy.execute(
        "UPDATE semantic_facts SET value_text = CAST(value_text AS BLOB) "
        "WHERE tenant_id = 't1' AND entity_type = 'project'"
    )
    copy.commit()
    copy.close()
    engine = make_engine(f"sqlite+pysqlite:///{path}")
    try:
        plan = load_plan("status project about project 64 select status, budget")
        new, old = _both(monkeypatch, lambda: execute(plan, CATALOG, engine, "t1", now=NOW))
        assert isinstance(new, ExecutionResult) and any(e.kind == "fact" for e in new.evidence)
        assert all(isinstance(v, str) for row in new.rows for vs in row.facts.values() for v in vs)
        assert_same(new, old)
    finally:
        engine.dispose()
