"""`catalog check` and `db secure` on the support-desk deployment.

Grants as a deployer might write them by hand enable row-level security but do
not force it, and grant the whole agents table, sensitive email included: the
check names each of those, `db secure` fixes them, and questions are still
answered as the reader role afterwards.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from click.testing import CliRunner
from deployments.fixtures import TICKETS_CATALOG, build_tickets_database

from qdsl.api import AnswerOptions, plan_and_answer
from qdsl.cli.main import cli
from qdsl.dsl.catalog import Catalog
from qdsl.facts.db import make_engine

NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)


def _check(url: str) -> tuple[int, list[dict[str, object]]]:
    res = CliRunner().invoke(
        cli, ["--json", "--db", url, "--catalog", str(TICKETS_CATALOG), "catalog", "check"]
    )
    findings: list[dict[str, object]] = json.loads(res.stdout)["data"]["findings"]
    return res.exit_code, findings


def test_the_desk_passes_on_sqlite(tickets_sqlite_url: str) -> None:
    code, findings = _check(tickets_sqlite_url)
    assert code == 0
    assert [f for f in findings if f["level"] == "error"] == []


def test_the_desk_grants_are_flagged_then_secured_on_postgresql(
    pg_database_factory: Callable[[], str],
    tickets_catalog: Catalog,
    tickets_rows: dict[str, list[dict[str, Any]]],
) -> None:
    url = pg_database_factory()
    build_tickets_database(url)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.exec_driver_sql("GRANT SELECT ON agents, tickets, kb_articles TO qdsl_reader")
            for table in ("agents", "tickets", "kb_articles"):
                conn.exec_driver_sql(f"DROP POLICY qdsl_qdsl_reader_tenant ON {table}")
    finally:
        engine.dispose()
    code, findings = _check(url)
    assert code == 3
    messages = {str(f["message"]) for f in findings if f["rule"] == "pg_security"}
    for table in ("agents", "tickets", "kb_articles"):
        assert (
            f"{table}: no RESTRICTIVE policy keeps 'qdsl_reader' to the session's tenant "
            "(tenant_id)"
        ) in messages
        # unforced RLS on the desk's own tables is not a fault: the owner keeps its rows
        assert not any(m.startswith(f"{table}: row-level security is not forced") for m in messages)
    assert "'qdsl_reader' can read agents.email, which the catalog marks sensitive" in messages
    printed = CliRunner().invoke(
        cli, ["--db", url, "--catalog", str(TICKETS_CATALOG), "db", "secure", "--print"]
    )
    assert printed.exit_code == 0
    assert (
        'CREATE POLICY "qdsl_qdsl_reader_tenant" ON "public"."tickets" AS RESTRICTIVE FOR ALL '
        'TO "qdsl_reader"'
    ) in printed.stdout
    assert "FORCE ROW LEVEL SECURITY" not in printed.stdout
    assert 'GRANT SELECT ("tenant_id", "id", "name", "team", "hired_at") ON "public"."agents"' in (
        printed.stdout
    )
    applied = CliRunner().invoke(
        cli, ["--db", url, "--catalog", str(TICKETS_CATALOG), "db", "secure"]
    )
    assert applied.exit_code == 0, applied.output
    code, findings = _check(url)
    assert code == 0
    assert [f for f in findings if f["rule"] == "pg_security" or f["level"] == "error"] == []
    engine = make_engine(url)
    try:
        answer = plan_and_answer(
            "How many urgent tickets are there?",
            "acme",
            engine=engine,
            options=AnswerOptions(catalog=tickets_catalog, now=NOW),
        )
    finally:
        engine.dispose()
    assert answer.status == "answered"
    # Recomputed from the rows, not taken from qdsl.
    urgent = [
        t for t in tickets_rows["tickets"] if t["tenant_id"] == "acme" and t["priority"] == "urgent"
    ]
    assert answer.data["count"] == len(urgent) > 0


def test_a_draft_of_the_desk_loads_and_passes_the_check(
    tickets_dialect: str,
    tickets_sqlite_url: str,
    pg_database_factory: Callable[[], str],
    tmp_path: Path,
) -> None:
    from qdsl.dsl.catalog import load_catalog

    url = tickets_sqlite_url
    if tickets_dialect == "postgresql":
        url = pg_database_factory()
        build_tickets_database(url)
    draft = tmp_path / "draft.toml"
    tables = ["--table", "tickets", "--table", "agents", "--table", "kb_articles"]
    res = CliRunner().invoke(cli, ["--db", url, "catalog", "init", *tables, "--out", str(draft)])
    assert res.exit_code == 0, res.output
    catalog = load_catalog(draft)
    ticket = catalog.entities["ticket"]
    assert (ticket.id, ticket.tenant, ticket.label) == ("id", "tenant_id", "subject")
    assert ticket.fields["status"].values == ("closed", "open", "pending", "solved")
    assert ticket.fields["opened_at"].type.value == "datetime"
    assert ticket.fields["refund_amount"].type.value == "number"
    assert catalog.entities["agent"].sensitive == {"email"}
    assert "opened_at" in ticket.sorts  # indexed (after the tenant)
    if tickets_dialect == "postgresql":
        secure = ["--db", url, "--catalog", str(draft), "db", "secure"]
        assert CliRunner().invoke(cli, secure).exit_code == 0
    # The draft's entity names are its own: its indexes are built under them.
    refresh = ["--db", url, "--catalog", str(draft), "index", "refresh"]
    assert CliRunner().invoke(cli, refresh).exit_code == 0
    check = ["--json", "--db", url, "--catalog", str(draft), "catalog", "check"]
    res = CliRunner().invoke(cli, check)
    assert res.exit_code == 0, res.stdout
