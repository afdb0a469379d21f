"""Per-tenant value linking: the database-backed `ValueSource` (issue 8, item 4).

Names no catalog can list (a carrier, a city, a person, a customer) are
matched against the distinct values of the catalog's text fields, **of the
asking tenant only**: if a value stored only in another tenant could change a
plan, planning itself would leak that tenant's data. So every read here is
bound to one tenant in SQL (and, on PostgreSQL, runs in a read-only
transaction as `qdsl_reader` with `app.tenant_id` set, under the same
row-level security as the executor); nothing is read for several tenants and
filtered afterwards.

Which fields link (`link_fields`): each entity's label (the name its objects
are asked by), and column fields of type text that are not sensitive, and either

* marked `link_values = true`: up to MAX_VALUES_PER_FIELD distinct values, or
* unmarked but filterable by equality, when the tenant's field has at most
  AUTO_LINK_MAX_VALUES distinct values (a small vocabulary such as a
  carrier or a city; free text has many values and does not link).

Values longer than MAX_VALUE_CHARS characters are not linked (nobody types
them into a question). A field over its bound links nothing for that tenant
(state `overflow`): linking only some of its values could hide that a name is
ambiguous between two fields, which must clarify.

Where values come from, cheapest first:

1. an in-process LRU (CACHE_SIZE entries, each for CACHE_TTL_S seconds),
   keyed by (engine URL, catalog content key, tenant). A `DatabaseValues`
   holds no values itself: the pipeline makes one per request (cheaply: link
   fields are found once per catalog content, the URL rendered once), and
   none keeps an engine alive past its request;
2. the `value_index` table, written by `qdsl index refresh` or by a first
   use, valid while its `index_state` row has the field's current source
   digest (catalog names and bounds) and is younger than STATE_MAX_AGE;
3. a scan of the deployer's table (`SELECT DISTINCT column ... WHERE tenant =
   :t LIMIT bound + 1` per field), persisted to `value_index` so that a
   one-process-per-call CLI does not scan again. A database that refuses the
   write (an older schema, a read-only user) still gets correct values; they
   are just not kept.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldType
from qdsl.dsl.ir import Operator
from qdsl.dsl.linking import EMPTY_VALUES, LinkedValue, TenantValues, ValueSource
from qdsl.dsl.settings.config import getenv
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import READER_ROLE, tenant_transaction
from qdsl.facts.index_state import (
    VALUES,
    StateRow,
    db_fault,
    digest,
    read_states,
    source_table,
    write_state,
)
from qdsl.facts.tables import value_index
from qdsl.facts.value_cache import CACHE, CACHE_SIZE, engine_key, forget

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

MAX_VALUES_PER_FIELD = 2000
AUTO_LINK_MAX_VALUES = 50
MAX_VALUE_CHARS = 64
CACHE_TTL_S = 60.0
STATE_MAX_AGE = timedelta(hours=1)
_EQUALITY = frozenset({Operator.EQUALS, Operator.IN, Operator.EQUALS_OR_ALIAS})
_WRITE_CHUNK = 500


@dataclass(frozen=True)
class LinkField:
    """One field whose values link: `entity.field`, stored in `column` of the entity's table."""

    entity: str
    field: str
    column: str
    spec: EntitySpec
    explicit: bool  # marked link_values = true

    @property
    def bound(self) -> int:
        return MAX_VALUES_PER_FIELD if self.explicit else AUTO_LINK_MAX_VALUES

    @property
    def source(self) -> str:
        """What the field's index is built from; a change rebuilds it."""
        s = self.spec
        return digest(VALUES, s.table, s.tenant, self.column, self.bound, MAX_VALUE_CHARS)


def link_fields(catalog: Catalog, entity: str | None = None) -> tuple[LinkField, ...]:
    """The catalog's fields whose per-tenant values may link (see the module doc)."""
    out: list[LinkField] = []
    for ename, spec in catalog.entities.items():
        if entity is not None and ename != entity:
            continue
        for fname, f in spec.fields.items():
            if f.sensitive or f.column is None or f.type is not FieldType.TEXT:
                continue
            if f.link_values or _EQUALITY & set(f.operators):
                out.append(LinkField(ename, fname, f.column, spec, f.link_values))
        label = _label_field(ename, spec)
        if label is not None and all(lf.field != label.field for lf in out if lf.entity == ename):
            out.append(label)
    return tuple(out)


def _label_field(entity: str, spec: EntitySpec) -> LinkField | None:
    """The entity's label, linked like a `link_values` field: a question that names
    an object by its label ("Alice Wang's salary") finds it the way a name the
    catalog cannot list is found. A label that is a declared field links only
    when that field may (text, a column, not sensitive)."""
    declared = spec.fields.get(spec.label)
    if declared is None:
        return LinkField(entity, spec.label, spec.label, spec, True)
    if declared.sensitive or declared.column is None or declared.type is not FieldType.TEXT:
        return None
    return LinkField(entity, spec.label, declared.column, spec, True)


