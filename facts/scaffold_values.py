"""What `catalog init` may propose from a column's values without leaking a tenant's.

A catalog is shared by every tenant: an enum's values reach every tenant in
clarify texts and in the LLM planner's prompt. So a low-cardinality column is
drafted as an enum only when every one of its values is held by every tenant
of the table; otherwise its values stay per tenant (`link_values`, matched
against a question within the asking tenant's own values). Only the shared
values are ever read into the draft; a note about the others gives a count,
never a value.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

# At most this many distinct short values make a text column an enum candidate.
ENUM_MAX_VALUES = 12
ENUM_MAX_LENGTH = 40


@dataclass(frozen=True)
class ValueProfile:
    """A text column's values: an enum (`shared` values) or per-tenant (`unshared` > 0)."""

    shared: tuple[str, ...]
    unshared: int

    @property
    def enum(self) -> bool:
        return bool(self.shared) and self.unshared == 0


def value_profile(engine: Engine, table: str, column: str, tenant: str) -> ValueProfile | None:
    """The column's values if it is low-cardinality (few short values that repeat), else None."""
    col: sa.ColumnClause[Any] = sa.column(column)
    holder: sa.ColumnClause[Any] = sa.column(tenant)
    source = sa.table(table)
    by_value = (
        sa.select(col, sa.func.count(sa.distinct(holder)))
        .select_from(source)
        .where(col.is_not(None))
        .group_by(col)
        .limit(ENUM_MAX_VALUES + 1)
    )
    with engine.connect() as conn:
        found = [(str(v), int(n)) for v, n in conn.execute(by_value)]
        rows = conn.execute(
            sa.select(sa.func.count()).select_from(source).where(col.is_not(None))
        ).scalar_one()
        tenants = conn.execute(
            sa.select(sa.func.count(sa.distinct(holder))).select_from(source)
        ).scalar_one()
    short = all(0 < len(v) <= ENUM_MAX_LENGTH for v, _n in found)
    # Values that repeat: a column of distinct names is not an enum.
    if not found or len(found) > ENUM_MAX_VALUES or not short or int(rows) <= len(found):
        return None
    shared = tuple(sorted(v for v, n in found if n == int(tenants)))
    return ValueProfile(shared=shared, unshared=len(found) - len(shared))


def longest_value(engine: Engine, table: str, column: str) -> int:
    """The length of the column's longest value (0 when it holds none)."""
    col: sa.ColumnClause[Any] = sa.column(column)
    with engine.connect() as conn:
        n = conn.execute(sa.select(sa.func.max(sa.func.length(col))).select_from(sa.table(table)))
        return int(n.scalar_one() or 0)
