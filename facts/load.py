"""Loading `semantic_facts`: validate against the catalog, normalize, upsert, all or nothing.

`load_facts(rows, engine=…, catalog=…)` takes rows (mappings, with their line
numbers when they come from a file: `facts.fact_files.read_rows`) and:

* validates each row (facts.fact_rows: the catalog's entity types and fact
  predicates, the columns' widths, the lookup index's entry size, text that
  can be stored, numbers and instants, the load's tenant when `tenant=` is
  given). Every bad row is reported with its line and reason
  (`validation/facts_rejected`, `details.problems`);
* writes `value_norm = normalize_text(value_text)`, the function the
  normalizer and the executor match facts with (alias groups are expanded on
  the query side from the catalog, so every spelling of a value is stored as
  written and found by all of its aliases); a number fact gets `value_num`
  from its text when the row does not give one;
* keeps provenance and freshness as given (`source_type`, default `load`;
  `source_ref`; `confidence`; `observed_at`, default the load time for a new
  fact and the stored time for an existing one; `valid_until`);
* upserts on the natural key (tenant_id, entity_type, entity_id, predicate,
  source_ref): the rows of one load with the same key are what that source
  states now (one value, or several for a many-valued predicate such as a
  ticket's areas). A stored fact of that key with one of those values is
  updated in place (its id, which evidence cites, is kept) only when
  something differs; a value the source no longer states is removed; a new
  value is inserted. So loading the same file twice changes nothing, and a
  corrected file replaces what it corrects. The same key and value twice in
  one load is a bad row.

One load is one transaction: a file loads completely or not at all. Rows are
streamed through a temporary staging table (COPY on PostgreSQL, executemany on
SQLite, both via facts.bulk), so memory does not grow with the file; the
upsert is then three set statements (delete, update, insert), per tenant with
`app.tenant_id` set when the writer is under forced row-level security, and
per kind of key: with a source_ref, and without one. The two kinds are
matched apart because `source_ref IS NOT DISTINCT FROM` is no join key:
PostgreSQL estimated it like `=`, which never matches NULL, planned a reload
of facts without source_ref as a nested loop and took 38 s for 20,000 rows.
Matched as `IS NULL` on both sides plus equality on the rest, every
statement is a hash join (or an index probe for a small file), linear in the
file and the stored facts. The session is bounded and stops with its loader
(facts.load_session). A database fault is a typed DatabaseError.

The fallback text search reads entity columns only (never fact text), so a
fact load has no text index to maintain.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog, FieldType
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.tenant import valid_tenant
from qdsl.facts.bulk import bulk_insert, bypasses_rls
from qdsl.facts.dberrors import StatementTimeout, classify
from qdsl.facts.engines import display_url
from qdsl.facts.fact_rows import FACT_KEYS, OPTIONAL, REQUIRED, fact_fields, validate_row
from qdsl.facts.index_bounds import server_max_item
from qdsl.facts.load_report import (
    MAX_PROBLEMS_SHOWN,
    FactsRejected,
    LoadReport,
    RowProblem,
    rejected,
)
from qdsl.facts.load_session import (
    cancel_on_signals,
    load_timeout,
    load_timeout_ms,
    prepare_session,
    refresh_statistics,
)
from qdsl.facts.tables import UtcDateTime, semantic_facts

__all__ = [
    "FACT_KEYS",
    "FactsRejected",
    "LoadReport",
    "RowProblem",
    "load_facts",
    "validate_row",
]

BATCH_ROWS = 5000
NATURAL_KEY = ("tenant_id", "entity_type", "entity_id", "predicate", "source_ref")


# -- writing ---------------------------------------------------------------------------

# What an update may change of a stored fact (its key and value_norm match).
_VALUE_COLUMNS = (
    "value_text",
    "value_num",
    "source_type",
    "confidence",
    "valid_until",
)


def _staging_table() -> sa.Table:
    """A fresh temporary table shaped like a fact row plus its line (per load)."""
    cols: list[sa.Column[Any]] = [sa.Column("line", sa.Integer, nullable=False)]
    for name in (*REQUIRED, "value_norm", *OPTIONAL):
        col = semantic_facts.c[name]
        cols.append(sa.Column(name, col.type, nullable=True))
    return sa.Table("qdsl_facts_staging", sa.MetaData(), *cols, prefixes=["TEMPORARY"])


def _of_kind(col: sa.ColumnElement[Any], no_ref: bool) -> sa.ColumnElement[bool]:
    return col.is_(None) if no_ref else col.is_not(None)


def _same_key(st: sa.FromClause, *, no_ref: bool, value: bool = False) -> sa.ColumnElement[bool]:
    """A stored fact has the staged row's natural key (and, with `value`, its value).

    Equalities only, which the planner estimates from statistics and hashes or
    probes an index with: for keys without a source_ref (`no_ref`) both sides'
    `source_ref IS NULL` is said once, by the statement (`_of_kind`)."""
    sf = semantic_facts
    same = [sf.c[k] == st.c[k] for k in NATURAL_KEY if k != "source_ref"]
    if not no_ref:
        same.append(sf.c.source_ref == st.c.source_ref)
    if value:
        same.append(sf.c.value_norm == st.c.value_norm)
    return sa.and_(*same)


def _duplicates(conn: Connection, st: sa.Table) -> list[RowProblem]:
    keys = [st.c[k] for k in (*NATURAL_KEY, "value_norm")]
    found = conn.execute(
        sa.select(sa.func.min(st.c.line), sa.func.max(st.c.line))
        .group_by(*keys)
        .having(sa.func.count() > 1)
        .order_by(sa.func.min(st.c.line))
        .limit(MAX_PROBLEMS_SHOWN)
    ).all()
    return [
        RowProblem(
            int(last),
            f"same fact (tenant, entity, predicate, source_ref and value) as line {int(first)}",
        )
        for first, last in found
    ]


def _analyze(conn: Connection, st: sa.Table) -> None:
    """An index and statistics on the staged rows, so that every upsert
    statement is linear in the file, whatever the planner believes.

    The index on the key prefix lets a nested loop (which PostgreSQL picks when
    it believes one side nearly empty, as for a semantic_facts filled since
    its last ANALYZE) probe the staged rows instead of scanning them once per
    stored fact. PostgreSQL never auto-analyzes a temporary table: without
    statistics the joins are planned as if the staging table were empty.
    SQLite joins by nested loops only, and without statistics prefers the value
    lookup index, which holds hundreds of rows per common value; a sampled
    ANALYZE (cheap on any size) lets it pick the entity index.
    """
    key = [st.c[k] for k in (*NATURAL_KEY[:4], "value_norm")]
    if conn.dialect.name == "postgresql":
        # Without value_norm: the prefix's entries are bounded by the columns'
        # widths, where a long value_norm beside an entity id might not fit
        # PostgreSQL's B-tree (facts.index_bounds); statistics make it a hash
        # join there anyway.
        sa.Index(f"ix_{st.name}_key", *key[:4]).create(conn)
        conn.exec_driver_sql(f"ANALYZE {st.name}")
        return
    # SQLite's B-trees hold any key; with the value a many-valued key (hundreds
    # of values of one ticket's areas) is one probe, not a scan of its values.
    sa.Index(f"ix_{st.name}_key", *key).create(conn)
    conn.exec_driver_sql("PRAGMA analysis_limit = 1000")
    conn.exec_driver_sql(f"ANALYZE {semantic_facts.name}")
    conn.exec_driver_sql(f"ANALYZE {st.name}")


def _tenant_passes(conn: Connection, st: sa.Table) -> list[str | None]:
    """The tenants to upsert one by one, or [None] for one pass over all of them.

    Under PostgreSQL's forced row-level security a writer sees only the rows of
    `app.tenant_id`, so each tenant gets its own pass with it set; SQLite and a
    role that bypasses RLS need only one.
    """
    if conn.dialect.name != "postgresql" or bypasses_rls(conn):
        return [None]
    return sorted(conn.execute(sa.select(st.c.tenant_id).distinct()).scalars())


def _upsert(
    conn: Connection, st: sa.Table, tenant: str | None, now: datetime, *, no_ref: bool
) -> tuple[int, int, int]:
    """(removed, updated, inserted) for the staged rows of one kind of key (of one
    tenant, or all)."""
    sf = semantic_facts
    # which semantic_facts rows this pass sees, which staged rows it writes
    stored: list[sa.ColumnElement[bool]] = [_of_kind(sf.c.source_ref, no_ref)]
    staged: list[sa.ColumnElement[bool]] = [_of_kind(st.c.source_ref, no_ref)]
    if tenant is not None:
        conn.execute(sa.select(sa.func.set_config("app.tenant_id", tenant, True)))
        stored.append(sf.c.tenant_id == tenant)
        staged.append(st.c.tenant_id == tenant)
    # values a source no longer states: its key is staged, that value is not
    restated = st.alias("restated")
    removed = conn.execute(
        sa.delete(sf)
        .where(
            *stored,
            sa.exists().where(*staged, _same_key(st, no_ref=no_ref)),
            ~sa.exists().where(
                _of_kind(restated.c.source_ref, no_ref),
                _same_key(restated, no_ref=no_ref, value=True),
            ),
        )
        .execution_options(preserve_rowcount=True)
    ).rowcount
    observed = sa.func.coalesce(st.c.observed_at, sf.c.observed_at)
    differs = sa.or_(
        *(sf.c[c].is_distinct_from(st.c[c]) for c in _VALUE_COLUMNS),
        sf.c.observed_at.is_distinct_from(observed),
    )
    updated = conn.execute(
        sa.update(sf)
        .where(*stored, *staged, _same_key(st, no_ref=no_ref, value=True), differs)
        .values({**{c: st.c[c] for c in _VALUE_COLUMNS}, "observed_at": observed})
    ).rowcount
    columns = [c.name for c in semantic_facts.c if c.name != "id"]
    picked = [
        sa.func.coalesce(st.c.observed_at, sa.literal(now, UtcDateTime()))
        if c == "observed_at"
        else st.c[c]
        for c in columns
    ]
    new = sa.select(*picked).where(
        *staged, ~sa.exists().where(*stored, _same_key(st, no_ref=no_ref, value=True))
    )
    inserted = conn.execute(
        sa.insert(sf)
        .from_select(columns, new)
        # psycopg reports INSERT ... SELECT's rowcount only when asked to keep it
        .execution_options(preserve_rowcount=True)
    ).rowcount
    return int(removed or 0), int(updated or 0), int(inserted or 0)


@dataclass
class _Staged:
    rows: int = 0
    bad: int = 0
    problems: list[RowProblem] = field(default_factory=list)
    kinds: set[bool] = field(default_factory=set)  # no_ref values present


def _stage(
    conn: Connection,
    st: sa.Table,
    rows: Iterable[tuple[int, Mapping[str, Any] | str]],
    check: Callable[[Mapping[str, Any]], dict[str, Any]],
    progress: Callable[[int], None] | None,
) -> _Staged:
    """Validate and stage every row."""
    batch: list[dict[str, Any]] = []
    out = _Staged()
    for line, raw in rows:
        out.rows += 1
        try:
            if isinstance(raw, str):
                raise ValueError(raw)  # the file reader could not make a row of it
            staged = check(raw)
        except ValueError as exc:
            out.bad += 1
            if len(out.problems) < MAX_PROBLEMS_SHOWN:
                out.problems.append(RowProblem(line, str(exc)))
            continue
        if out.bad:
            continue  # nothing will be written: only keep validating
        staged["line"] = line
        out.kinds.add(staged["source_ref"] is None)
        batch.append(staged)
        if len(batch) >= BATCH_ROWS:
            bulk_insert(conn, st, batch, rls_free=True)
            if progress is not None:
                progress(len(batch))
            batch = []
    if batch and not out.bad:
        bulk_insert(conn, st, batch, rls_free=True)
        if progress is not None:
            progress(len(batch))
    return out


def _write(
    conn: Connection,
    rows: Iterable[tuple[int, Mapping[str, Any] | str]],
    facts: Mapping[str, Mapping[str, FieldType]],
    options: tuple[str | None, datetime, Callable[[int], None] | None],
) -> LoadReport:
    tenant, moment, progress = options
    max_item = server_max_item(conn)
    st = _staging_table()
    # SQLite's driver runs DDL outside the transaction: a rejected load on this
    # pooled connection left its staging table behind
    st.drop(conn, checkfirst=True)
    st.create(conn)
    staged = _stage(
        conn,
        st,
        rows,
        lambda raw: validate_row(raw, facts, tenant=tenant, max_index_item=max_item),
        progress,
    )
    report = LoadReport(rows=staged.rows)
    problems, bad = staged.problems, staged.bad
    if not bad:
        problems = _duplicates(conn, st)
        bad = len(problems)
    if bad:
        # Raising inside the transaction rolls the staging back too.
        raise rejected(problems, bad, report.rows)
    _analyze(conn, st)
    report.tenants = sorted(conn.execute(sa.select(st.c.tenant_id).distinct()).scalars())
    for pass_tenant in _tenant_passes(conn, st):
        for no_ref in sorted(staged.kinds):
            removed, updated, inserted = _upsert(conn, st, pass_tenant, moment, no_ref=no_ref)
            report.removed += removed
            report.updated += updated
            report.inserted += inserted
    st.drop(conn)
    report.unchanged = max(0, report.rows - report.updated - report.inserted)
    return report


def _database_error(exc: SQLAlchemyError, engine: Engine, timeout_ms: int) -> DatabaseError:
    err = classify(
        exc, where=display_url(engine.url.render_as_string(hide_password=False)),
        timeout_ms=timeout_ms,
    )
    # 57014 is also a cancel by another session: only the server's words tell them apart
    diag = getattr(getattr(exc, "orig", None), "diag", None)
    said = str(getattr(diag, "message_primary", None) or "")
    if isinstance(err, StatementTimeout) and "statement timeout" in said:
        return load_timeout(timeout_ms)
    return err


def load_facts(
    rows: Iterable[Mapping[str, Any] | tuple[int, Mapping[str, Any] | str]],
    *,
    engine: Engine,
    catalog: Catalog,
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
    tenant: str | None = None,
    stop_on_signals: bool = False,
) -> LoadReport:
    """Validate, normalize and upsert `rows` into semantic_facts in one transaction.

    `rows` are mappings (numbered from 1) or `(line, mapping)` pairs (as
    facts.fact_files.read_rows yields them; a string in place of the mapping
    says why the line is unreadable). `tenant`: every row must be of this
    tenant (a row of another is a bad row). `stop_on_signals`: SIGINT and
    SIGTERM cancel the running statement and raise
    facts.load_session.LoadInterrupted (main thread only; the CLI asks for it).
    Raises FactsRejected naming every bad row (nothing written), a
    DatabaseError, or a UsageError for a bad `tenant` or load timeout setting.
    `progress(n)` is called as batches of n rows are staged.
    """
    started = time.perf_counter()
    if tenant is not None:
        valid_tenant(tenant)
    timeout_ms = load_timeout_ms()
    moment = now or datetime.now(UTC)
    numbered = (
        r if isinstance(r, tuple) else (i, r) for i, r in enumerate(rows, start=1)
    )
    try:
        with cancel_on_signals(stop_on_signals) as watch:
            refresh_statistics(engine, timeout_ms, watch)
            with engine.begin() as conn:
                watch(conn)
                prepare_session(conn, timeout_ms)
                report = _write(conn, numbered, fact_fields(catalog), (tenant, moment, progress))
    except SQLAlchemyError as exc:
        raise _database_error(exc, engine, timeout_ms) from exc
    report.seconds = time.perf_counter() - started
    return report
