"""Whether the data rules could see the rows at all.

Under forced row-level security a user that is neither superuser nor BYPASSRLS
sees no rows without a tenant, so enum, id and fact rules would pass vacuously.
"""

from __future__ import annotations

import sqlalchemy as sa

from qdsl.facts.check.findings import CheckContext, Finding, Level


def visibility(ctx: CheckContext) -> list[Finding]:
    if ctx.dialect != "postgresql":
        return []
    with ctx.engine.connect() as conn:
        sees_all = conn.execute(
            sa.text("SELECT rolsuper OR rolbypassrls FROM pg_roles WHERE rolname = current_user")
        ).scalar()
    if sees_all:
        return []
    return [
        Finding(
            "visibility",
            Level.WARNING,
            "the connecting user is subject to row-level security: the data rules "
            "(enum values, unique ids, facts) saw only rows visible without a tenant",
            fix="run `qdsl catalog check` as a role with BYPASSRLS (e.g. the migration role)",
        )
    ]