_LINK_FIELDS: dict[str, tuple[LinkField, ...]] = {}


def _link_fields_of(catalog: Catalog) -> tuple[LinkField, ...]:
    """`link_fields(catalog)`, found once per catalog content: a value source is made
    per request, and holds no values itself (they live in the TTL cache)."""
    key = catalog.content_key
    hit = _LINK_FIELDS.get(key)
    if hit is None:
        hit = link_fields(catalog)
        with _LINK_FIELDS_LOCK:
            _LINK_FIELDS[key] = hit
            while len(_LINK_FIELDS) > CACHE_SIZE:
                _LINK_FIELDS.pop(next(iter(_LINK_FIELDS)))
    return hit


_LINK_FIELDS_LOCK = threading.Lock()


# -- reading a tenant's values from its table and from the index ------------------------


def scan_field(conn: Connection, tenant_id: str, lf: LinkField) -> tuple[str, ...] | None:
    """The tenant's distinct linkable values of one field, or None when over its bound."""
    t = source_table(lf.spec)
    col = t.c[lf.column]
    q = (
        sa.select(col)
        .distinct()
        .where(t.c[lf.spec.tenant] == tenant_id, col.is_not(None))
        .where(sa.func.length(col) <= MAX_VALUE_CHARS)
        .order_by(col)
        .limit(lf.bound + 1)
    )
    found = [v for v in conn.execute(q).scalars() if isinstance(v, str) and normalize_text(v)]
    return None if len(found) > lf.bound else tuple(found)


def read_index(
    conn: Connection, tenant_id: str
) -> tuple[dict[tuple[str, str], StateRow], dict[tuple[str, str], set[str]]]:
    """The tenant's value-index states and values, keyed by (entity, field)."""
    states = {(s.entity_type, s.field): s for s in read_states(conn, tenant_id, VALUES)}
    v = value_index.c
    values: dict[tuple[str, str], set[str]] = {}
    rows = conn.execute(sa.select(v.entity_type, v.field, v.value).where(v.tenant_id == tenant_id))
    for entity_type, field, value in rows.all():
        values.setdefault((entity_type, field), set()).add(value)
    return states, values


@dataclass(frozen=True)
class ValueCounts:
    added: int = 0
    removed: int = 0


def persist_field(
    conn: Connection,
    tenant_id: str,
    lf: LinkField,
    values: tuple[str, ...] | None,
    *,
    now: datetime,
    max_updated: datetime | None = None,
) -> ValueCounts:
    """Make the index of one field exactly `values` (None: over its bound, none kept)."""
    v = value_index.c
    where = (v.tenant_id == tenant_id, v.entity_type == lf.entity, v.field == lf.field)
    have = set(conn.execute(sa.select(v.value).where(*where)).scalars())
    want = set(values or ())
    gone, new = sorted(have - want), sorted(want - have)
    for start in range(0, len(gone), _WRITE_CHUNK):
        conn.execute(
            value_index.delete().where(*where, v.value.in_(gone[start : start + _WRITE_CHUNK]))
        )
    if new:
        conn.execute(
            value_index.insert(),
            [
                {"tenant_id": tenant_id, "entity_type": lf.entity, "field": lf.field, "value": x}
                for x in new
            ],
        )
    state = StateRow(
        kind=VALUES,
        entity_type=lf.entity,
        field=lf.field,
        source=lf.source,
        status="ok" if values is not None else "overflow",
        row_count=len(want),
        max_updated=max_updated,
        refreshed_at=now,
    )
    write_state(conn, tenant_id, state)
    return ValueCounts(added=len(new), removed=len(gone))


def tenant_values(
    fields: tuple[LinkField, ...], found: Mapping[tuple[str, str], tuple[str, ...] | None]
) -> TenantValues:
    """normalize_text(value) -> every (entity, field, stored value) holding it, in that order."""
    out: dict[str, list[LinkedValue]] = {}
    for lf in sorted(fields, key=lambda f: (f.entity, f.field)):
        for value in sorted(found.get((lf.entity, lf.field)) or ()):
            linked = LinkedValue(lf.entity, lf.field, value)
            out.setdefault(normalize_text(value), []).append(linked)
    return {k: tuple(vs) for k, vs in out.items()}


@contextmanager
def reader(engine: Engine, tenant_id: str) -> Iterator[Connection]:
    """The executor's kind of transaction: tenant-bound, read-only, as the reader role."""
    is_pg = engine.dialect.name == "postgresql"
    role = READER_ROLE if is_pg else None
    with tenant_transaction(engine, tenant_id, read_only=True, role=role) as conn:
        if is_pg:
            conn.execute(sa.select(sa.func.set_config("statement_timeout", _timeout_ms(), True)))
        yield conn


