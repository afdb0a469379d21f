"""`qdsl demo init`: qdsl's own tables, the demo schema and the demo rows (idempotent).

`ensure_demo(url)` runs `qdsl db upgrade` if it is due, creates the demo
tables (facts.demo.tables) when they are missing and seeds every demo tenant
that has no rows yet. On PostgreSQL the demo tables get what a deployer's
tables get from their operator: trigram indexes on the fallback text columns,
forced row-level security keyed on `app.tenant_id`, and SELECT for the reader
role. Only the demo calls this; `qdsl db upgrade` never creates demo tables.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from functools import cache
from typing import Any

from sqlalchemy import Connection, Engine, Index, exists, func, inspect, select
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from qdsl.facts.db import (
    HEAD_REVISION,
    READER_ROLE,
    create_sqlite_file,
    current_revision,
    db_error,
    make_engine,
    normalize_url,
    setup_lock,
    tenant_transaction,
    upgrade_engine,
)
from qdsl.facts.dberrors import SchemaPredatesVersion
from qdsl.facts.demo.constants import DEMO_TENANTS
from qdsl.facts.demo.tables import DEMO_TABLES, TABLES_BY_NAME, TRIGRAM_COLUMNS, metadata, projects
from qdsl.facts.tables import TABLES_BY_NAME as OWN_TABLES
from qdsl.facts.tables import TENANT_TABLES as OWN_TENANT_TABLES

__all__ = ["DemoStatus", "ensure_demo", "row_counts"]


@cache
def _trigram_indexes() -> None:
    """PostgreSQL: trigram indexes for the fallback's confirming ILIKE; SQLite skips
    them. Added to the metadata when a schema is created, not at import: their
    `postgresql_*` options load SQLAlchemy's PostgreSQL dialect, which every demo
    call on SQLite (`qdsl ask` included) would otherwise import for nothing."""
    for table, columns in TRIGRAM_COLUMNS.items():
        for column in columns:
            Index(
                f"ix_{table}_{column}_trgm",
                metadata.tables[table].c[column],
                postgresql_using="gin",
                postgresql_ops={column: "gin_trgm_ops"},
            ).ddl_if(dialect="postgresql")


@dataclass(frozen=True)
class DemoStatus:
    url: str
    revision: str
    seeded_tenants: tuple[str, ...]
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _secure_pg(conn: Connection) -> None:
    """Forced RLS keyed on the session's tenant, and SELECT for the reader role."""
    from psycopg import sql

    raw = conn.connection.driver_connection
    tenant = sql.SQL("tenant_id = NULLIF(current_setting('app.tenant_id', true), '')")
    for demo_table in DEMO_TABLES:
        name = sql.Identifier(demo_table.name)
        statements = (
            sql.SQL("GRANT SELECT ON {} TO {}").format(name, sql.Identifier(READER_ROLE)),
            sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(name),
            sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(name),
            sql.SQL("CREATE POLICY tenant_isolation ON {} USING ({}) WITH CHECK ({})").format(
                name, tenant, tenant
            ),
        )
        for statement in statements:
            conn.exec_driver_sql(statement.as_string(raw))


def _create_schema(engine: Engine) -> None:
    _trigram_indexes()
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql("CREATE EXTENSION IF NOT EXISTS pg_trgm")
        metadata.create_all(conn)
        if conn.dialect.name == "postgresql":
            _secure_pg(conn)


def _seed_tenant(conn: Connection, rows: dict[str, list[dict[str, Any]]]) -> None:
    from qdsl.facts.bulk import bulk_insert

    tables = {**OWN_TABLES, **TABLES_BY_NAME}
    for table_name, table_rows in rows.items():
        bulk_insert(conn, tables[table_name], table_rows)


def _tenant_seeded(conn: Connection, tenant_id: str) -> bool:
    return bool(
        conn.execute(select(exists().where(projects.c.tenant_id == tenant_id))).scalar_one()
    )


def _demo_ready(engine: Engine) -> bool:
    """Whether the demo is migrated and seeded. A SQLite file another process is
    seeding right now answers "database is locked" once its busy timeout has
    passed, and a seeding can outlast it: that is "not ready yet", and the
    caller waits on the setup lock (which has no timeout) and looks again."""
    try:
        return _demo_ready_now(engine)
    except OperationalError as exc:
        if engine.dialect.name == "sqlite" and _is_busy(exc):
            return False
        raise


