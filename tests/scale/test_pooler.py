"""qdsl behind PgBouncer in transaction mode (Debian's 1.18: no prepared
statements kept across transactions).

Many tenants at once share a few server connections, each transaction on
whichever is free: the reader role, the tenant and the timeout are set per
transaction (`set_config(..., true)`), so none of them is ever seen by another
transaction, and with `prepare_threshold=none` in the URL nothing is prepared
server-side, so no statement depends on the server connection it lands on.
Without that setting psycopg prepares a statement on its fifth run, and the
pooler hands the name to another client's server connection: the control test
shows the failure the setting avoids.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, sample_plan, snapshot
from pg_parts import Bouncer, start_pgbouncer
from sqlalchemy import Engine, func, select, text
from sqlalchemy.engine import make_url
from test_isolation import _check
from test_rls import _admin_counts, _counts_as_reader

from qdsl.dsl.errors import DatabaseError, PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.executor.run import execute
from qdsl.facts.db import READER_ROLE, make_engine

pytestmark = pytest.mark.pg

CALLERS = 16
ROUNDS = 6
TENANTS_AND_NONE = (*TENANTS, "t_nobody")


def _plans() -> list[Plan]:
    found = []
    for name, spec in CATALOG.entities.items():
        for query_type in spec.query_types:
            try:
                found.append(
                    normalize(sample_plan(name, query_type), CATALOG, PlanContext()).plan
                )
            except PlanError:
                continue
    return found


@pytest.fixture(scope="module")
def data(pg_engine: Engine) -> Snapshot:
    return snapshot(pg_engine)


@pytest.fixture(scope="module")
def pooled(bouncer: Bouncer, pg_url: str) -> Iterator[Engine]:
    database = make_url(pg_url).database or ""
    # more client connections than the pooler's 4 server connections
    engine = make_engine(
        bouncer.url(database, prepare_threshold="none"), pool_size=CALLERS, max_overflow=0
    )
    yield engine
    engine.dispose()


def _in_parallel(work: Callable[[int], None], callers: int = CALLERS) -> None:
    faults: list[BaseException] = []
    lock = threading.Lock()

    def run(i: int) -> None:
        try:
            work(i)
        except BaseException as exc:
            with lock:
                faults.append(exc)

    threads = [threading.Thread(target=run, args=(i,)) for i in range(callers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=900)
    assert not faults, faults[:3]


def _outside_any_plan(engine: Engine) -> dict[str, Any]:
    """What a plain transaction on the pooler sees: none of a plan's settings."""
    with engine.connect() as conn:
        row = conn.execute(
            select(
                func.current_setting("app.tenant_id", True).label("tenant"),
                func.current_user().label("role"),
                func.current_setting("statement_timeout").label("timeout"),
            )
        ).one()
        conn.commit()
    # unset: NULL where the setting was never made on the server connection, '' where
    # a transaction made it locally before (PostgreSQL keeps the name, not the value)
    return {"tenant": row.tenant or "", "role": row.role, "timeout": row.timeout}


def test_many_tenants_through_the_pooler_see_only_their_own(
    pooled: Engine, pg_engine: Engine, data: Snapshot
) -> None:
    plans = _plans()
    assert len(plans) > 10
    outside: list[dict[str, Any]] = []
    default = _outside_any_plan(pg_engine)
    assert default["tenant"] == "" and default["role"] != READER_ROLE

    def work(i: int) -> None:
        for n in range(ROUNDS):
            tenant = TENANTS_AND_NONE[(i + n) % len(TENANTS_AND_NONE)]
            for plan in plans[(i + n) % 3 :: 3]:
                # the isolation suite's check: rows, counts and evidence all the tenant's
                _check(plan, pooled, data, tenant)
            outside.append(_outside_any_plan(pooled))

    _in_parallel(work)
    # a plain transaction, interleaved with the plans on the same server
    # connections, never saw a plan's tenant, role or timeout
    assert len(outside) == CALLERS * ROUNDS
    assert all(seen == default for seen in outside), [s for s in outside if s != default][:3]


def test_rls_alone_through_the_pooler(pooled: Engine, pg_engine: Engine) -> None:
    expected = {t: _admin_counts(pg_engine, t) for t in TENANTS}

    def work(i: int) -> None:
        for n in range(ROUNDS):
            tenant = TENANTS[(i + n) % len(TENANTS)]
            # no tenant predicate at all: only the transaction's tenant setting
            assert _counts_as_reader(pooled, tenant) == expected[tenant]
            assert set(_counts_as_reader(pooled, None).values()) == {0}

    _in_parallel(work)


def test_the_same_plans_prepared_server_side_fail_behind_the_pooler(
    pg_admin_url: str, pg_url: str
) -> None:
    # control: psycopg's default prepares a statement on its 5th run; behind one
    # server connection shared per transaction, a second client's statement of the
    # same name meets the first's (or a prepared one is gone): what the URL's
    # prepare_threshold=none is for
    bouncer = start_pgbouncer(make_url(pg_admin_url).port or 5432, pool_size=1)
    engines: list[Engine] = []
    try:
        database = make_url(pg_url).database or ""
        engines = [make_engine(bouncer.url(database)) for _ in range(2)]
        plan = _plans()[0]
        with pytest.raises(DatabaseError) as info:
            for _ in range(10):
                for engine in engines:
                    execute(plan, CATALOG, engine, "t1", now=NOW)
        # named for its cause, with the setting in the hint
        assert info.value.code == "database/prepared_statement_missing", info.value.to_dict()
        assert "prepare_threshold=none" in (info.value.hint or "")
        # and the same runs with the setting: nothing prepared, nothing fails
        fixed = make_engine(bouncer.url(database, prepare_threshold="none"))
        engines.append(fixed)
        other = make_engine(bouncer.url(database, prepare_threshold="none"))
        engines.append(other)
        before = _prepared(fixed)  # the first clients' names stay on the server connection
        for _ in range(10):
            for engine in (fixed, other):
                execute(plan, CATALOG, engine, "t1", now=NOW)
        assert _prepared(fixed) == before
    finally:
        for engine in engines:
            engine.dispose()
        bouncer.stop()


def _prepared(engine: Engine) -> int:
    with engine.connect() as conn:
        found = conn.execute(text("SELECT count(*) FROM pg_prepared_statements")).scalar()
        conn.commit()
    return int(found or 0)
