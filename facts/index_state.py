"""What qdsl's indexes were built from, and the deployer's tables they read.

The text index (`text_grams`) and the value index (`value_index`) are derived
from the deployer's own tables, named only by the catalog. This module holds
the two things both indexes share:

* `source_table(spec)`: a lightweight table clause of one entity's table with
  the columns the indexes read (id, tenant, text_search, linkable fields and
  the `updated_at` column), every identifier from the catalog;
* the `index_state` rows: per tenant and (kind, entity, field), a digest of the
  catalog names the index was built from, the table's size and newest update
  time as seen just before the build, and when it was built;
* which tenants an entity's indexes concern (`listed_tenants`), and the error
  a failed refresh or check raises.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.sql.expression import TableClause

from qdsl.dsl.catalog import EntitySpec
from qdsl.dsl.errors import DatabaseError
from qdsl.facts.tables import UtcDateTime, index_state, text_grams, value_index

TEXT = "text"
VALUES = "values"


def source_table(spec: EntitySpec) -> TableClause:
    """The entity's table with the columns the indexes read (names from the catalog)."""
    cols: dict[str, sa.ColumnClause[Any]] = {
        # The id keeps its own type: pagination compares it with values it returned.
        spec.id: sa.column(spec.id),
        spec.tenant: sa.column(spec.tenant, sa.Text()),
        # the label links too (facts.value_index), declared as a field or not
        spec.label: sa.column(spec.label, sa.Text()),
    }
    for name in spec.text_search:
        cols.setdefault(name, sa.column(name, sa.Text()))
    for f in spec.fields.values():
        if f.column is not None:
            cols.setdefault(f.column, sa.column(f.column, sa.Text()))
    if spec.updated_at is not None:
        cols[spec.updated_at] = sa.column(spec.updated_at, UtcDateTime())
    return sa.table(spec.table, *cols.values())


def digest(*parts: object) -> str:
    """A short stable digest of what an index was built from."""
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


def text_source(spec: EntitySpec) -> str:
    return digest(TEXT, spec.table, spec.id, spec.tenant, spec.text_search)


@dataclass(frozen=True)
class TableStats:
    """One tenant's rows of an entity table: how many, and the newest update time."""

    row_count: int
    max_updated: datetime | None


def table_stats(conn: Connection, spec: EntitySpec, tenant_id: str) -> TableStats:
    t = source_table(spec)
    newest: Any = sa.func.max(t.c[spec.updated_at]) if spec.updated_at else sa.null()
    row = conn.execute(
        sa.select(sa.func.count(), newest).select_from(t).where(t.c[spec.tenant] == tenant_id)
    ).one()
    return TableStats(int(row[0]), _as_utc(row[1]))


def _as_utc(value: Any) -> datetime | None:
    # max() over a column loses its type on SQLite (a string comes back).
    if value is None:
        return None
    found = datetime.fromisoformat(value) if isinstance(value, str) else value
    if not isinstance(found, datetime):
        return None
    return found.replace(tzinfo=UTC) if found.tzinfo is None else found.astimezone(UTC)


@dataclass(frozen=True)
class StateRow:
    kind: str
    entity_type: str
    field: str
    source: str
    status: str
    row_count: int
    max_updated: datetime | None
    refreshed_at: datetime


def read_states(conn: Connection, tenant_id: str, kind: str | None = None) -> list[StateRow]:
    s = index_state.c
    q = sa.select(index_state).where(s.tenant_id == tenant_id)
    if kind is not None:
        q = q.where(s.kind == kind)
    return [
        StateRow(
            kind=r.kind,
            entity_type=r.entity_type,
            field=r.field,
            source=r.source,
            status=r.status,
            row_count=int(r.row_count),
            max_updated=r.max_updated,
            refreshed_at=r.refreshed_at,
        )
        for r in conn.execute(q.order_by(s.kind, s.entity_type, s.field))
    ]


def write_state(conn: Connection, tenant_id: str, row: StateRow) -> None:
    """Replace one state row (delete + insert: the same on both dialects)."""
    s = index_state.c
    conn.execute(
        index_state.delete().where(
            s.tenant_id == tenant_id,
            s.kind == row.kind,
            s.entity_type == row.entity_type,
            s.field == row.field,
        )
    )
    conn.execute(
        index_state.insert().values(
            tenant_id=tenant_id,
            kind=row.kind,
            entity_type=row.entity_type,
            field=row.field,
            source=row.source,
            status=row.status,
            row_count=row.row_count,
            max_updated=row.max_updated,
            refreshed_at=row.refreshed_at,
        )
    )


def _tenants_in(
    conn: Connection, entity: str, spec: EntitySpec, since: datetime | None
) -> set[str]:
    t = source_table(spec)
    q = sa.select(t.c[spec.tenant]).distinct()
    if since is not None and spec.updated_at is not None:
        q = q.where(t.c[spec.updated_at] >= since)
    found = {str(x) for x in conn.execute(q).scalars() if x is not None}
    if since is None:
        for table in (text_grams, value_index, index_state):
            found.update(
                conn.execute(
                    sa.select(table.c.tenant_id).distinct().where(table.c.entity_type == entity)
                ).scalars()
            )
    return found


def listed_tenants(engine: Engine, name: str, spec: EntitySpec, since: datetime | None) -> set[str]:
    """The tenants with rows of the entity (changed since `since`) or with its indexes."""
    with engine.connect() as conn:
        return _tenants_in(conn, name, spec, since)


def db_fault(engine: Engine, exc: SQLAlchemyError, tables: set[str]) -> DatabaseError:
    """The typed error naming the cause of a failed index read or write (facts.dberrors)."""
    from qdsl.facts.dberrors import classify
    from qdsl.facts.engines import display_url

    where = display_url(engine.url.render_as_string(hide_password=False))
    return classify(exc, where=where, catalog_tables=tables)