def _is_busy(exc: OperationalError) -> bool:
    text = str(exc.orig).lower()
    return "locked" in text or "busy" in text


def _demo_ready_now(engine: Engine) -> bool:
    if current_revision(engine) != HEAD_REVISION or not inspect(engine).has_table(projects.name):
        return False
    for tenant_id in DEMO_TENANTS:
        with tenant_transaction(engine, tenant_id) as conn:
            if not _tenant_seeded(conn, tenant_id):
                return False
    return True


def _migrate_and_seed(engine: Engine) -> list[str]:
    """Under setup_lock: upgrade if due, create the demo schema, seed each missing tenant."""
    if current_revision(engine) != HEAD_REVISION:
        try:
            upgrade_engine(engine)
        except SchemaPredatesVersion as exc:
            raise _older_demo(engine, exc) from None
    if not inspect(engine).has_table(projects.name):
        _create_schema(engine)
    data: Any = None
    seeded = []
    for tenant_id in DEMO_TENANTS:
        # One transaction per tenant with the RLS tenant set, so a
        # non-superuser owner passes the policies' WITH CHECK too.
        try:
            with tenant_transaction(engine, tenant_id) as conn:
                if _tenant_seeded(conn, tenant_id):
                    continue
                if data is None:
                    from qdsl.facts.demo.data import build_demo

                    data = build_demo()
                _seed_tenant(conn, data.rows_for(tenant_id))
            seeded.append(tenant_id)
        except IntegrityError:
            # Seeded concurrently by a process that does not take setup_lock.
            continue
    return seeded


def _older_demo(engine: Engine, exc: SchemaPredatesVersion) -> SchemaPredatesVersion:
    """The demo's own words for a demo database an older qdsl made: it holds only
    demo rows, so it is deleted and made again (the file is named, not its path)."""
    database = engine.url.database or ""
    if engine.dialect.name == "sqlite" and database:
        name = database.replace("\\", "/").rsplit("/", 1)[-1]
        hint = (
            f"delete the old demo file {name} and run `qdsl demo init` (the default demo's "
            "file is in the state dir, which `qdsl refs path` prints)"
        )
    else:
        hint = "drop and recreate this demo database, then run `qdsl demo init`"
    return SchemaPredatesVersion(
        "the demo database was made by an older qdsl (before qdsl_alembic_version) and "
        "cannot be upgraded in place",
        hint=hint,
        details=exc.details,
    )


def ensure_demo(url: str, *, count_rows: bool = False) -> DemoStatus:
    """Upgrade if needed, create the demo schema, seed each demo tenant without rows.

    On an up-to-date, seeded database this is two cheap queries per tenant and
    no Alembic at all: every CLI call of the demo goes through here.
    `count_rows` fills DemoStatus.rows (one COUNT per table and tenant).
    """
    started = time.perf_counter()
    create_sqlite_file(url)  # 0600, before SQLite makes it 0644
    engine = make_engine(url)
    seeded: list[str] = []
    try:
        if not _demo_ready(engine):
            with setup_lock(engine):
                seeded = _migrate_and_seed(engine)
        counts = row_counts(engine) if count_rows else {}
        revision = current_revision(engine) or HEAD_REVISION
    except SQLAlchemyError as exc:
        raise db_error(exc, url) from exc
    finally:
        engine.dispose()
    return DemoStatus(
        url=make_url(normalize_url(url)).render_as_string(hide_password=True),
        revision=revision,
        seeded_tenants=tuple(seeded),
        rows=counts,
        seconds=time.perf_counter() - started,
    )


def row_counts(engine: Engine) -> dict[str, int]:
    """Rows per demo and qdsl table over the demo tenants (tenant set per tenant for RLS)."""
    tables = (*DEMO_TABLES, *OWN_TENANT_TABLES)
    counts = {t.name: 0 for t in tables}
    for tenant_id in DEMO_TENANTS:
        with tenant_transaction(engine, tenant_id) as conn:
            for table in tables:
                n = conn.execute(
                    select(func.count()).select_from(table).where(table.c.tenant_id == tenant_id)
                ).scalar_one()
                counts[table.name] += int(n)
    return counts
