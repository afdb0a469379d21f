"""SQLAlchemy Core definitions of qdsl's own tables: semantic_facts and its indexes.

These are the runtime view of the schema; the Alembic history under the
repository's `alembic/` directory creates it (a test checks that the migrated
database and this MetaData do not drift apart). A deployer's entity tables are
theirs, described only by their catalog; the demo's live in facts.demo.tables.

Datetimes are stored in UTC. `UtcDateTime` makes both dialects behave alike:
it accepts aware datetimes or ISO strings (plans carry dates as strings) and
always hands back aware UTC datetimes, where SQLite alone would return naive
ones and compare ISO strings with a `T` against stored values with a space.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    DateTime,
    Dialect,
    Float,
    Index,
    Integer,
    LargeBinary,
    MetaData,
    PrimaryKeyConstraint,
    String,
    Table,
    Text,
)
from sqlalchemy.types import TypeDecorator

# Naming convention so constraint names are identical on both dialects and in
# the migration (Alembic compares and drops by name).
NAMING_CONVENTION = {
    "ix": "ix_%(table_name)s_%(column_0_N_name)s",
    "uq": "uq_%(table_name)s_%(column_0_N_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "pk": "pk_%(table_name)s",
}

metadata = MetaData(naming_convention=NAMING_CONVENTION)

ID = String(64)
TENANT = String(64)


class UtcDateTime(TypeDecorator[datetime]):
    """DateTime(timezone=True) that binds and returns aware UTC values on every dialect."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if isinstance(value, str):
            value = datetime.fromisoformat(value.replace("Z", "+00:00"))
        if not isinstance(value, datetime):
            raise TypeError(f"expected datetime or ISO string, got {type(value).__name__}")
        if value.tzinfo is None:
            # Naive values are taken as UTC: the whole schema is UTC.
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)

    def process_result_value(self, value: Any, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        assert isinstance(value, datetime)
        if value.tzinfo is None:
            return value.replace(tzinfo=UTC)
        return value.astimezone(UTC)


# SPEC 5. BIGINT on PostgreSQL (the benchmark loads millions of rows); SQLite
# only autoincrements a column declared exactly INTEGER.
semantic_facts = Table(
    "semantic_facts",
    metadata,
    Column(
        "id",
        BigInteger().with_variant(Integer(), "sqlite"),
        primary_key=True,
        autoincrement=True,
    ),
    Column("tenant_id", TENANT, nullable=False),
    Column("entity_type", String(64), nullable=False),
    Column("entity_id", ID, nullable=False),
    Column("predicate", String(128), nullable=False),
    Column("value_text", Text, nullable=False),
    Column("value_norm", Text, nullable=False),
    Column("value_num", Float, nullable=True),
    Column("source_type", String(32), nullable=False),
    Column("source_ref", String(500), nullable=True),
    Column("confidence", Float, nullable=True),
    Column("observed_at", UtcDateTime, nullable=False),
    Column("valid_until", UtcDateTime, nullable=True),
)
Index(
    "ix_semantic_facts_lookup",
    semantic_facts.c.tenant_id,
    semantic_facts.c.entity_type,
    semantic_facts.c.predicate,
    semantic_facts.c.value_norm,
)
Index(
    "ix_semantic_facts_entity",
    semantic_facts.c.tenant_id,
    semantic_facts.c.entity_type,
    semantic_facts.c.entity_id,
)

# Fallback text index (see facts.textindex): one row per distinct unigram or
# bigram of an entity's normalized text_search columns. The primary key starts
# with the lookup columns, so it is the (tenant_id, entity_type, gram) index
# and also covers entity_id: a gram lookup never touches the heap. The
# (tenant_id, entity_type, entity_id) index serves re-indexing one entity.
text_grams = Table(
    "text_grams",
    metadata,
    Column("tenant_id", TENANT, nullable=False),
    Column("entity_type", String(64), nullable=False),
    Column("gram", String(16), nullable=False),
    Column("entity_id", ID, nullable=False),
    PrimaryKeyConstraint("tenant_id", "entity_type", "gram", "entity_id"),
    # The row is its key: on SQLite store it in the primary key's B-tree alone.
    sqlite_with_rowid=False,
)
Index(None, text_grams.c.tenant_id, text_grams.c.entity_type, text_grams.c.entity_id)

# Per-tenant value index (see facts.value_index): the distinct stored values of
# the catalog's linkable text fields, one row per value. Bounded on write (value
# length and count per field), so the whole key fits a B-tree entry; the primary
# key is also the (tenant_id, ...) lookup index.
value_index = Table(
    "value_index",
    metadata,
    Column("tenant_id", TENANT, nullable=False),
    Column("entity_type", String(64), nullable=False),
    Column("field", String(128), nullable=False),
    Column("value", String(256), nullable=False),
    PrimaryKeyConstraint("tenant_id", "entity_type", "field", "value"),
    sqlite_with_rowid=False,
)

# What `qdsl index refresh` (or a first use) last built, per tenant: one row per
# (kind, entity, field) with kind "text" (field "") or "values". `source` is a
# digest of the catalog names the index was built from, so a changed catalog
# re-indexes; `row_count` / `max_updated` are the table's size and newest
# update time as seen before the build, which the index findings compare with
# the table now.
index_state = Table(
    "index_state",
    metadata,
    Column("tenant_id", TENANT, nullable=False),
    Column("kind", String(16), nullable=False),
    Column("entity_type", String(64), nullable=False),
    Column("field", String(128), nullable=False),
    Column("source", String(64), nullable=False),
    Column("status", String(16), nullable=False),
    Column("row_count", BigInteger, nullable=False),
    Column("max_updated", UtcDateTime, nullable=True),
    Column("refreshed_at", UtcDateTime, nullable=False),
    PrimaryKeyConstraint("tenant_id", "kind", "entity_type", "field"),
)

# qdsl's own tables: what `qdsl db upgrade` creates (the demo's live in facts.demo.tables).
TENANT_TABLES: tuple[Table, ...] = (semantic_facts, text_grams, value_index, index_state)

TABLES_BY_NAME: dict[str, Table] = {t.name: t for t in metadata.sorted_tables}

# -- PostgreSQL only ------------------------------------------------------------------
# The shared ref store (envelope.pg_store, docs/refs.md): large results kept for
# a while, readable by every server process of a deployment. Only PostgreSQL
# deployments get it (SQLite is one host: the file store serves it), so it has
# a MetaData of its own, compared with the migrated PostgreSQL schema alone.
postgresql_metadata = MetaData(naming_convention=NAMING_CONVENTION)

REF_TABLE_NAME = "qdsl_refs"
ref_table = Table(
    REF_TABLE_NAME,
    postgresql_metadata,
    Column("ref_id", String(64), primary_key=True),
    # NULL: made without a tenant (parse, compile, catalog), readable by all.
    # Text: a tenant id may be as long as `[limits] tenant_chars` allows.
    Column("tenant_id", Text, nullable=True),
    Column("operation", Text, nullable=False),
    # Epoch milliseconds, as the ids and the file store's records count time.
    Column("created_ms", BigInteger, nullable=False),
    Column("expires_ms", BigInteger, nullable=False),
    Column("bytes", BigInteger, nullable=False),
    Column("sha256", String(64), nullable=False),
    # sha256 of the record's fields (envelope.records.seal): a changed expiry,
    # size or checksum reads as corrupt, as a changed file header does.
    Column("seal", String(64), nullable=False),
    Column("payload", LargeBinary, nullable=False),
)
# The collector walks live refs oldest first and drops the expired.
Index(None, ref_table.c.created_ms, ref_table.c.ref_id)
Index(None, ref_table.c.expires_ms)
