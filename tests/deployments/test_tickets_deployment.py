"""The support-desk deployment: its files are what a deployer writes, and qdsl answers on it.

Expected answers are recomputed here in plain Python from the rows (read back
with sqlite3), never taken from qdsl.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import pytest
from deployments.fixtures import TICKETS_DIR, TICKETS_TENANTS, sql_statements
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.dsl.catalog import Catalog, FieldType
from qdsl.dsl.textnorm import normalize_text

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)
Rows = dict[str, list[dict[str, Any]]]


def _tickets(rows: Rows, tenant: str) -> list[dict[str, Any]]:
    return [t for t in rows["tickets"] if t["tenant_id"] == tenant]


def _with_area(rows: Rows, tenant: str, spellings: list[str]) -> set[str]:
    wanted = {normalize_text(s) for s in spellings}
    return {
        f["entity_id"]
        for f in rows["semantic_facts"]
        if f["tenant_id"] == tenant
        and f["predicate"] == "product_area"
        and f["value_norm"] in wanted
    }


def test_catalog_uses_the_deployer_keys(tickets_catalog: Catalog) -> None:
    ticket = tickets_catalog.entity("ticket")
    assert ticket.id_regex is not None and ticket.id_regex.fullmatch("TCK-7")
    assert tickets_catalog.entity("agent").id_regex is not None
    assert ticket.fields["requester"].link_values
    assert ticket.fields["assignee_id"].references == "agent"
    assert ticket.fields["product_area"].is_fact
    kinds = {f.type for f in ticket.fields.values()}
    assert {FieldType.ENUM, FieldType.DATETIME, FieldType.NUMBER, FieldType.TEXT} <= kinds
    assert "explain" in {qt.value for qt in tickets_catalog.entity("article").default_for}
    names = set(tickets_catalog.entities)
    assert not names & {"project", "task", "doc", "run", "signal", "user", "config"}


def test_sql_files_split_into_whole_statements() -> None:
    schema = sql_statements(TICKETS_DIR / "schema.sql")
    assert [s.split()[0:2] for s in schema if s.startswith("CREATE TABLE")] == [
        ["CREATE", "TABLE"]
    ] * 3
    data = sql_statements(TICKETS_DIR / "data.sql")
    assert all(s.startswith("INSERT INTO ") for s in data)


def test_rows_are_shaped_for_the_checks(tickets_rows: Rows) -> None:
    for tenant in TICKETS_TENANTS:
        tickets = _tickets(tickets_rows, tenant)
        assert 30 <= len(tickets) <= 60
        assert any(t["refund_amount"] is None for t in tickets)
        assert any(t["refund_amount"] is not None for t in tickets)
        assert any(t["assignee_id"] is None for t in tickets)
        assert {t["status"] for t in tickets} == {"open", "pending", "solved", "closed"}
    seven = {t["tenant_id"]: t for t in tickets_rows["tickets"] if t["id"] == "TCK-7"}
    assert set(seven) == set(TICKETS_TENANTS)
    acme, globex = seven["acme"], seven["globex"]
    assert all(acme[k] != globex[k] for k in ("subject", "status", "priority", "requester"))


def test_facts_are_normalized_like_the_planner(tickets_rows: Rows) -> None:
    facts = tickets_rows["semantic_facts"]
    assert facts
    for f in facts:
        assert f["value_norm"] == normalize_text(f["value_text"])
        assert f["entity_type"] == "ticket" and f["predicate"] == "product_area"


def _ask(question: str, tenant: str, engine: Engine, catalog: Catalog) -> Any:
    return plan_and_answer(
        question, tenant_id=tenant, engine=engine, options=AnswerOptions(catalog=catalog, now=NOW)
    )


@pytest.mark.parametrize("tenant", TICKETS_TENANTS)
def test_questions_run_end_to_end(
    tenant: str, tickets_engine: Engine, tickets_catalog: Catalog, tickets_rows: Rows
) -> None:
    tickets = _tickets(tickets_rows, tenant)

    total = _ask("How many tickets are there?", tenant, tickets_engine, tickets_catalog)
    assert (total.status, total.data["count"]) == ("answered", len(tickets))

    urgent = _ask("有没有紧急的工单", tenant, tickets_engine, tickets_catalog)
    urgent_ids = {t["id"] for t in tickets if t["priority"] == "urgent"}
    assert urgent.status == "answered"
    assert urgent.data["exists"] is bool(urgent_ids)
    assert {m["id"] for m in urgent.data["matches"]} <= urgent_ids

    solved = _ask("列出所有已解决的工单", tenant, tickets_engine, tickets_catalog)
    assert solved.status == "answered"
    assert solved.data["total"] == sum(t["status"] == "solved" for t in tickets)

    billing = _ask("有多少个账单相关的工单", tenant, tickets_engine, tickets_catalog)
    spellings = tickets_catalog.entity("ticket").fields["product_area"].aliases["Billing"]
    assert billing.status == "answered"
    assert billing.data["count"] == len(_with_area(tickets_rows, tenant, list(spellings)))
