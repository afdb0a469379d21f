"""The demo schema: the entity tables the demo catalog describes.

Created by `qdsl demo init` (facts.demo.setup), never by `qdsl db upgrade`:
a deployer's database holds only qdsl's own tables (facts.tables) beside its
own. Every demo table carries `tenant_id` and a composite primary key
`(tenant_id, id)`: ids overlap across tenants on purpose, so a query that
forgets the tenant predicate returns visibly wrong rows.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    Numeric,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)

from qdsl.facts.tables import ID, NAMING_CONVENTION, TENANT, UtcDateTime

metadata = MetaData(naming_convention=NAMING_CONVENTION)


def _tenant_table(name: str, *columns: Column[Any]) -> Table:
    return Table(
        name,
        metadata,
        Column("tenant_id", TENANT, nullable=False),
        Column("id", ID, nullable=False),
        *columns,
        PrimaryKeyConstraint("tenant_id", "id"),
    )


# Budget is NUMERIC in the database but read as float on both dialects: SQLite
# has no decimal type, and float keeps SQLite and PostgreSQL results equal and
# JSON-ready.
projects = _tenant_table(
    "projects",
    Column("title", String(500), nullable=False),
    Column("summary", Text, nullable=True),
    Column("status", String(16), nullable=False),
    Column("budget", Numeric(14, 2, asdecimal=False), nullable=True),
    Column("owner_email", String(320), nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
)

tasks = _tenant_table(
    "tasks",
    Column("project_id", ID, nullable=True),
    Column("title", String(500), nullable=False),
    Column("status", String(16), nullable=False),
    Column("assignee", String(200), nullable=True),
    Column("created_at", UtcDateTime, nullable=False),
    Column("due_at", UtcDateTime, nullable=True),
)
Index(None, tasks.c.tenant_id, tasks.c.project_id)

docs = _tenant_table(
    "docs",
    Column("title", String(500), nullable=False),
    Column("section", String(200), nullable=True),
    Column("body", Text, nullable=False),
    Column("updated_at", UtcDateTime, nullable=False),
)

runs = _tenant_table(
    "runs",
    Column("project_id", ID, nullable=True),
    Column("question", Text, nullable=False),
    Column("status", String(16), nullable=False),
    Column("error", Text, nullable=True),
    Column("started_at", UtcDateTime, nullable=False),
    Column("finished_at", UtcDateTime, nullable=True),
)

signals = _tenant_table(
    "signals",
    Column("project_id", ID, nullable=True),
    Column("kind", String(16), nullable=False),
    Column("severity", Integer, nullable=False),
    Column("message", Text, nullable=False),
    Column("created_at", UtcDateTime, nullable=False),
)

users = _tenant_table(
    "users",
    Column("name", String(200), nullable=False),
    Column("email", String(320), nullable=True),
    Column("role", String(16), nullable=False),
)

configs = _tenant_table(
    "configs",
    Column("key", String(200), nullable=False),
    Column("value", Text, nullable=True),
    Column("secret_value", Text, nullable=True),
    Column("updated_at", UtcDateTime, nullable=False),
)

DEMO_TABLES: tuple[Table, ...] = (projects, tasks, docs, runs, signals, users, configs)
TABLES_BY_NAME: dict[str, Table] = {t.name: t for t in DEMO_TABLES}

# The text columns PostgreSQL gets trigram indexes on (entity table -> columns);
# mirrors text_search of the demo catalog.
TRIGRAM_COLUMNS: dict[str, tuple[str, ...]] = {
    "projects": ("title", "summary"),
    "tasks": ("title",),
    "docs": ("title", "body"),
    "runs": ("question", "error"),
    "signals": ("message",),
    "users": ("name",),
    "configs": ("key", "value"),
}
