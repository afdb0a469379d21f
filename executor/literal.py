"""SQL with its values inlined, for a person to read or paste into psql / sqlite3.

Display only (`qdsl compile --literal`): the executor always binds values as
parameters. Values are rendered by the dialect's own literal processors
(quoted and escaped by SQLAlchemy), never by string formatting here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Plan
from qdsl.executor import names as N
from qdsl.executor.compile import dialect_for, prepare

# Bound at run time from an earlier statement's rows; shown empty.
_RUNTIME = frozenset({N.IDS})


def literal_statements(
    plan: Plan,
    catalog: Catalog,
    dialect: str,
    *,
    tenant_id: str | None,
    now: datetime | None = None,
) -> list[tuple[str, str]]:
    """(role, SQL with literal values) of every statement the plan's template may run."""
    prep = prepare(plan, catalog, dialect, tenant_id, now=now)
    values: dict[str, Any] = dict(prep.params)
    if prep.fallback_runs:
        values.update(prep.fallback_runs[0].params)
        values[N.FALLBACK_CAP] = prep.fallback_cap
    engine_dialect = dialect_for(dialect)
    out = []
    for role, stmt in prep.statements.named():
        names = stmt.compile(dialect=engine_dialect).binds
        bound = stmt.params({n: values.get(n, [] if n in _RUNTIME else None) for n in names})
        text = bound.compile(dialect=engine_dialect, compile_kwargs={"literal_binds": True})
        out.append((role, str(text)))
    return out
