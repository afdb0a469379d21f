"""The shared ref store (PostgreSQL only): one table, `qdsl_refs`.

Several server processes serving one deployment keep their large results here
(`QDSL_REF_STORE=postgresql`, docs/refs.md), so a ref made by one is readable
by the next. SQLite deployments live on one host and keep the file store: this
revision creates nothing there.

Row-level security, forced (the table's owner is held to it too), with three
policies:

* `tenant_isolation`: a session sees the refs of its `app.tenant_id` and the
  shared ones (tenant NULL, made by parse, compile, catalog), and may insert
  only a ref of its own tenant (or a shared one when it has none);
* `ref_collector`: a session that declared `app.ref_scope = 'collect'` (the
  store's collector, under its advisory lock) sees and deletes every ref, to
  apply the store-wide TTL and caps;
* `reader_tenant` (RESTRICTIVE, for `qdsl_reader`): the reader role sees its
  tenant's refs and the shared ones whatever else holds, so it can never take
  the collector's scope. The store reads refs as that role, and so even a
  query without its tenant predicate could not return another tenant's ref.

A frozen copy of the schema at this revision (it does not import facts.tables).

Revision ID: 0003
Revises: 0002
Create Date: 2026-12-01
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

READER_ROLE = "qdsl_reader"
TABLE = "qdsl_refs"
CALLER_TENANT = "NULLIF(current_setting('app.tenant_id', true), '')"
VISIBLE = f"(tenant_id IS NULL OR tenant_id = {CALLER_TENANT})"
OWN = f"(tenant_id IS NOT DISTINCT FROM {CALLER_TENANT})"
COLLECTING = "(current_setting('app.ref_scope', true) = 'collect')"


def _create_table() -> None:
    op.create_table(
        TABLE,
        sa.Column("ref_id", sa.String(64), nullable=False),
        sa.Column("tenant_id", sa.Text(), nullable=True),
        sa.Column("operation", sa.Text(), nullable=False),
        sa.Column("created_ms", sa.BigInteger(), nullable=False),
        sa.Column("expires_ms", sa.BigInteger(), nullable=False),
        sa.Column("bytes", sa.BigInteger(), nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("seal", sa.String(64), nullable=False),
        sa.Column("payload", sa.LargeBinary(), nullable=False),
        sa.PrimaryKeyConstraint("ref_id", name="pk_qdsl_refs"),
    )
    op.create_index("ix_qdsl_refs_created_ms_ref_id", TABLE, ["created_ms", "ref_id"])
    op.create_index("ix_qdsl_refs_expires_ms", TABLE, ["expires_ms"])


def _security() -> None:
    # The role exists: 0001 created it (and never drops it).
    op.execute(f'GRANT SELECT ON "{TABLE}" TO {READER_ROLE}')
    op.execute(f'ALTER TABLE "{TABLE}" ENABLE ROW LEVEL SECURITY')
    op.execute(f'ALTER TABLE "{TABLE}" FORCE ROW LEVEL SECURITY')
    op.execute(f'CREATE POLICY tenant_isolation ON "{TABLE}" USING {VISIBLE} WITH CHECK {OWN}')
    op.execute(
        f'CREATE POLICY ref_collector ON "{TABLE}" USING {COLLECTING} WITH CHECK (false)'
    )
    op.execute(
        f'CREATE POLICY reader_tenant ON "{TABLE}" AS RESTRICTIVE '
        f"TO {READER_ROLE} USING {VISIBLE}"
    )


def upgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    _create_table()
    _security()


def downgrade() -> None:
    if op.get_bind().dialect.name != "postgresql":
        return
    for policy in ("reader_tenant", "ref_collector", "tenant_isolation"):
        op.execute(f'DROP POLICY IF EXISTS {policy} ON "{TABLE}"')
    op.execute(f'REVOKE ALL ON "{TABLE}" FROM {READER_ROLE}')
    op.drop_table(TABLE)
