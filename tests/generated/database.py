"""Build a real database from a generated deployment, as a deployer sets one up.

The deployer's tables are created with SQLAlchemy Core from the generated
column types (the DDL a deployer's schema would hold: `DATE`, `NUMERIC(14, 2)`,
`TIMESTAMP WITH TIME ZONE`, `UUID`, SQLite `TEXT` dates, 0/1 `INTEGER`
booleans…), and each value is written in the form that type stores (`stored`):
rows are inserted through an untyped table, so what lands in the database is
exactly what a deployer's own loader would have written, not what
SQLAlchemy's type adapters would make of it. Then, as a deployer runs them:
`qdsl db upgrade` (`qdsl.facts.db.upgrade`), on PostgreSQL `qdsl db secure`
(reader grants, forced row-level security), `qdsl facts load`
(`qdsl.facts.load.load_facts`) and `qdsl index refresh`.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from contextlib import AbstractContextManager
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

import sqlalchemy as sa
from generated.model import Deployment, Entity, Field, Relation, Row, Value
from sqlalchemy import Engine

from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.load import load_facts
from qdsl.facts.secure import secure

# A deployment -> its database, built and served for as long as the context is open.
Builder = Callable[[Deployment], AbstractContextManager[Engine]]

_DDL: dict[str, Any] = {
    "TEXT": sa.Text(),
    "TEXT space": sa.Text(),
    "TEXT iso": sa.Text(),
    "VARCHAR(64)": sa.String(64),
    "VARCHAR(32)": sa.String(32),
    "INTEGER": sa.Integer(),
    "BIGINT": sa.BigInteger(),
    "REAL": sa.REAL(),
    "NUMERIC": sa.Numeric(14, 2),
    "DOUBLE PRECISION": sa.Double(),
    "DATE": sa.Date(),
    "DATETIME": sa.DateTime(),
    "TIMESTAMP": sa.DateTime(timezone=False),
    "TIMESTAMPTZ": sa.DateTime(timezone=True),
    "BOOLEAN": sa.Boolean(create_constraint=False),
    "UUID": sa.Uuid(),
}


def _number(value: Decimal, sql: str, dialect: str) -> Any:
    if sql in ("INTEGER", "BIGINT"):
        return int(value)
    if sql == "NUMERIC" and dialect == "postgresql":
        return value
    # SQLite's NUMERIC affinity keeps an integral value an integer, others a REAL
    return int(value) if value == value.to_integral() and sql == "NUMERIC" else float(value)


def _time(value: datetime, sql: str, dialect: str) -> Any:
    naive = value.astimezone(UTC).replace(tzinfo=None)
    if dialect == "sqlite":
        if sql == "DATETIME":  # SQLAlchemy's own storage format
            return naive.strftime("%Y-%m-%d %H:%M:%S.%f")
        if sql == "TEXT space":
            return naive.strftime("%Y-%m-%d %H:%M:%S")
        return value.isoformat()
    return value if sql == "TIMESTAMPTZ" else naive


def stored(f: Field, value: Value, dialect: str) -> Any:
    """The value as a deployer's loader writes it into a column of `f.sql`."""
    sql = f.sql or ""
    if value is None:
        return None
    if isinstance(value, bool):
        return value if dialect == "postgresql" else int(value)
    if isinstance(value, Decimal):
        return _number(value, sql, dialect)
    if isinstance(value, datetime):
        return _time(value, sql, dialect)
    if isinstance(value, date):
        return value.isoformat() if dialect == "sqlite" else value
    return value


def stored_id(ent: Entity, ident: str) -> Any:
    return _stored_key(ent.id_sql, ident)


def _stored_key(sql: str, ident: str | None) -> Any:
    if ident is None:
        return None
    if sql == "UUID":
        return uuid.UUID(ident)
    return int(ident) if sql in ("INTEGER", "BIGINT") else ident


def _keys(dep: Deployment, ent: Entity) -> list[Relation]:
    return [r for r in dep.relations if r.child == ent.name]


def _table(md: sa.MetaData, ent: Entity, keys: list[Relation]) -> sa.Table:
    cols = [
        sa.Column("tenant_id", sa.String(64), primary_key=True),
        sa.Column("id", _DDL[ent.id_sql], primary_key=True, autoincrement=False),
        sa.Column("name", _DDL[ent.label_sql], nullable=False),
    ]
    for f in ent.fields:
        if f.sql is not None:
            cols.append(sa.Column(f.name, _DDL[f.sql], nullable=f.nullable))
    if ent.passages is not None:
        cols += [sa.Column(name, sa.Text()) for name in ent.passages.columns]
    # no foreign key: a deployer's key may name a row that is gone, or another tenant's
    cols += [sa.Column(r.key, _DDL[r.key_sql], nullable=True) for r in keys]
    return sa.Table(ent.table, md, *cols)


def _insert_rows(engine: Engine, dep: Deployment) -> None:
    md = sa.MetaData()
    for ent in dep.entities:
        _table(md, ent, _keys(dep, ent))
    md.create_all(engine)
    with engine.begin() as conn:
        for (tenant, name), rows in dep.rows:
            ent = dep.entity(name)
            columns = [f for f in ent.fields if f.sql is not None]
            quoted = ent.passages.columns if ent.passages is not None else ()
            keys = _keys(dep, ent)
            # untyped: the values go in exactly as `stored` made them
            target = sa.table(
                ent.table,
                *(sa.column(c) for c in ("tenant_id", "id", "name", *quoted)),
                *(sa.column(f.name) for f in columns),
                *(sa.column(k.key) for k in keys),
            )
            records = [
                {
                    "tenant_id": tenant,
                    "id": stored_id(ent, str(r["id"])),
                    "name": r["label"],
                    **{name: r[name] for name in quoted},
                    **{f.name: stored(f, r[f.name], dep.dialect) for f in columns},
                    **{k.key: _stored_key(k.key_sql, _key(r, k)) for k in keys},
                }
                for r in rows
            ]
            if records:
                conn.execute(sa.insert(target), records)


def _key(row: Row, rel: Relation) -> str | None:
    key = row.get(rel.key)
    return None if key is None else str(key)


def fact_records(dep: Deployment) -> list[dict[str, Any]]:
    """The deployment's facts as `qdsl facts load` reads them."""
    observed = (dep.now - timedelta(days=1)).isoformat()
    return [
        {
            "tenant_id": f.tenant,
            "entity_type": f.entity,
            "entity_id": f.entity_id,
            "predicate": f.predicate,
            "value_text": f.value_text,
            "source_type": "generated",
            "source_ref": f"src:{f.entity}/{f.entity_id}#{i}",
            "confidence": 0.9,
            "observed_at": observed,
        }
        for i, f in enumerate(dep.facts, start=1)
    ]


def build_database(dep: Deployment, url: str) -> None:
    """The deployer's tables and rows, qdsl's own tables, security, facts and indexes."""
    engine = make_engine(url)
    try:
        _insert_rows(engine, dep)
        upgrade(url)
        if engine.dialect.name == "postgresql":
            secure(engine, dep.catalog, reader=READER_ROLE, apply=True)
        if dep.facts:
            load_facts(fact_records(dep), engine=engine, catalog=dep.catalog, now=dep.now)
        refresh_index(engine, dep.catalog)
    finally:
        engine.dispose()
