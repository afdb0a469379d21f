"""`qdsl index refresh` and the index findings `qdsl catalog check` reports.

`refresh_index` builds or refreshes, from the deployer's own tables (named by
the catalog), the text index (`text_grams`, over each entity's `text_search`
columns) that the executor's fallback reads, and the per-tenant value index
(`value_index`) the question reader links names against: for every entity, or
one; for every row, or only rows changed since a time (entities whose catalog
names an `updated_at` column). It is idempotent: a second run writes no index
row (only the `index_state` rows' refresh times).

Tenants: each tenant is refreshed in its own transaction with `app.tenant_id`
set (so forced row-level security admits the writes), and every read names
the tenant in SQL. Which tenants exist is read from the entity's table (and
from qdsl's index tables, so a tenant whose rows are all gone loses its index
on a full refresh). On PostgreSQL a user that row-level security restricts
sees no tenant there: pass the tenants explicitly (`--tenant`), or refresh as
a user that bypasses RLS.

`qdsl.facts.index_findings` reports an index missing or older than the rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any

from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import UsageError
from qdsl.dsl.suggest import did_you_mean, suggest
from qdsl.facts.bulk import bypasses_rls
from qdsl.facts.db import tenant_transaction
from qdsl.facts.index_findings import IndexFinding, index_findings
from qdsl.facts.index_state import (
    TEXT,
    StateRow,
    db_fault,
    listed_tenants,
    table_stats,
    text_source,
    write_state,
)
from qdsl.facts.textindex import TextCounts, refresh_entity_grams
from qdsl.facts.value_index import forget, link_fields, persist_field, scan_field


@dataclass(frozen=True)
class EntityRefresh:
    """What one refresh did to one entity's indexes, summed over its tenants."""

    entity: str
    tenants: int = 0
    rows: int = 0
    entities_changed: int = 0
    grams_added: int = 0
    grams_removed: int = 0
    values_added: int = 0
    values_removed: int = 0
    # "tenant/field" of linkable fields over their bound (not linked)
    overflow: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return any((self.grams_added, self.grams_removed, self.values_added, self.values_removed))


@dataclass(frozen=True)
class RefreshReport:
    entities: tuple[EntityRefresh, ...]
    # (entity, why it was not refreshed)
    skipped: tuple[tuple[str, str], ...] = ()
    since: datetime | None = None
    warnings: tuple[str, ...] = ()

    @property
    def changed(self) -> bool:
        return any(e.changed for e in self.entities)

    def to_dict(self) -> dict[str, Any]:
        return {
            "entities": [{**asdict(e), "overflow": list(e.overflow)} for e in self.entities],
            "skipped": [{"entity": e, "reason": r} for e, r in self.skipped],
            "since": self.since.isoformat() if self.since else None,
            "changed": self.changed,
        }


def _targets(
    catalog: Catalog, entity: str | None, since: datetime | None
) -> tuple[list[str], list[tuple[str, str]]]:
    if entity is not None and entity not in catalog.entities:
        raise UsageError(
            "unknown_entity",
            f"the catalog has no entity `{entity}`",
            hint=did_you_mean(
                suggest(entity, list(catalog.entities)), catalog.entities, "entities"
            ),
            details={"entity": entity},
        )
    names = [entity] if entity is not None else list(catalog.entities)
    chosen, skipped = [], []
    for name in names:
        spec = catalog.entities[name]
        if not spec.text_search and not link_fields(catalog, name):
            skipped.append((name, "no text_search columns and no linkable fields"))
        elif since is not None and spec.updated_at is None:
            skipped.append((name, "the catalog names no updated_at column for --since"))
        else:
            chosen.append(name)
    if entity is not None and since is not None and skipped:
        raise UsageError(
            "no_update_column",
            f"entity `{entity}` has no updated_at column, so --since cannot find changed rows",
            hint="name its update-time column as `updated_at` in the catalog, or drop --since",
            details={"entity": entity},
        )
    return chosen, skipped


def _refresh_tenant(
    conn: Connection,
    catalog: Catalog,
    entity: str,
    tenant_id: str,
    *,
    since: datetime | None,
    now: datetime,
) -> tuple[TextCounts, int, int, list[str]]:
    spec = catalog.entities[entity]
    # Before reading any row: the state then claims no more than was indexed.
    stats = table_stats(conn, spec, tenant_id)
    counts = TextCounts()
    if spec.text_search:
        counts = refresh_entity_grams(conn, tenant_id, entity, spec, since=since)
        state = StateRow(
            TEXT, entity, "", text_source(spec), "ok", stats.row_count, stats.max_updated, now
        )
        write_state(conn, tenant_id, state)
    added = removed = 0
    overflow = []
    for lf in link_fields(catalog, entity):
        values = scan_field(conn, tenant_id, lf)
        if values is None and lf.explicit:
            overflow.append(f"{tenant_id}/{lf.field}")
        done = persist_field(conn, tenant_id, lf, values, now=now, max_updated=stats.max_updated)
        added, removed = added + done.added, removed + done.removed
    return counts, added, removed, overflow


def refresh_index(
    engine: Engine,
    catalog: Catalog,
    entity: str | None = None,
    since: datetime | None = None,
    *,
    tenants: Sequence[str] | None = None,
) -> RefreshReport:
    """Build or refresh the text and value indexes from the deployer's tables (module doc)."""
    if since is not None and since.tzinfo is None:
        since = since.replace(tzinfo=UTC)
    chosen, skipped = _targets(catalog, entity, since)
    now = datetime.now(UTC)
    warnings: list[str] = []
    done: list[EntityRefresh] = []
    for name in chosen:
        spec = catalog.entities[name]
        try:
            found = (
                set(tenants) if tenants is not None else listed_tenants(engine, name, spec, since)
            )
            done.append(_refresh_entity(engine, catalog, name, sorted(found), since=since, now=now))
        except SQLAlchemyError as exc:
            raise db_fault(engine, exc, {spec.table}) from None
    if tenants is None and engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            if not bypasses_rls(conn):
                warnings.append(
                    "tenants were listed by a user that row-level security restricts; "
                    "tenants it cannot see were not refreshed (pass --tenant)"
                )
    forget(engine)
    return RefreshReport(tuple(done), tuple(skipped), since, tuple(warnings))


def _refresh_entity(
    engine: Engine,
    catalog: Catalog,
    name: str,
    tenants: Iterable[str],
    *,
    since: datetime | None,
    now: datetime,
) -> EntityRefresh:
    total, added, removed, overflow, n = TextCounts(), 0, 0, [], 0
    for tenant_id in tenants:
        with tenant_transaction(engine, tenant_id) as conn:
            counts, a, r, o = _refresh_tenant(conn, catalog, name, tenant_id, since=since, now=now)
        total, added, removed, n = total + counts, added + a, removed + r, n + 1
        overflow.extend(o)
    return EntityRefresh(
        entity=name,
        tenants=n,
        rows=total.rows,
        entities_changed=total.changed,
        grams_added=total.grams_added,
        grams_removed=total.grams_removed,
        values_added=added,
        values_removed=removed,
        overflow=tuple(overflow),
    )


# index_findings lives beside its own helpers; it is public here too, beside refresh_index.
__all__ = [
    "EntityRefresh",
    "IndexFinding",
    "RefreshReport",
    "index_findings",
    "refresh_index",
]
