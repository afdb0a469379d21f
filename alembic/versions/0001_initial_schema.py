"""Initial schema: semantic_facts, the demo tables, text_grams; PostgreSQL security.

On PostgreSQL this also installs pg_trgm with trigram indexes on the fallback
text columns, forced row-level security on every tenant table (an unset
`app.tenant_id` sees nothing), and the read-only role `qdsl_reader`.

`qdsl_reader` is NOLOGIN: the executor connects as the application user and
runs `SET LOCAL ROLE qdsl_reader` inside its read-only transaction, so the
role needs no password. Roles are cluster-wide, so creating it tolerates an
existing role (several test databases share one server), and it is never
dropped on downgrade.

This file is a frozen copy of the schema at this revision; it deliberately
does not import facts.tables (later revisions must not change what 0001 did).

Revision ID: 0001
Revises:
Create Date: 2026-11-29
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

READER_ROLE = "qdsl_reader"
TENANT_EXPR = "tenant_id = NULLIF(current_setting('app.tenant_id', true), '')"
DEMO_TABLES = ("projects", "tasks", "docs", "runs", "signals", "users", "configs")
TENANT_TABLES = (*DEMO_TABLES, "semantic_facts", "text_grams")
TRIGRAM_COLUMNS = {
    "projects": ("title", "summary"),
    "tasks": ("title",),
    "docs": ("title", "body"),
    "runs": ("question", "error"),
    "signals": ("message",),
    "users": ("name",),
    "configs": ("key", "value"),
}


def _dt() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _tenant_table(name: str, *columns: sa.Column) -> None:  # type: ignore[type-arg]
    op.create_table(
        name,
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("id", sa.String(64), nullable=False),
        *columns,
        sa.PrimaryKeyConstraint("tenant_id", "id", name=f"pk_{name}"),
    )


def _create_tables() -> None:
    _tenant_table(
        "projects",
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("summary", sa.Text(), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("budget", sa.Numeric(14, 2), nullable=True),
        sa.Column("owner_email", sa.String(320), nullable=True),
        sa.Column("created_at", _dt(), nullable=False),
    )
    _tenant_table(
        "tasks",
        sa.Column("project_id", sa.String(64), nullable=True),
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("assignee", sa.String(200), nullable=True),
        sa.Column("created_at", _dt(), nullable=False),
        sa.Column("due_at", _dt(), nullable=True),
    )
    op.create_index("ix_tasks_tenant_id_project_id", "tasks", ["tenant_id", "project_id"])
    _tenant_table(
        "docs",
        sa.Column("title", sa.String(500), nullable=False),
        sa.Column("section", sa.String(200), nullable=True),
        sa.Column("body", sa.Text(), nullable=False),
        sa.Column("updated_at", _dt(), nullable=False),
    )
    _tenant_table(
        "runs",
        sa.Column("project_id", sa.String(64), nullable=True),
        sa.Column("question", sa.Text(), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("started_at", _dt(), nullable=False),
        sa.Column("finished_at", _dt(), nullable=True),
    )
    _tenant_table(
        "signals",
        sa.Column("project_id", sa.String(64), nullable=True),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("severity", sa.Integer(), nullable=False),
        sa.Column("message", sa.Text(), nullable=False),
        sa.Column("created_at", _dt(), nullable=False),
    )
    _tenant_table(
        "users",
        sa.Column("name", sa.String(200), nullable=False),
        sa.Column("email", sa.String(320), nullable=True),
        sa.Column("role", sa.String(16), nullable=False),
    )
    _tenant_table(
        "configs",
        sa.Column("key", sa.String(200), nullable=False),
        sa.Column("value", sa.Text(), nullable=True),
        sa.Column("secret_value", sa.Text(), nullable=True),
        sa.Column("updated_at", _dt(), nullable=False),
    )
    op.create_table(
        "semantic_facts",
        sa.Column(
            "id",
            sa.BigInteger().with_variant(sa.Integer(), "sqlite"),
            primary_key=True,
            autoincrement=True,
        ),
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("entity_type", sa.String(64), nullable=False),
        sa.Column("entity_id", sa.String(64), nullable=False),
        sa.Column("predicate", sa.String(128), nullable=False),
        sa.Column("value_text", sa.Text(), nullable=False),
        sa.Column("value_norm", sa.Text(), nullable=False),
        sa.Column("value_num", sa.Float(), nullable=True),
        sa.Column("source_type", sa.String(32), nullable=False),
        sa.Column("source_ref", sa.String(500), nullable=True),
        sa.Column("confidence", sa.Float(), nullable=True),
        sa.Column("observed_at", _dt(), nullable=False),
        sa.Column("valid_until", _dt(), nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_semantic_facts"),
    )
    op.create_index(
        "ix_semantic_facts_lookup",
        "semantic_facts",
        ["tenant_id", "entity_type", "predicate", "value_norm"],
    )
    op.create_index(
        "ix_semantic_facts_entity", "semantic_facts", ["tenant_id", "entity_type", "entity_id"]
    )
    op.create_table(
        "text_grams",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("entity_type", sa.String(64), nullable=False),
        sa.Column("gram", sa.String(16), nullable=False),
        sa.Column("entity_id", sa.String(64), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "entity_type", "gram", "entity_id", name="pk_text_grams"
        ),
        sqlite_with_rowid=False,
    )
    op.create_index(
        "ix_text_grams_tenant_id_entity_type_entity_id",
        "text_grams",
        ["tenant_id", "entity_type", "entity_id"],
    )


def _postgresql_security() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS pg_trgm")
    for table, columns in TRIGRAM_COLUMNS.items():
        for column in columns:
            op.execute(
                f'CREATE INDEX "ix_{table}_{column}_trgm" ON "{table}" '
                f'USING gin ("{column}" gin_trgm_ops)'
            )
    # Roles are cluster-wide and test databases are created concurrently:
    # another session may create the role between the check and the CREATE.
    op.execute(
        f"""
        DO $$
        BEGIN
          IF NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = '{READER_ROLE}') THEN
            CREATE ROLE {READER_ROLE} NOLOGIN;
          END IF;
        EXCEPTION WHEN duplicate_object OR unique_violation THEN NULL;
        END
        $$
        """
    )
    # Lets a non-superuser application user `SET ROLE qdsl_reader`; superusers
    # need no membership, and a user without the right to grant gets an error
    # here that must not abort the migration.
    op.execute(
        f"""
        DO $$
        BEGIN
          EXECUTE format('GRANT {READER_ROLE} TO %I', current_user);
        EXCEPTION WHEN insufficient_privilege OR invalid_grant_operation THEN NULL;
        END
        $$
        """
    )
    op.execute(
        f"""
        DO $$
        BEGIN
          EXECUTE format('GRANT USAGE ON SCHEMA %I TO {READER_ROLE}', current_schema());
        END
        $$
        """
    )
    for table in TENANT_TABLES:
        op.execute(f'GRANT SELECT ON "{table}" TO {READER_ROLE}')
        op.execute(f'ALTER TABLE "{table}" ENABLE ROW LEVEL SECURITY')
        op.execute(f'ALTER TABLE "{table}" FORCE ROW LEVEL SECURITY')
        op.execute(
            f'CREATE POLICY tenant_isolation ON "{table}" '
            f"USING ({TENANT_EXPR}) WITH CHECK ({TENANT_EXPR})"
        )


def upgrade() -> None:
    _create_tables()
    if op.get_bind().dialect.name == "postgresql":
        _postgresql_security()


def downgrade() -> None:
    is_pg = op.get_bind().dialect.name == "postgresql"
    for table in reversed(TENANT_TABLES):
        if is_pg:
            op.execute(f'DROP POLICY IF EXISTS tenant_isolation ON "{table}"')
            op.execute(f'REVOKE ALL ON "{table}" FROM {READER_ROLE}')
        op.drop_table(table)
