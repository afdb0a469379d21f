"""Index findings: a text or value index missing or older than the rows (`qdsl catalog check`).

Per entity and tenant, `index_findings` compares the tables now with what the
last `qdsl index refresh` recorded in `index_state`:

* error `index_missing`: a tenant has rows and no text index, so the text
  fallback finds none of them;
* warning `index_stale`: rows were added, removed or updated (the catalog's
  `updated_at`) since the text index was built, or its text_search changed;
* warning `index_unrecorded`: a text index not built by `index refresh` (the
  demo's seed), whose freshness is unknown;
* warnings `values_missing` (built on the first question), `values_stale`,
  `values_overflow` (a `link_values` field over its bound, not linked).

Each finding names its fix. Tenants are listed as `refresh_index` lists them.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import asdict, dataclass
from datetime import datetime
from typing import Any, Literal

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.facts.db import tenant_transaction
from qdsl.facts.index_state import (
    TEXT,
    VALUES,
    StateRow,
    TableStats,
    db_fault,
    listed_tenants,
    read_states,
    table_stats,
    text_source,
)
from qdsl.facts.tables import text_grams
from qdsl.facts.value_index import link_fields


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
            found = (
                set(tenants) if tenants is not None else listed_tenants(engine, name, spec, None)
            )
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
            raise db_fault(engine, exc, {spec.table}) from None
    return tuple(out)


__all__ = ["IndexFinding", "index_findings"]
