"""Loading `semantic_facts`: validate against the catalog, normalize, upsert, all or nothing.

`load_facts(rows, engine=…, catalog=…)` takes rows (mappings, with their line
numbers when they come from a file: `facts.fact_files.read_rows`) and:

* validates each row against the catalog: `tenant_id` present (no control
  characters), `entity_type` an entity of the catalog, `predicate` declared as
  a `fact` field of that entity, `entity_id` and `value_text` present, numbers
  and instants well formed, no unknown keys. Every bad row is reported with its
  line and reason (`validation/facts_rejected`, `details.problems`);
* writes `value_norm = normalize_text(value_text)` (a `value_norm` in the row
  is accepted and recomputed), the function the
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
`app.tenant_id` set when the writer is under forced row-level security.

The fallback text search reads entity columns only (never fact text), so a
fact load has no text index to maintain.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection, Engine

from qdsl.dsl.catalog import Catalog, FieldType
from qdsl.dsl.errors import ErrorType, UserError
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.bulk import bulk_insert, bypasses_rls
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
MAX_PROBLEMS_SHOWN = 200
REQUIRED = ("tenant_id", "entity_type", "entity_id", "predicate", "value_text")
OPTIONAL = ("value_num", "source_type", "source_ref", "confidence", "observed_at", "valid_until")
FACT_KEYS: tuple[str, ...] = (*REQUIRED, *OPTIONAL)
# Accepted and recomputed: an export of semantic_facts carries it, but only
# normalize_text's spelling is ever matched, so the loader always writes its own.
RECOMPUTED = ("value_norm",)
NATURAL_KEY = ("tenant_id", "entity_type", "entity_id", "predicate", "source_ref")
DEFAULT_SOURCE_TYPE = "load"
# Column widths of semantic_facts: a longer value is the row's fault, named here
# rather than as a database error for the whole load.
_WIDTHS = {
    name: col.type.length
    for name, col in semantic_facts.c.items()
    if isinstance(col.type, sa.String) and col.type.length
}


class FactsRejected(UserError):
    """Rows that do not validate; nothing was written."""

    type = ErrorType.VALIDATION


@dataclass(frozen=True)
class RowProblem:
    line: int
    reason: str

    def to_dict(self) -> dict[str, Any]:
        return {"line": self.line, "reason": self.reason}


@dataclass
class LoadReport:
    rows: int = 0
    inserted: int = 0
    updated: int = 0
    removed: int = 0
    unchanged: int = 0
    tenants: list[str] = field(default_factory=list)
    seconds: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        return {
            "rows": self.rows,
            "inserted": self.inserted,
            "updated": self.updated,
            "removed": self.removed,
            "unchanged": self.unchanged,
            "tenants": self.tenants,
            "seconds": round(self.seconds, 3),
        }


# -- validation ------------------------------------------------------------------------


def _text(raw: Mapping[str, Any], key: str, *, required: bool) -> str | None:
    value = raw.get(key)
    if type(value) is str:  # the common case first: this runs per field per row
        text = value
    elif isinstance(value, int) and not isinstance(value, bool):
        text = str(value)  # ids written as JSON numbers
    elif value is None:
        text = ""
    else:
        raise ValueError(f"{key} must be text, not {type(value).__name__}")
    if not text or text.isspace():
        if required:
            raise ValueError(f"{key} is missing")
        return None
    if "\x00" in text:
        raise ValueError(f"{key} contains a NUL character")
    width = _WIDTHS.get(key)
    if width is not None and len(text) > width:
        raise ValueError(f"{key} is longer than {width} characters")
    return text


def _number(raw: Mapping[str, Any], key: str) -> float | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, bool):
        raise ValueError(f"{key} must be a number, not a boolean")
    try:
        number = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{key} must be a number, not {value!r:.40}") from None
    if not math.isfinite(number):
        raise ValueError(f"{key} must be a finite number")
    return number


def _instant(raw: Mapping[str, Any], key: str) -> datetime | None:
    value = raw.get(key)
    if value is None or (isinstance(value, str) and not value.strip()):
        return None
    if isinstance(value, datetime):
        moment = value
    else:
        try:
            moment = datetime.fromisoformat(str(value).strip().replace("Z", "+00:00"))
        except ValueError:
            raise ValueError(f"{key} must be an ISO-8601 instant, not {value!r:.40}") from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def _fact_fields(catalog: Catalog) -> dict[str, dict[str, FieldType]]:
    """entity type -> fact predicate -> field type."""
    return {
        name: {f.fact: f.type for f in spec.fields.values() if f.fact is not None}
        for name, spec in catalog.entities.items()
    }


def _check_tenant(tenant: str) -> None:
    if tenant != tenant.strip() or any(ord(c) < 32 or ord(c) == 127 for c in tenant):
        raise ValueError("tenant_id has surrounding blanks or control characters")


def _check_names(facts: Mapping[str, Mapping[str, FieldType]], entity: str, predicate: str) -> None:
    if entity not in facts:
        known = ", ".join(sorted(facts)) or "none"
        raise ValueError(f"entity_type {entity!r} is not in the catalog (known: {known})")
    if predicate not in facts[entity]:
        known = ", ".join(sorted(facts[entity])) or "none"
        raise ValueError(
            f"predicate {predicate!r} is not a fact field of {entity} (fact fields: {known})"
        )


def validate_row(
    raw: Mapping[str, Any], facts: Mapping[str, Mapping[str, FieldType]]
) -> dict[str, Any]:
    """The staged row for `raw`, or ValueError saying what is wrong with it.

    `facts` is entity type -> fact predicate -> field type (from the catalog).
    """
    unknown = sorted(k for k in raw if k not in FACT_KEYS and k not in RECOMPUTED)
    if unknown:
        raise ValueError(
            f"unknown field(s) {', '.join(unknown)}; a fact has {', '.join(FACT_KEYS)}"
        )
    tenant, entity, entity_id, predicate, value_text = (
        _text(raw, k, required=True) or "" for k in REQUIRED
    )
    _check_tenant(tenant)
    _check_names(facts, entity, predicate)
    value_norm = normalize_text(value_text)
    if not value_norm:
        raise ValueError("value_text is blank after normalization")
    value_num = _number(raw, "value_num")
    if value_num is None and facts[entity][predicate] is FieldType.NUMBER:
        try:
            value_num = _number({"value_text": value_text}, "value_text")
        except ValueError:
            raise ValueError(f"{predicate} is a number fact: value_num is missing") from None
    confidence = _number(raw, "confidence")
    if confidence is not None and not 0.0 <= confidence <= 1.0:
        raise ValueError("confidence must lie between 0 and 1")
    observed_at, valid_until = _instant(raw, "observed_at"), _instant(raw, "valid_until")
    if observed_at is not None and valid_until is not None and valid_until < observed_at:
        raise ValueError("valid_until is before observed_at")
    return {
        "tenant_id": tenant,
        "entity_type": entity,
        "entity_id": entity_id,
        "predicate": predicate,
        "value_text": value_text,
        "value_norm": value_norm,
        "value_num": value_num,
        "source_type": _text(raw, "source_type", required=False) or DEFAULT_SOURCE_TYPE,
        "source_ref": _text(raw, "source_ref", required=False),
        "confidence": confidence,
        "observed_at": observed_at,
        "valid_until": valid_until,
    }


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


def _natural_key(st: sa.FromClause, *, value: bool = False) -> sa.ColumnElement[bool]:
    """A stored fact has the staged row's natural key (and, with `value`, its value)."""
    sf = semantic_facts
    same = [sf.c[k] == st.c[k] for k in NATURAL_KEY if k != "source_ref"]
    same.append(sf.c.source_ref.is_not_distinct_from(st.c.source_ref))
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
    """Statistics, so the upsert's lookups use the (tenant, entity) index.

    PostgreSQL never auto-analyzes a temporary table: without statistics the
    joins are planned as if the staging table were empty. SQLite has no
    statistics until ANALYZE and then prefers the value lookup index, which
    holds hundreds of rows per common value; a sampled ANALYZE (cheap on any
    size) lets it pick the entity index.
    """
    if conn.dialect.name == "postgresql":
        conn.exec_driver_sql(f"ANALYZE {st.name}")  # it then hash-joins the staged rows
        return
    # SQLite joins by nested loops only: the staged rows need an index on the key
    sa.Index(f"ix_{st.name}_key", *(st.c[k] for k in NATURAL_KEY[:4])).create(conn)
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
    conn: Connection, st: sa.Table, tenant: str | None, now: datetime
) -> tuple[int, int, int]:
    """(removed, updated, inserted) for the staged rows (of one tenant, or all)."""
    sf = semantic_facts
    stored: list[sa.ColumnElement[bool]] = []  # which semantic_facts rows this pass sees
    staged: list[sa.ColumnElement[bool]] = []  # which staged rows it writes
    if tenant is not None:
        conn.execute(sa.select(sa.func.set_config("app.tenant_id", tenant, True)))
        stored, staged = [sf.c.tenant_id == tenant], [st.c.tenant_id == tenant]
    # values a source no longer states: its key is staged, that value is not
    restated = st.alias("restated")
    removed = conn.execute(
        sa.delete(sf)
        .where(
            *stored,
            sa.exists().where(*staged, _natural_key(st)),
            ~sa.exists().where(_natural_key(restated, value=True)),
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
        .where(*stored, *staged, _natural_key(st, value=True), differs)
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
        *staged, ~sa.exists().where(*stored, _natural_key(st, value=True))
    )
    inserted = conn.execute(
        sa.insert(sf)
        .from_select(columns, new)
        # psycopg reports INSERT ... SELECT's rowcount only when asked to keep it
        .execution_options(preserve_rowcount=True)
    ).rowcount
    return int(removed or 0), int(updated or 0), int(inserted or 0)


def _stage(
    conn: Connection,
    st: sa.Table,
    rows: Iterable[tuple[int, Mapping[str, Any] | str]],
    facts: Mapping[str, Mapping[str, FieldType]],
    progress: Callable[[int], None] | None,
) -> tuple[int, list[RowProblem], int]:
    """Validate and stage every row: (rows read, problems shown, problem count)."""
    batch: list[dict[str, Any]] = []
    problems: list[RowProblem] = []
    count = bad = 0
    for line, raw in rows:
        count += 1
        try:
            if isinstance(raw, str):
                raise ValueError(raw)  # the file reader could not make a row of it
            staged = validate_row(raw, facts)
        except ValueError as exc:
            bad += 1
            if len(problems) < MAX_PROBLEMS_SHOWN:
                problems.append(RowProblem(line, str(exc)))
            continue
        if bad:
            continue  # nothing will be written: only keep validating
        staged["line"] = line
        batch.append(staged)
        if len(batch) >= BATCH_ROWS:
            bulk_insert(conn, st, batch, rls_free=True)
            if progress is not None:
                progress(len(batch))
            batch = []
    if batch and not bad:
        bulk_insert(conn, st, batch, rls_free=True)
        if progress is not None:
            progress(len(batch))
    return count, problems, bad


def _rejected(problems: list[RowProblem], bad: int, rows: int) -> FactsRejected:
    first = problems[0]
    return FactsRejected(
        "facts_rejected",
        f"{bad} of {rows} row(s) are not valid facts (first: line {first.line}: "
        f"{first.reason}); nothing was loaded",
        hint="fix the rows named in details.problems and load the file again",
        details={
            "problems": [p.to_dict() for p in problems],
            "bad_rows": bad,
            "rows": rows,
            # shown under the message to a person (QdslError.__str__)
            "excerpt": "\n".join(f"  line {p.line}: {p.reason}" for p in problems[:10])
            + (f"\n  … and {bad - 10} more" if bad > 10 else ""),
        },
    )


def load_facts(
    rows: Iterable[Mapping[str, Any] | tuple[int, Mapping[str, Any] | str]],
    *,
    engine: Engine,
    catalog: Catalog,
    now: datetime | None = None,
    progress: Callable[[int], None] | None = None,
) -> LoadReport:
    """Validate, normalize and upsert `rows` into semantic_facts in one transaction.

    `rows` are mappings (numbered from 1) or `(line, mapping)` pairs (as
    facts.fact_files.read_rows yields them; a string in place of the mapping
    says why the line is unreadable). Raises
    FactsRejected naming every bad row (nothing written), or a DatabaseError.
    `progress(n)` is called as batches of n rows are staged.
    """
    started = time.perf_counter()
    moment = now or datetime.now(UTC)
    facts = _fact_fields(catalog)
    numbered = (
        r if isinstance(r, tuple) else (i, r) for i, r in enumerate(rows, start=1)
    )
    st = _staging_table()
    report = LoadReport()
    with engine.begin() as conn:
        st.create(conn)
        report.rows, problems, bad = _stage(conn, st, numbered, facts, progress)
        if not bad:
            problems = _duplicates(conn, st)
            bad = len(problems)
        if bad:
            # Raising inside the transaction rolls the staging back too.
            raise _rejected(problems, bad, report.rows)
        _analyze(conn, st)
        tenants = sorted(conn.execute(sa.select(st.c.tenant_id).distinct()).scalars())
        for tenant in _tenant_passes(conn, st):
            removed, updated, inserted = _upsert(conn, st, tenant, moment)
            report.removed += removed
            report.updated += updated
            report.inserted += inserted
        st.drop(conn)
    report.tenants = tenants
    report.unchanged = max(0, report.rows - report.updated - report.inserted)
    report.seconds = time.perf_counter() - started
    return report
