"""The PostgreSQL ref store: one table, `qdsl_refs`, shared by every process
of a deployment (docs/refs.md, "Several processes, one store").

The same contract as the file store (`envelope.store`): the same ids, records,
TTL, count and byte caps (the store's and each tenant's), grace period and
errors. A row is a ref: its record
in columns, the stored bytes in `payload`, and `seal`, the sha256 of the
record's fields, so a changed expiry, size or checksum reads as `ref_corrupt`
like a changed file header.

Who sees what is row-level security (migration 0003):

* reads (`load`, `live`) run as `qdsl_reader` in a read-only transaction with
  `app.tenant_id` set, so the database itself returns only the caller's refs
  and the shared ones, whatever the statement says; the statement says it too
  (the tenant predicate), and a refused ref is exactly a missing one;
* `put` runs as the connecting user with `app.tenant_id` set to the ref's
  tenant: the policy admits a row of that tenant (or a shared one) only;
* the collector declares `app.ref_scope = 'collect'`, the one scope that sees
  every tenant's refs, since the TTL and the store's caps are store-wide (and
  each tenant's caps are weighed against the others' holdings).

Caps without races: each collection runs in one transaction that first takes
a transaction-scoped advisory lock (released at commit or when the process
dies), so collectors run one at a time, and each one's statements, under
READ COMMITTED, see every ref committed before it got the lock. A decision
is thus made on the store as it is, not on a snapshot another collector is
already changing; a put never waits for it (a ref committed meanwhile is
younger than the grace period, which no collector evicts).

Every value is a bound parameter; the table comes from facts.tables.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import psycopg
from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    delete,
    func,
    insert,
    or_,
    select,
)
from sqlalchemy import true as sa_true
from sqlalchemy.exc import DBAPIError, IntegrityError, SQLAlchemyError

from qdsl.dsl.errors import DatabaseError, RefError
from qdsl.envelope.records import Clock, RefRecord, new_ref_id, record_seal, system_clock
from qdsl.envelope.ref_api import (
    DerivedReads,
    GcReport,
    PruneOwner,
    StoreWriteError,
    Tenants,
    checked_id,
    corrupt,
    expired,
    missing,
    new_record,
    over_cap_warning,
    plan_eviction,
)
from qdsl.envelope.settings import DEFAULT_GRACE_MS
from qdsl.facts.db import READER_ROLE, display_url
from qdsl.facts.dberrors import classify
from qdsl.facts.tables import ref_table

__all__ = ["COLLECT_LOCK", "PgRefStore"]

# Arbitrary constant key of the advisory lock that serializes collectors
# (facts.db's set-up lock uses another).
COLLECT_LOCK = 0x71D5_12EF
# Bounds on one store transaction: a store statement takes milliseconds (a
# 10 MB payload a few hundred), and a collector waiting this long behind
# another gives up with a warning rather than hold its command.
STATEMENT_TIMEOUT_MS = "60000"
LOCK_TIMEOUT_MS = "30000"
_RECORD_COLUMNS = (
    ref_table.c.ref_id,
    ref_table.c.operation,
    ref_table.c.created_ms,
    ref_table.c.expires_ms,
    ref_table.c.bytes,
    ref_table.c.sha256,
    ref_table.c.tenant_id,
)


class PgRefStore(DerivedReads):
    """The ref store in PostgreSQL table `qdsl_refs` (migration 0003)."""

    def __init__(
        self,
        engine: Engine,
        *,
        ttl_ms: int,
        max_count: int,
        max_bytes: int,
        grace_ms: int = DEFAULT_GRACE_MS,
        clock: Clock = system_clock,
        tenant_max_count: int | None = None,
        tenant_max_bytes: int | None = None,
    ) -> None:
        self.engine = engine
        self.ttl_ms = ttl_ms
        self.max_count = max_count
        self.max_bytes = max_bytes
        # each tenant's caps (None: the store's)
        self.tenant_max_count = max_count if tenant_max_count is None else tenant_max_count
        self.tenant_max_bytes = max_bytes if tenant_max_bytes is None else tenant_max_bytes
        self.grace_ms = grace_ms
        self.clock = clock

    # ----------------------------------------------------------------- write
    def put(self, operation: str, payload: bytes, *, tenant: str | None = None) -> RefRecord:
        record = new_record(
            operation, payload, now_ms=self.clock(), ttl_ms=self.ttl_ms, tenant=tenant
        )
        for _attempt in range(3):
            try:
                with self._transaction(tenant=tenant) as conn:
                    conn.execute(insert(ref_table).values(**_row(record), payload=payload))
            except IntegrityError:
                # the same id drawn twice in one millisecond: draw again
                now = self.clock()
                record = record._replace(
                    ref_id=new_ref_id(operation, now),
                    created_ms=now,
                    expires_ms=now + self.ttl_ms,
                )
                continue
            except SQLAlchemyError as exc:
                raise StoreWriteError(self._fault(exc).message) from exc
            return record
        raise StoreWriteError("no unused ref id after three draws")

    # ------------------------------------------------------------------ read
    def load(self, ref_id: str, *, tenant: str | None = None) -> tuple[RefRecord, bytes]:
        """The record and stored bytes of a ref readable by `tenant`."""
        ref_id = checked_id(ref_id)
        query = select(*_RECORD_COLUMNS, ref_table.c.seal, ref_table.c.payload).where(
            ref_table.c.ref_id == ref_id, _readable_by(tenant)
        )
        try:
            with self._transaction(tenant=tenant, reader=True) as conn:
                row = _one_binary(conn, query)
        except SQLAlchemyError as exc:
            raise self._fault(exc) from exc
        except psycopg.Error as exc:
            raise self._fault(DBAPIError(None, None, exc)) from exc
        if row is None:
            raise self._missing(ref_id)
        record = _record(row)
        if record.ref_id != ref_id or row["seal"] != record_seal(record):
            raise corrupt(ref_id)
        if not record.readable_by(tenant):
            raise self._missing(ref_id)
        if record.expires_ms <= self.clock():
            raise expired(ref_id)
        body = bytes(row["payload"])
        if len(body) != record.bytes or hashlib.sha256(body).hexdigest() != record.sha256:
            raise corrupt(ref_id)
        return record, body

    def _missing(self, ref_id: str) -> RefError:
        return missing(ref_id, ttl_ms=self.ttl_ms, now_ms=self.clock())

    # --------------------------------------------------------------- listing
    def live(self, *, tenant: str | None = None) -> list[RefRecord]:
        """The unexpired refs `tenant` may read, oldest first."""
        query = (
            select(*_RECORD_COLUMNS)
            .where(ref_table.c.expires_ms > self.clock(), _readable_by(tenant))
            .order_by(ref_table.c.created_ms, ref_table.c.ref_id)
        )
        try:
            with self._transaction(tenant=tenant, reader=True) as conn:
                return [_record(r._mapping) for r in conn.execute(query)]
        except SQLAlchemyError as exc:
            raise self._fault(exc) from exc

    def records(self) -> list[RefRecord]:
        """Every ref in the store (expired too, every tenant's), oldest first."""
        try:
            with self._transaction(collect=True) as conn:
                return _all_records(conn)
        except SQLAlchemyError as exc:
            raise self._fault(exc) from exc

    # -------------------------------------------------------------- collect
    def gc(
        self,
        *,
        prune_before_ms: int | None = None,
        prune_all: bool = False,
        prune_tenant: PruneOwner = Tenants.EVERY,
    ) -> GcReport:
        """Drop expired refs, then the oldest over the caps, as the file store does;
        an explicit prune removes only `prune_tenant`'s refs, as there."""
        report = GcReport()
        try:
            with self._transaction(collect=True) as conn:
                conn.execute(select(func.pg_advisory_xact_lock(COLLECT_LOCK)))
                self._collect(
                    conn,
                    report,
                    prune_before_ms=prune_before_ms,
                    prune_all=prune_all,
                    prune_tenant=prune_tenant,
                )
        except SQLAlchemyError as exc:
            report.warnings.append(f"ref store cleanup skipped ({self._fault(exc).message})")
        return report

    def _collect(
        self,
        conn: Connection,
        report: GcReport,
        *,
        prune_before_ms: int | None,
        prune_all: bool,
        prune_tenant: PruneOwner,
    ) -> None:
        now = self.clock()  # read under the lock: the store as it is now
        pruned: ColumnElement[bool] | None = None
        if prune_all:
            pruned = sa_true()
        elif prune_before_ms is not None:
            pruned = ref_table.c.created_ms < prune_before_ms
        if pruned is not None:
            if prune_tenant is not Tenants.EVERY:
                owner = ref_table.c.tenant_id
                mine = owner.is_(None) if prune_tenant is None else owner == prune_tenant
                pruned = pruned & mine
            report.pruned = conn.execute(delete(ref_table).where(pruned)).rowcount
            report.evicted += report.pruned
        report.expired += conn.execute(
            delete(ref_table).where(ref_table.c.expires_ms <= now)
        ).rowcount
        live = _all_records(conn)
        evict = plan_eviction(
            live,
            now=now,
            max_count=self.max_count,
            max_bytes=self.max_bytes,
            grace_ms=self.grace_ms,
            tenant_max_count=self.tenant_max_count,
            tenant_max_bytes=self.tenant_max_bytes,
        )
        if evict:
            conn.execute(delete(ref_table).where(ref_table.c.ref_id.in_(sorted(evict))))
            report.evicted += len(evict)
        kept = [r for r in live if r.ref_id not in evict]
        if kept and kept[-1].bytes > self.max_bytes:
            report.warnings.append(over_cap_warning(kept[-1], self.max_bytes))

    # --------------------------------------------------------------- session
    @contextmanager
    def _transaction(
        self, *, tenant: str | None = None, reader: bool = False, collect: bool = False
    ) -> Iterator[Connection]:
        """A transaction with its row-level security scope set (module docstring).

        One statement sets it all: `set_config(..., true)` lasts until the
        transaction ends, so a pooled connection never carries it further;
        `role` is `SET LOCAL ROLE` taking a bound value instead of an identifier.
        """
        settings = [
            func.set_config("app.tenant_id", tenant or "", True),
            func.set_config("statement_timeout", STATEMENT_TIMEOUT_MS, True),
            func.set_config("lock_timeout", LOCK_TIMEOUT_MS, True),
        ]
        if reader:
            settings += [
                func.set_config("transaction_read_only", "on", True),
                func.set_config("role", READER_ROLE, True),
            ]
        if collect:
            settings.append(func.set_config("app.ref_scope", "collect", True))
        with self.engine.connect() as conn:
            # Whatever isolation the engine defaults to: these statements must
            # each see what committed before them (the collector's lock).
            conn.execution_options(isolation_level="READ COMMITTED")
            with conn.begin():
                conn.execute(select(*settings))
                yield conn

    def _fault(self, exc: SQLAlchemyError) -> DatabaseError:
        url = self.engine.url.render_as_string(hide_password=False)
        return classify(exc, where=display_url(url))


def _readable_by(tenant: str | None) -> ColumnElement[bool]:
    """The tenant predicate (row-level security applies it again)."""
    if tenant is None:
        return ref_table.c.tenant_id.is_(None)
    return or_(ref_table.c.tenant_id.is_(None), ref_table.c.tenant_id == tenant)


def _one_binary(conn: Connection, query: Select[Any]) -> dict[str, Any] | None:
    """The one row of `query`, fetched in PostgreSQL's binary format.

    A payload comes back as its bytes rather than as hex text twice its size:
    reading 10 MB takes a seventh of the time (benchmarks/bench_ref_backends.py).
    The statement is SQLAlchemy's, compiled with its bound parameters, on the
    connection's own transaction (so its row-level security scope holds).
    """
    from psycopg.rows import dict_row

    compiled = query.compile(dialect=conn.dialect)
    driver = conn.connection.driver_connection
    assert driver is not None
    with driver.cursor(binary=True, row_factory=dict_row) as cursor:
        cursor.execute(str(compiled), compiled.params)
        found: dict[str, Any] | None = cursor.fetchone()
        return found


def _all_records(conn: Connection) -> list[RefRecord]:
    query = select(*_RECORD_COLUMNS).order_by(ref_table.c.created_ms, ref_table.c.ref_id)
    return [_record(r._mapping) for r in conn.execute(query)]


def _row(record: RefRecord) -> dict[str, Any]:
    return {
        "ref_id": record.ref_id,
        "operation": record.operation,
        "created_ms": record.created_ms,
        "expires_ms": record.expires_ms,
        "bytes": record.bytes,
        "sha256": record.sha256,
        "tenant_id": record.tenant,
        "seal": record_seal(record),
    }


def _record(row: Mapping[Any, Any]) -> RefRecord:
    return RefRecord(
        ref_id=str(row["ref_id"]),
        operation=str(row["operation"]),
        created_ms=int(row["created_ms"]),
        expires_ms=int(row["expires_ms"]),
        bytes=int(row["bytes"]),
        sha256=str(row["sha256"]),
        tenant=row["tenant_id"],
    )
