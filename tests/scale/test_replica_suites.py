"""The isolation, differential and row-level security suites on hot standbys.

Each standby of the cluster (and the multi-host URL over both, as a deployment
names them) answers through the executor exactly what the primary holds: no
row, count or evidence of another tenant (the isolation suite's check), the
Python reference's rows and facts (the differential suite's check) and the
primary's own result, and as the reader role only the tenant it sets (the RLS
suite's counts). The executor's read-only transaction is what a standby needs:
nothing it runs writes.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import pytest
from exec_support import CATALOG, NOW, TENANTS, Snapshot, sample_plan, snapshot
from hypothesis import given, settings
from hypothesis import strategies as st
from pg_parts import Cluster
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine, text
from test_differential import _agrees_with_oracle, _summary
from test_isolation import _check
from test_rls import _admin_counts, _counts_as_reader

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import QueryType
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.executor.run import execute
from qdsl.facts.engines import read_only_engine

pytestmark = pytest.mark.pg

# Plans per example x examples: a sample of the suites' own counts (ci: 2,000
# plans per dialect), enough to cover every query type on every server.
BATCH = 4
EXAMPLES = 12
READERS = ["standby1", "standby2", "standbys"]


@pytest.fixture(scope="module")
def data(primary_engine: Engine) -> Snapshot:
    return snapshot(primary_engine)


@pytest.fixture(scope="module", params=READERS)
def reader(request: pytest.FixtureRequest, cluster: Cluster) -> Iterator[Engine]:
    name = request.param
    url = cluster.standbys_url() if name == "standbys" else cluster.standby_url(
        READERS.index(name)
    )
    # as a deployment's read URL is opened: every transaction READ ONLY
    engine = read_only_engine(url)
    yield engine
    engine.dispose()


def test_every_reader_is_a_standby_with_the_primarys_rows(
    reader: Engine, primary_engine: Engine, data: Snapshot
) -> None:
    with reader.connect() as conn:
        assert conn.execute(text("SELECT pg_is_in_recovery()")).scalar() is True
    assert _unordered(snapshot(reader)) == _unordered(data)


def _unordered(data: Snapshot) -> dict[str, list[str]]:
    return {name: sorted(repr(sorted(row.items())) for row in rows) for name, rows in data.items()}


@settings(max_examples=EXAMPLES)
@given(st_data=st.data())
def test_isolation_on_standbys(
    reader: Engine, data: Snapshot, st_data: st.DataObject, suite_counts: Counter[str]
) -> None:
    for _ in range(BATCH):
        plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=True))
        for tenant in (*TENANTS, "t_nobody"):
            _check(plan, reader, data, tenant)
            suite_counts["isolation[standby] plan x tenant"] += 1


@settings(max_examples=EXAMPLES)
@given(st_data=st.data())
def test_differential_on_standbys(
    reader: Engine,
    primary_engine: Engine,
    data: Snapshot,
    st_data: st.DataObject,
    suite_counts: Counter[str],
) -> None:
    for _ in range(BATCH):
        plan = st_data.draw(plans(data))
        tenant = st_data.draw(st.sampled_from(TENANTS))
        try:
            plan = normalize(plan, CATALOG, PlanContext(tenant_id=tenant)).plan
            on_standby = execute(plan, CATALOG, reader, tenant, now=NOW)
        except PlanError:
            continue
        on_primary = execute(plan, CATALOG, primary_engine, tenant, now=NOW)
        suite_counts["differential standby = primary = python (plans)"] += 1
        assert _summary(on_standby) == _summary(on_primary), plan
        assert [r.values for r in on_standby.rows] == [r.values for r in on_primary.rows]
        assert [e.id for e in on_standby.evidence] == [e.id for e in on_primary.evidence]
        _agrees_with_oracle(plan, on_standby, data, tenant)


def test_rls_on_standbys(reader: Engine, primary_engine: Engine) -> None:
    assert set(_counts_as_reader(reader, None).values()) == {0}
    assert set(_counts_as_reader(reader, "").values()) == {0}
    for tenant in TENANTS:
        seen = _counts_as_reader(reader, tenant)
        assert seen == _admin_counts(primary_engine, tenant)
        assert seen["projects"] > 0 and seen["semantic_facts"] > 0
    assert set(_counts_as_reader(reader, "t9' OR '1'='1").values()) == {0}


def test_a_deployments_read_engine_reads_on_after_a_plan(cluster: Cluster) -> None:
    # SQLAlchemy hands the executor's connection back with psycopg's read_only
    # reset to False, so a plain engine's next transaction would BEGIN READ WRITE,
    # which a standby refuses; the read URL's engine keeps every transaction READ ONLY
    from qdsl.deployment import resolve

    deployment = resolve(None, cluster.primary_url(), read_url=cluster.standby_url(0))
    try:
        engine = deployment.read_engine()
        plan = normalize(
            sample_plan("project", QueryType.COUNT), CATALOG, PlanContext(tenant_id="t1")
        ).plan
        for _ in range(3):
            assert execute(plan, CATALOG, engine, "t1", now=NOW).count
            with engine.connect() as conn:  # a plain transaction, as the value index opens
                assert conn.execute(text("SELECT pg_is_in_recovery()")).scalar() is True
    finally:
        deployment.close()
