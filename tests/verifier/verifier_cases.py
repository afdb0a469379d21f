"""Hand-built plans, results and answers for verifier tests (no database).

Import as `from verifier_cases import ...` (pytest puts this directory on sys.path).
The scenario: tenant t1 has 137 projects, 3 of them A股; execution "exec-1"
read them with fresh facts.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy
from qdsl.dsl.normalize import PlanContext, normalize
from qdsl.executor.result import Evidence, ExecutionResult, ResultRow
from qdsl.render import render
from qdsl.verifier import Answer, VerifyContext

NOW = datetime(2026, 11, 1, tzinfo=UTC)
CATALOG = demo_catalog()
EXEC = "exec-1"
BASELINE = 137


def plan(
    qt: QueryType,
    filters: tuple[Filter, ...] = (),
    *,
    fresh: bool = False,
    limit: int | None = None,
) -> Plan:
    raw = Plan(
        query_type=qt,
        entity_type="project",
        filters=filters,
        limit=limit,
        retrieval_policy=RetrievalPolicy(require_fresh_fact=fresh),
    )
    return normalize(raw, CATALOG, PlanContext(tenant_id="t1")).plan


A_SHARE = (Filter(field="market_theme", operator=Operator.EQUALS_OR_ALIAS, value="A-share"),)


def fact(
    n: int,
    entity_id: str,
    *,
    tenant: str = "t1",
    execution_id: str = EXEC,
    observed: datetime = datetime(2026, 10, 1, tzinfo=UTC),
    valid_until: datetime | None = None,
    value: str = "A股",
) -> Evidence:
    return Evidence(
        id=f"fact:{n}",
        kind="fact",
        execution_id=execution_id,
        tenant_id=tenant,
        entity_type="project",
        entity_id=entity_id,
        predicate="market_theme",
        value_text=value,
        source_type="doc",
        source_ref=f"doc:{n}#p1",
        observed_at=observed,
        valid_until=valid_until,
    )


def row(entity_id: str, label: str, evidence: tuple[str, ...], tenant: str = "t1") -> ResultRow:
    return ResultRow(
        entity_type="project",
        entity_id=entity_id,
        tenant_id=tenant,
        label=label,
        values={"id": entity_id, "title": label, "status": "active"},
        evidence_ids=evidence,
    )


def existence_result(**overrides: Any) -> ExecutionResult:
    base: dict[str, Any] = {
        "execution_id": EXEC,
        "tenant_id": "t1",
        "query_type": QueryType.EXISTENCE,
        "entity_type": "project",
        "template": "existence_facts",
        "plan_hash": "abc",
        "rows": (
            row("60", "量化选股平台", ("fact:1",)),
            row("61", "Factor research", ("fact:2",)),
            row("62", "盘后风控", ("fact:3",)),
        ),
        "baseline_total": BASELINE,
        "evidence": (fact(1, "60"), fact(2, "61", value="A-share"), fact(3, "62")),
        "retrieval": "facts",
    }
    base.update(overrides)
    return ExecutionResult(**base)


def count_result(n: int, **overrides: Any) -> ExecutionResult:
    base: dict[str, Any] = {
        "execution_id": EXEC,
        "tenant_id": "t1",
        "query_type": QueryType.COUNT,
        "entity_type": "project",
        "template": "count_facts",
        "plan_hash": "abc",
        "count": n,
        "baseline_total": BASELINE,
    }
    base.update(overrides)
    return ExecutionResult(**base)


def context(**overrides: Any) -> VerifyContext:
    kw: dict[str, Any] = {"tenant_id": "t1", "now": NOW, "catalog": CATALOG}
    kw.update(overrides)
    return VerifyContext(**kw)


def rendered(p: Plan, r: ExecutionResult, language: str = "zh") -> Answer:
    assert language in ("zh", "en")
    return render(p, r, language="zh" if language == "zh" else "en", catalog=CATALOG)


def with_(answer: Answer, **changes: Any) -> Answer:
    return answer.model_copy(update=changes)
