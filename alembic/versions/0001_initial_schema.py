"""qdsl's own schema: semantic_facts and text_grams; on PostgreSQL the reader role.

Only qdsl's own tables: a deployer's tables (and the demo's, which `qdsl demo
init` creates) are never touched, and the history is recorded in its own
version table (`qdsl_alembic_version`, see env.py) so it lives beside the
deployer's own Alembic history. Before release this revision also created the
demo tables; it was rewritten in place (a database migrated by that version
must be recreated).

On PostgreSQL this also installs forced row-level security on both tables (an
unset `app.tenant_id` sees nothing) and the read-only role `qdsl_reader`.

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
TENANT_TABLES = ("semantic_facts", "text_grams")


def _dt() -> sa.DateTime:
    return sa.DateTime(timezone=True)


def _create_tables() -> None:
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
