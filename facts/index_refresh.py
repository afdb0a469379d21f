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

`index_findings` reports, per entity and tenant, a text index that is missing
(error: the fallback cannot find the rows' text) or older than the rows, and a
value index that is not built yet, older than the rows, or over its bound
(warnings: it is built on first use, and an unlinked name clarifies).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.errors import DatabaseError, UsageError
from qdsl.dsl.suggest import did_you_mean, suggest
from qdsl.facts.bulk import bypasses_rls
from qdsl.facts.db import tenant_transaction
from qdsl.facts.index_state import (
    TEXT,
    VALUES,
    StateRow,
    TableStats,
    read_states,
    source_table,
    table_stats,
    text_source,
    write_state,
)
from qdsl.facts.tables import index_state, text_grams, value_index
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


def _tenants(conn: Connection, entity: str, spec: EntitySpec, since: datetime | None) -> set[str]:
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
            found = set(tenants) if tenants is not None else _listed(engine, name, spec, since)
            done.append(_refresh_entity(engine, catalog, name, sorted(found), since=since, now=now))
        except SQLAlchemyError as exc:
            raise _refresh_failed(name, spec, exc) from None
    if tenants is None and engine.dialect.name == "postgresql":
        with engine.connect() as conn:
            if not bypasses_rls(conn):
                warnings.append(
                    "tenants were listed by a user that row-level security restricts; "
                    "tenants it cannot see were not refreshed (pass --tenant)"
                )
    forget(engine)
    return RefreshReport(tuple(done), tuple(skipped), since, tuple(warnings))


def _listed(engine: Engine, name: str, spec: EntitySpec, since: datetime | None) -> set[str]:
    with engine.connect() as conn:
        return _tenants(conn, name, spec, since)


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


def _refresh_failed(entity: str, spec: EntitySpec, exc: SQLAlchemyError) -> DatabaseError:
    orig = getattr(exc, "orig", None)
    return DatabaseError(
        "index_refresh_failed",
        f"refreshing the index of {entity} (table {spec.table}) failed "
        f"({type(orig or exc).__name__})",
        hint="check the catalog against the database (`qdsl catalog check`) and that "
        "`qdsl db upgrade` has run",
        retryable=False,
        details={
            "entity": entity,
            "table": spec.table,
            "sqlstate": getattr(orig, "sqlstate", None),
        },
    )


# -- findings -------------------------------------------------------------------------


@dataclass(frozen=True)
class IndexFinding:
    """One problem of an index, as `qdsl catalog check` lists it."""

    level: Literal["error", "warning"]
    # index_missing | index_stale | index_unrecorded | values_missing | values_stale
    # | values_overflow
    code: str
    entity: str
    tenant: str
    index: Literal["text", "values"]
    field: str | None
    message: str
    fix: str

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _fix(entity: str) -> str:
    return f"qdsl index refresh --entity {entity}"


def _newer(stats: TableStats, than: datetime | None) -> bool:
    return stats.max_updated is not None and (than is None or stats.max_updated > than)


def _has_grams(conn: Connection, tenant_id: str, entity: str) -> bool:
    g = text_grams.c
    q = sa.select(sa.literal(1)).where(g.tenant_id == tenant_id, g.entity_type == entity)
    return conn.execute(q.limit(1)).first() is not None


def _text_findings(
    conn: Connection,
    entity: str,
    spec: EntitySpec,
    tenant_id: str,
    *,
    stats: TableStats,
    state: StateRow | None,
) -> list[IndexFinding]:
    def finding(level: Literal["error", "warning"], code: str, message: str) -> IndexFinding:
        return IndexFinding(level, code, entity, tenant_id, "text", None, message, _fix(entity))

    if state is None:
        if stats.row_count == 0:
            return []
        if _has_grams(conn, tenant_id, entity):
            return [
                finding(
                    "warning",
                    "index_unrecorded",
                    "the text index was not built by `qdsl index refresh`; "
                    "its freshness is unknown",
                )
            ]
        return [
            finding(
                "error",
                "index_missing",
                f"{stats.row_count} rows and no text index: the text fallback finds none of them",
            )
        ]
    if state.source != text_source(spec):
        return [finding("warning", "index_stale", "the catalog's text_search changed since")]
    if stats.row_count != state.row_count or _newer(stats, state.max_updated):
        return [
            finding(
                "warning",
                "index_stale",
                f"the rows changed since the index was built at {state.refreshed_at.isoformat()}",
            )
        ]
    return []


def _value_findings(
    catalog: Catalog,
    entity: str,
    tenant_id: str,
    stats: TableStats,
    states: dict[tuple[str, str], StateRow],
) -> list[IndexFinding]:
    out = []
    for lf in link_fields(catalog, entity):
        state = states.get((entity, lf.field))
        if stats.row_count == 0 and state is None:
            continue
        code = message = ""
        if state is None or state.source != lf.source:
            code, message = "values_missing", "not built; the first question builds it"
        elif _newer(stats, state.max_updated or state.refreshed_at):
            code, message = "values_stale", "the rows changed since the value index was built"
        elif state.status == "overflow" and lf.explicit:
            code = "values_overflow"
            message = f"more than {lf.bound} distinct values; its values are not linked"
        if code:
            out.append(
                IndexFinding(
                    "warning", code, entity, tenant_id, "values", lf.field, message, _fix(entity)
                )
            )
    return out


def index_findings(
    engine: Engine, catalog: Catalog, *, tenants: Sequence[str] | None = None
) -> tuple[IndexFinding, ...]:
    """Every index that is missing or older than the rows, per entity and tenant.

    Errors: a text index missing for a tenant that has rows. Warnings: a text
    index older than the rows (or built outside `qdsl index refresh`), a value
    index not built yet, older than the rows, or over its bound. Tenants are
    listed as `refresh_index` lists them (pass them on PostgreSQL when row-level
    security restricts the user).
    """
    out: list[IndexFinding] = []
    for name, spec in catalog.entities.items():
        if not spec.text_search and not link_fields(catalog, name):
            continue
        try:
            found = set(tenants) if tenants is not None else _listed(engine, name, spec, None)
            for tenant_id in sorted(found):
                with tenant_transaction(engine, tenant_id, read_only=True) as conn:
                    stats = table_stats(conn, spec, tenant_id)
                    states = {
                        (s.kind, s.entity_type, s.field): s for s in read_states(conn, tenant_id)
                    }
                    if spec.text_search:
                        state = states.get((TEXT, name, ""))
                        out.extend(
                            _text_findings(conn, name, spec, tenant_id, stats=stats, state=state)
                        )
                    values = {(e, f): s for (k, e, f), s in states.items() if k == VALUES}
                    out.extend(_value_findings(catalog, name, tenant_id, stats, values))
        except SQLAlchemyError as exc:
            raise _refresh_failed(name, spec, exc) from None
    return tuple(out)


__all__ = [
    "EntityRefresh",
    "IndexFinding",
    "RefreshReport",
    "index_findings",
    "refresh_index",
]
