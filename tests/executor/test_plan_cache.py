"""The compile cache serves exactly what compiling afresh would build.

Property: for any plan, written as text, as JSON or handed over as an object,
for either tenant and on both dialects, the normalized plan, its bound form
and the SQL and parameters compiled from it that `qdsl.dsl.plan.plan_cache` serves
(from a cache shared with every earlier example, a hit the second time) equal
what `normalize(load_plan(...))` builds from nothing. And an entry is never
served to another tenant, another context or another catalog.
"""

from __future__ import annotations

import contextlib
import json
import re

import pytest
from exec_support import CATALOG, NOW, Snapshot, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine

from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import ObjectRef, Plan
from qdsl.dsl.normalize import NormalizedPlan, PlanContext, normalize
from qdsl.dsl.plan.load import load_plan
from qdsl.dsl.plan.plan_cache import PlanCache, compile_plan_object, compile_source
from qdsl.dsl.plan.printer import to_text
from qdsl.executor.compile import prepare, render
from qdsl.executor.statements import StatementCache

SHARED = PlanCache(maxsize=4096)
_DATA: list[Snapshot] = []
# SQLAlchemy names an anonymous parameter (a literal OFFSET, say) by object id.
_ANON = re.compile(r"^%\(\d+ (\w+)\)s$")


def _data(engine: Engine) -> Snapshot:
    if not _DATA:
        _DATA.append(snapshot(engine))
    return _DATA[0]


def _sql(n: NormalizedPlan, dialect: str, tenant: str) -> list[object]:
    assert n.bound is not None
    prep = prepare(n.bound, CATALOG, dialect, tenant, now=NOW, cache=StatementCache())
    out: list[object] = [prep.params]
    for role, stmt in prep.statements.named():
        sql, names, _ = render(stmt, dialect)
        out.append((role, sql, tuple(_ANON.sub(r"anon \1", x) for x in names)))
    return out


def _same(cached: NormalizedPlan, fresh: NormalizedPlan, tenant: str) -> None:
    assert cached.plan == fresh.plan
    assert cached.plan.to_json_dict() == fresh.plan.to_json_dict()
    assert cached.warnings == fresh.warnings
    assert cached.tenant_id == fresh.tenant_id == tenant
    assert cached.bound == fresh.bound
    if cached.bound is not None:
        assert cached.bound.tenant_id == tenant
        for dialect in ("sqlite", "postgresql"):
            assert _sql(cached, dialect, tenant) == _sql(fresh, dialect, tenant)


def _sources(plan: Plan) -> list[str]:
    out = [json.dumps(plan.to_json_dict(), ensure_ascii=False)]
    with contextlib.suppress(QdslError):
        out.append(to_text(plan))  # a plan the text form cannot print: JSON only
    return out


@settings(
    max_examples=80, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st_data=st.data())
def test_a_cached_plan_equals_a_freshly_compiled_one(
    sqlite_engine: Engine, st_data: st.DataObject
) -> None:
    data = _data(sqlite_engine)
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=st_data.draw(st.booleans())))
    tenant = st_data.draw(st.sampled_from(("t1", "t2")))
    ctx = PlanContext(tenant_id=tenant)
    for source in _sources(plan):
        try:
            fresh = normalize(load_plan(source), CATALOG, ctx)
        except QdslError:
            continue  # refused afresh: the cache must refuse it too (below)
        for _ in range(2):  # a miss, then a hit
            _same(compile_source(source, CATALOG, ctx, cache=SHARED), fresh, tenant)
    try:
        fresh = normalize(plan, CATALOG, ctx)
    except QdslError:
        return
    for _ in range(2):
        _same(compile_plan_object(plan, CATALOG, ctx, cache=SHARED), fresh, tenant)


def test_the_shared_cache_was_exercised() -> None:
    """The property above means something only if entries were served again."""
    assert SHARED.hits > 0 or SHARED.misses == 0


def test_refusals_are_never_cached() -> None:
    cache = PlanCache()
    for _ in range(2):
        with contextlib.suppress(QdslError):
            compile_source('count nowhere where x = "1"', CATALOG, PlanContext("t1"), cache=cache)
    assert len(cache) == 0


def test_an_entry_is_never_served_across_tenants_contexts_or_catalogs() -> None:
    cache = PlanCache()
    source = 'list project where status = "active"'
    t1 = compile_source(source, CATALOG, PlanContext("t1"), cache=cache)
    assert compile_source(source, CATALOG, PlanContext("t1"), cache=cache) is t1
    t2 = compile_source(source, CATALOG, PlanContext("t2"), cache=cache)
    assert t2 is not t1 and t2.tenant_id == "t2" and t2.plan.scope.tenant_id == "t2"
    assert t2.bound is not None and t2.bound.tenant_id == "t2"
    ref = ObjectRef(entity_type="project", id="64")
    with_ref = PlanContext("t1", referenced_objects=(ref,))
    assert compile_source(source, CATALOG, with_ref, cache=cache) is not t1
    # another catalog: the same entities under another source name
    other = CATALOG.model_copy(update={"source": "another catalog"})
    assert other.content_key != CATALOG.content_key
    elsewhere = compile_source(source, other, PlanContext("t1"), cache=cache)
    assert elsewhere is not t1 and elsewhere.catalog is other
    # an equal catalog loaded apart shares the entry (its content is the same)
    twin = CATALOG.model_copy()
    assert compile_source(source, twin, PlanContext("t1"), cache=cache) is t1


def test_a_plan_object_key_keeps_value_types_apart() -> None:
    """`1`, `1.0` and `True` are equal (and hash alike) as Python values; the
    plans are not: a number filter keeps its type, and a boolean is refused."""
    cache = PlanCache()
    ctx = PlanContext("t1")

    def budget(value: object) -> Plan:
        return Plan.model_validate(
            {
                "query_type": "list",
                "entity_type": "project",
                "filters": [{"field": "budget", "operator": "equals", "value": value}],
            }
        )

    as_int = compile_plan_object(budget(1), CATALOG, ctx, cache=cache)
    as_float = compile_plan_object(budget(1.0), CATALOG, ctx, cache=cache)
    assert type(as_int.plan.filters[0].value) is int
    assert type(as_float.plan.filters[0].value) is float
    with pytest.raises(QdslError):
        compile_plan_object(budget(True), CATALOG, ctx, cache=cache)


def test_the_cache_is_bounded() -> None:
    cache = PlanCache(maxsize=3)
    for n in range(1, 8):
        compile_source(f"list project limit {n}", CATALOG, PlanContext("t1"), cache=cache)
    assert len(cache) == 3
