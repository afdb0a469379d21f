"""`qdsl facts stats` and `qdsl facts prune --stale`: what semantic_facts holds, and
dropping facts past their `valid_until`.

Both read or write as the connecting user. On PostgreSQL semantic_facts has
forced row-level security: pass a tenant (its rows are then visible to the
table's owner too); without one, only a superuser or BYPASSRLS role sees every
tenant's rows.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from qdsl.facts.tables import semantic_facts as sf

__all__ = ["FactGroup", "fact_stats", "prune_stale"]


@dataclass(frozen=True)
class FactGroup:
    tenant_id: str
    entity_type: str
    predicate: str
    rows: int
    stale: int

    def to_dict(self) -> dict[str, Any]:
        return {
            "tenant": self.tenant_id,
            "entity_type": self.entity_type,
            "predicate": self.predicate,
            "rows": self.rows,
            "stale": self.stale,
            "stale_share": round(self.stale / self.rows, 4) if self.rows else 0.0,
        }


def _scope(conn: Connection, tenant: str | None) -> list[sa.ColumnElement[bool]]:
    if tenant is None:
        return []
    if conn.dialect.name == "postgresql":
        conn.execute(sa.select(sa.func.set_config("app.tenant_id", tenant, True)))
    return [sf.c.tenant_id == tenant]


def _stale(now: datetime) -> sa.ColumnElement[bool]:
    return sa.and_(sf.c.valid_until.is_not(None), sf.c.valid_until < now)


def fact_stats(engine: Engine, *, now: datetime, tenant: str | None = None) -> list[FactGroup]:
    """Rows and stale rows (valid_until before `now`) per tenant, entity type and predicate."""
    with engine.begin() as conn:
        where = _scope(conn, tenant)
        stale = sa.func.sum(sa.case((_stale(now), 1), else_=0))
        found = conn.execute(
            sa.select(sf.c.tenant_id, sf.c.entity_type, sf.c.predicate, sa.func.count(), stale)
            .where(*where)
            .group_by(sf.c.tenant_id, sf.c.entity_type, sf.c.predicate)
            .order_by(sf.c.tenant_id, sf.c.entity_type, sf.c.predicate)
        ).all()
    return [FactGroup(t, e, p, int(n), int(s or 0)) for t, e, p, n, s in found]


def prune_stale(
    engine: Engine, *, now: datetime, tenant: str | None = None, dry_run: bool = False
) -> int:
    """Delete (or with dry_run count) the facts whose valid_until is before `now`."""
    with engine.begin() as conn:
        where = [*_scope(conn, tenant), _stale(now)]
        if dry_run:
            return int(conn.execute(sa.select(sa.func.count()).where(*where)).scalar_one())
        return int(conn.execute(sa.delete(sf).where(*where)).rowcount or 0)
