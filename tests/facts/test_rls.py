"""Row-level security on PostgreSQL, seen as the read-only role the executor uses."""

from __future__ import annotations

import pytest
from sqlalchemy import Engine, Table, delete, func, insert, select, text, update
from sqlalchemy.exc import DBAPIError

from qdsl.facts.db import READER_ROLE, tenant_transaction
from qdsl.facts.demo.tables import DEMO_TABLES, projects
from qdsl.facts.tables import TENANT_TABLES as OWN_TABLES
from qdsl.facts.tables import semantic_facts

TENANT_TABLES = (*DEMO_TABLES, *OWN_TABLES)

pytestmark = pytest.mark.pg


def _counts_as_reader(engine: Engine, tenant: str | None) -> dict[str, int]:
    with engine.begin() as conn:
        conn.execute(text("SET TRANSACTION READ ONLY"))
        conn.execute(text(f"SET LOCAL ROLE {READER_ROLE}"))
        if tenant is not None:
            conn.execute(select(func.set_config("app.tenant_id", tenant, True)))
        # Deliberately no tenant predicate: only RLS stands between tenants here.
        return {
            t.name: int(conn.execute(select(func.count()).select_from(t)).scalar_one())
            for t in TENANT_TABLES
        }


def _admin_counts(engine: Engine, tenant: str) -> dict[str, int]:
    with engine.connect() as conn:
        return {
            t.name: int(
                conn.execute(
                    select(func.count()).select_from(t).where(t.c.tenant_id == tenant)
                ).scalar_one()
            )
            for t in TENANT_TABLES
        }


def test_reader_without_tenant_sees_nothing(pg_engine: Engine) -> None:
    assert set(_counts_as_reader(pg_engine, None).values()) == {0}
    assert set(_counts_as_reader(pg_engine, "").values()) == {0}


@pytest.mark.parametrize("tenant", ["t1", "t2", "t3"])
def test_reader_with_tenant_sees_exactly_that_tenant(pg_engine: Engine, tenant: str) -> None:
    seen = _counts_as_reader(pg_engine, tenant)
    assert seen == _admin_counts(pg_engine, tenant)
    assert seen["projects"] > 0 and seen["semantic_facts"] > 0 and seen["text_grams"] > 0
    with tenant_transaction(pg_engine, tenant, read_only=True, role=READER_ROLE) as conn:
        tenants = set(conn.execute(select(semantic_facts.c.tenant_id).distinct()).scalars())
    assert tenants == {tenant}


def test_unknown_tenant_sees_nothing(pg_engine: Engine) -> None:
    assert set(_counts_as_reader(pg_engine, "t9' OR '1'='1").values()) == {0}


def _write_statements(table: Table) -> list[object]:
    return [
        insert(table).values(
            tenant_id="t1",
            id="999999",
            title="x",
            status="active",
            created_at="2026-11-01T00:00:00Z",
        ),
        update(table).where(table.c.tenant_id == "t1").values(title="hijacked"),
        delete(table).where(table.c.tenant_id == "t1"),
    ]


@pytest.mark.parametrize("which", ["insert", "update", "delete"])
def test_reader_cannot_write(pg_engine: Engine, which: str) -> None:
    stmt = dict(zip(["insert", "update", "delete"], _write_statements(projects), strict=True))[
        which
    ]
    # Not read-only here: the role's missing privileges alone must stop it.
    with pytest.raises(DBAPIError) as info, pg_engine.begin() as conn:
        conn.execute(text(f"SET LOCAL ROLE {READER_ROLE}"))
        conn.execute(select(func.set_config("app.tenant_id", "t1", True)))
        conn.execute(stmt)  # type: ignore[call-overload]
    assert "permission denied" in str(info.value)
    assert _admin_counts(pg_engine, "t1")["projects"] > 0
    with pg_engine.connect() as conn:
        titles = set(
            conn.execute(select(projects.c.title).where(projects.c.tenant_id == "t1")).scalars()
        )
    assert "hijacked" not in titles


def test_reader_cannot_write_facts_or_grams(pg_engine: Engine) -> None:
    for table in (semantic_facts, TENANT_TABLES[-1]):
        with pytest.raises(DBAPIError, match="permission denied"), pg_engine.begin() as conn:
            conn.execute(text(f"SET LOCAL ROLE {READER_ROLE}"))
            conn.execute(select(func.set_config("app.tenant_id", "t1", True)))
            conn.execute(delete(table).where(table.c.tenant_id == "t1"))


def test_demo_init_gives_the_demo_tables_trigram_indexes_and_forced_rls(pg_engine: Engine) -> None:
    from qdsl.facts.demo.tables import TRIGRAM_COLUMNS

    with pg_engine.connect() as conn:
        trgm = set(
            conn.execute(
                text("SELECT indexname FROM pg_indexes WHERE indexdef LIKE '%gin_trgm_ops%'")
            ).scalars()
        )
        forced = {
            row.relname
            for row in conn.execute(
                text(
                    "SELECT relname FROM pg_class WHERE relkind = 'r' AND relrowsecurity "
                    "AND relforcerowsecurity AND relnamespace = current_schema()::regnamespace"
                )
            )
        }
    assert {f"ix_{t}_{c}_trgm" for t, cols in TRIGRAM_COLUMNS.items() for c in cols} <= trgm
    assert {t.name for t in TENANT_TABLES} <= forced
