"""The per-tenant value index and the index state (`qdsl index refresh`).

`value_index` holds the distinct values of the catalog's linkable text fields
per tenant; `index_state` records, per tenant, what the last refresh of the
text index and of the value index saw. Both are tenant tables: on PostgreSQL
they get the same forced row-level security, policy and SELECT grant to
`qdsl_reader` as the tables of 0001, because the value index is read in the
executor's tenant-bound transaction as that role.

A frozen copy of the schema at this revision (it does not import facts.tables).

Revision ID: 0002
Revises: 0001
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

READER_ROLE = "qdsl_reader"
TENANT_EXPR = "tenant_id = NULLIF(current_setting('app.tenant_id', true), '')"
TABLES = ("value_index", "index_state")


def _create_tables() -> None:
    op.create_table(
        "value_index",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("entity_type", sa.String(64), nullable=False),
        sa.Column("field", sa.String(128), nullable=False),
        sa.Column("value", sa.String(256), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "entity_type", "field", "value", name="pk_value_index"
        ),
        sqlite_with_rowid=False,
    )
    op.create_table(
        "index_state",
        sa.Column("tenant_id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("entity_type", sa.String(64), nullable=False),
        sa.Column("field", sa.String(128), nullable=False),
        sa.Column("source", sa.String(64), nullable=False),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("max_updated", sa.DateTime(timezone=True), nullable=True),
        sa.Column("refreshed_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "tenant_id", "kind", "entity_type", "field", name="pk_index_state"
        ),
    )


def _postgresql_security() -> None:
    # The role exists: 0001 created it (and never drops it).
    for table in TABLES:
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
    for table in reversed(TABLES):
        if is_pg:
            op.execute(f'DROP POLICY IF EXISTS tenant_isolation ON "{table}"')
            op.execute(f'REVOKE ALL ON "{table}" FROM {READER_ROLE}')
        op.drop_table(table)
