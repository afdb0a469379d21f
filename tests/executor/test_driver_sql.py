"""Statements run by their cached driver text read what SQLAlchemy reads.

Property: for any generated plan, on SQLite and on PostgreSQL, every statement
the plan's template may run has a driver text, the one SQLAlchemy sends with
the same values, and returns the same rows (same keys, same values
after result processing) through `run_rows` (compiled once, text cached by
statement and IN-list lengths, values ordered for the driver) as the same
statement built afresh and run by `Connection.execute`, for IN lists of any
length, an empty one included. A text cached for one IN length and served for
another, or a value bound in the wrong place, would differ here.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa
from exec_support import CATALOG, NOW, TENANTS, Snapshot, run_rows, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine

from qdsl.dsl.errors import QdslError
from qdsl.executor import names as N
from qdsl.executor.compile import prepare
from qdsl.executor.driver_sql import driver_statement
from qdsl.executor.statements import StatementCache

_DATA: dict[int, Snapshot] = {}


def _data(engine: Engine) -> Snapshot:
    if id(engine) not in _DATA:
        _DATA[id(engine)] = snapshot(engine)
    return _DATA[id(engine)]


def _statements(prep: Any) -> dict[str, Any]:
    return {**dict(prep.statements.named()), "entity_facts": prep.statements.entity_facts}


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st_data=st.data())
def test_driver_text_reads_what_sqlalchemy_reads(engine: Engine, st_data: st.DataObject) -> None:
    data = _data(engine)
    dialect = engine.dialect.name
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=st_data.draw(st.booleans())))
    tenant = st_data.draw(st.sampled_from(TENANTS))
    try:
        cached = prepare(plan, CATALOG, dialect, tenant, now=NOW)
    except QdslError:
        return  # a plan the binder refuses runs nothing
    fresh = prepare(plan, CATALOG, dialect, tenant, now=NOW, cache=StatementCache())
    known = sorted({str(f["entity_id"]) for f in data["semantic_facts"]})
    ids = st_data.draw(st.lists(st.sampled_from(known), max_size=6, unique=True))
    params = {**cached.params, N.IDS: ids, N.FALLBACK_CAP: cached.fallback_cap}
    if cached.fallback_runs:
        params.update(cached.fallback_runs[0].params)
    fresh_stmts = _statements(fresh)
    sent: list[tuple[str, Any]] = []

    def note(_c: Any, _cur: Any, statement: str, parameters: Any, *_rest: Any) -> None:
        sent.append((statement, parameters))

    with engine.connect() as conn:
        for role, stmt in _statements(cached).items():
            # every statement has a driver text: a bare connection can run it
            found = driver_statement(stmt, engine.dialect, params)
            assert found is not None, role
            got = run_rows(conn, stmt, params)
            sent.clear()
            sa.event.listen(conn, "before_cursor_execute", note)
            try:
                result = conn.execute(fresh_stmts[role], params)
            finally:
                sa.event.remove(conn, "before_cursor_execute", note)
            # the text and values SQLAlchemy sends are the driver text's (what the
            # benchmarks capture and replay is what the bare path runs)
            assert sent == [(found.sql, found.values(params))], role
            keys = tuple(result.keys())
            want = [dict(zip(keys, r, strict=True)) for r in result.all()]
            assert got == want, (role, plan)
            assert [tuple(r) for r in got] == [keys for _ in got], role


def test_an_in_list_of_another_length_gets_its_own_text(engine: Engine) -> None:
    """The IN list's length is part of the text: each length is rendered once."""
    table = sa.table("semantic_facts", sa.column("id"), sa.column("entity_id"))
    stmt = sa.select(table.c.id).where(
        table.c.entity_id.in_(sa.bindparam("ids", expanding=True, type_=sa.Text()))
    )
    two = driver_statement(stmt, engine.dialect, {"ids": ["a", "b"]})
    three = driver_statement(stmt, engine.dialect, {"ids": ["a", "b", "c"]})
    again = driver_statement(stmt, engine.dialect, {"ids": ["x", "y"]})
    assert two is not None and three is not None
    assert two.sql != three.sql
    assert again is two
    assert two.values({"ids": ["x", "y"]}) in (("x", "y"), {"ids_1": "x", "ids_2": "y"})


def test_datetimes_stored_as_text_read_the_same_when_remembered() -> None:
    """The UTC reader hands out a datetime parsed before for the same text: the
    same value as parsing afresh, across more texts than it remembers, naive
    and offset texts alike, NULL as None."""
    from datetime import UTC, datetime, timedelta

    from qdsl.executor.driver_sql import _PARSED_MAX, _utc_reader

    def parse(text: str | None) -> datetime | None:  # as the dialect's: NULL is None
        return None if text is None else datetime.fromisoformat(text)

    read = _utc_reader(parse)
    base = datetime(2026, 1, 1)
    texts = [
        (base + timedelta(minutes=i)).isoformat(" ") + ("+02:00" if i % 3 == 0 else "")
        for i in range(_PARSED_MAX * 2 + 7)
    ]
    for _ in range(2):
        for text in texts:
            want = parse(text)
            assert want is not None
            want = want.replace(tzinfo=UTC) if want.tzinfo is None else want.astimezone(UTC)
            got = read(text)
            assert got == want and got.tzinfo is UTC and got.isoformat() == want.isoformat()
    assert read(None) is None