def _timeout_ms() -> str:
    raw = (getenv("QDSL_STATEMENT_TIMEOUT_MS") or "").strip()
    return raw if raw.isdigit() else "5000"


# -- the ValueSource ------------------------------------------------------------------


class DatabaseValues:
    """The `ValueSource` over one database and catalog (see the module doc)."""

    def __init__(
        self,
        engine: Engine,
        catalog: Catalog,
        *,
        ttl: float = CACHE_TTL_S,
        max_age: timedelta = STATE_MAX_AGE,
        clock: Callable[[], float] = time.monotonic,
        wall_clock: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.engine = engine
        self.fields = _link_fields_of(catalog)
        self._key = (engine_key(engine), catalog.content_key)
        self._ttl, self._max_age = ttl, max_age
        self._clock, self._wall_clock = clock, wall_clock

    def values_for(self, tenant_id: str) -> TenantValues:
        if not self.fields:
            return EMPTY_VALUES
        key = (*self._key, tenant_id)
        hit = CACHE.get(key, self._clock(), self._ttl)
        if hit is not None:
            return hit
        found = self.load(tenant_id)
        CACHE.put(key, self._clock(), found)
        return found

    def refresh(self, tenant_id: str | None = None) -> None:
        """Forget the cached values (of one tenant): the next call reads the index again."""
        forget(self.engine, tenant_id)

    def load(self, tenant_id: str) -> TenantValues:
        """Read the tenant's values through the index, building what is missing or stale."""
        now = self._wall_clock()
        try:
            with reader(self.engine, tenant_id) as conn:
                states, stored = read_index(conn, tenant_id)
        except SQLAlchemyError:
            states, stored = {}, {}  # no index table (older schema): scan, as on first use
        found: dict[tuple[str, str], tuple[str, ...] | None] = {}
        due: list[LinkField] = []
        for lf in self.fields:
            state = states.get((lf.entity, lf.field))
            if (
                state is None
                or state.source != lf.source
                or now - state.refreshed_at > self._max_age
            ):
                due.append(lf)
            else:
                kept = stored.get((lf.entity, lf.field), set())
                found[(lf.entity, lf.field)] = tuple(kept) if state.status == "ok" else None
        if due:
            built = self._scan(tenant_id, due)
            found.update(built)
            self._persist(tenant_id, due, built, now)
        return tenant_values(self.fields, found)

    def _scan(
        self, tenant_id: str, due: list[LinkField]
    ) -> dict[tuple[str, str], tuple[str, ...] | None]:
        built: dict[tuple[str, str], tuple[str, ...] | None] = {}
        try:
            with reader(self.engine, tenant_id) as conn:
                for lf in due:
                    built[(lf.entity, lf.field)] = scan_field(conn, tenant_id, lf)
        except SQLAlchemyError as exc:
            raise db_fault(self.engine, exc, {lf.spec.table for lf in due}) from None
        return built

    def _persist(
        self,
        tenant_id: str,
        due: list[LinkField],
        built: Mapping[tuple[str, str], tuple[str, ...] | None],
        now: datetime,
    ) -> None:
        try:
            with tenant_transaction(self.engine, tenant_id) as conn:
                for lf in due:
                    persist_field(conn, tenant_id, lf, built[(lf.entity, lf.field)], now=now)
        except SQLAlchemyError:
            # Kept in memory only: a read-only user, an older schema, or a
            # concurrent first use that wrote the same rows first.
            return


def value_source_for(engine: Engine | AsyncEngine, catalog: Catalog) -> ValueSource:
    """The ValueSource the pipeline hands the question reader.

    An AsyncEngine gets a synchronous engine on the same URL (the reader is
    synchronous); the LRU makes that a database read only on a cache miss.
    """
    return DatabaseValues(engine if isinstance(engine, Engine) else _sync_twin(engine), catalog)


def _sync_twin(engine: AsyncEngine) -> Engine:
    url = engine.url
    if url.get_backend_name() == "sqlite":
        url = url.set(drivername="sqlite")
    return _engine_for(url.render_as_string(hide_password=False))


@lru_cache(maxsize=8)
def _engine_for(url: str) -> Engine:
    from qdsl.facts.engines import make_engine

    return make_engine(url)


__all__ = [
    "AUTO_LINK_MAX_VALUES",
    "CACHE_SIZE",
    "MAX_VALUES_PER_FIELD",
    "MAX_VALUE_CHARS",
    "DatabaseValues",
    "LinkField",
    "forget",
    "link_fields",
    "value_source_for",
]
