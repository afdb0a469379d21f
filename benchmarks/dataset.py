"""Generated data in the demo's schema: N facts over Zipf-skewed tenants.

Projects are shared out to tenants by Zipf's law (the tenant of rank k gets a
share proportional to 1/k), so the largest tenant holds ~17% of the rows and
the smallest a few hundredths of a percent: plans must hold up across a wide
spread of tenant sizes. Every project has one fact per predicate (five), its
market theme one of a fixed vocabulary (three of whose spellings are
aliases of A股). Loaded with COPY on PostgreSQL, executemany on SQLite, after
`qdsl db upgrade` and the demo's own schema (tenant-secured like the demo).
"""

from __future__ import annotations

import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa

from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import make_engine, upgrade

THEMES = ("A股", "A-share", "港股", "美股", "HK equities", "沪深A股", "US equities")
PREDICATES = ("market_theme", "sector", "region", "risk_level", "owner_team")
TITLES = ("港股做市", "A股量化", "美股研究", "债券风控", "Ingress gate", "Verifier audit")
STATUSES = ("active", "paused", "closed")
FACT_COLUMNS = (
    "tenant_id", "entity_type", "entity_id", "predicate", "value_text", "value_norm",
    "source_type", "source_ref", "confidence", "observed_at",
)
PROJECT_COLUMNS = ("tenant_id", "id", "title", "status", "budget", "created_at")
BASE = datetime(2026, 1, 1, tzinfo=UTC)


@dataclass(frozen=True)
class Shape:
    facts: int
    tenants: int

    @property
    def projects(self) -> int:
        return max(self.tenants, self.facts // len(PREDICATES))

    def sizes(self) -> list[int]:
        """Projects per tenant, rank 0 the largest."""
        return zipf_sizes(self.projects, self.tenants)


def zipf_sizes(total: int, tenants: int) -> list[int]:
    """`total` shared out to `tenants`, rank 0 the largest (Zipf, exponent 1, at least 1)."""
    weights = [1 / (k + 1) for k in range(tenants)]
    scale = sum(weights)
    return [max(1, round(total * w / scale)) for w in weights]


def tenant(rank: int) -> str:
    return f"z{rank:03d}"


def sample_ranks(tenants: int) -> list[int]:
    """Tenants of every size class: the largest, middling ones and the smallest."""
    picks = {0, 1, 3, 10, 30, 100, tenants - 1}
    return sorted(r for r in picks if r < tenants)


def _rows(shape: Shape) -> Iterator[tuple[tuple[Any, ...], list[tuple[Any, ...]]]]:
    norms = {v: normalize_text(v) for v in THEMES}
    for rank, count in enumerate(shape.sizes()):
        t = tenant(rank)
        for p in range(1, count + 1):
            pid = str(p)
            project = (
                t, pid, f"{TITLES[p % len(TITLES)]} {p}", STATUSES[(p + rank) % 3],
                p * 100, BASE + timedelta(minutes=p),
            )
            facts = []
            for k, predicate in enumerate(PREDICATES):
                value = THEMES[(p * 3 + rank) % len(THEMES)] if k == 0 else f"v{(p * (k + 1)) % 50}"
                facts.append((
                    t, "project", pid, predicate, value, norms.get(value, value), "crm",
                    f"crm:project/{p}", 0.9, BASE + timedelta(days=(p + k) % 300),
                ))
            yield project, facts


def _create(url: str) -> None:
    upgrade(url)
    from qdsl.facts.demo.setup import _create_schema

    engine = make_engine(url)
    try:
        _create_schema(engine)
    finally:
        engine.dispose()


def load_pg(url: str, shape: Shape) -> None:
    import psycopg
    from psycopg import sql

    from benchmarks.rawdb import conninfo

    _create(url)
    with psycopg.connect(conninfo(url)) as conn, conn.cursor() as cur:
        copy_projects = sql.SQL("COPY projects ({}) FROM STDIN").format(
            sql.SQL(", ").join(map(sql.Identifier, PROJECT_COLUMNS))
        )
        copy_facts = sql.SQL("COPY semantic_facts ({}) FROM STDIN").format(
            sql.SQL(", ").join(map(sql.Identifier, FACT_COLUMNS))
        )
        # two passes over the generator: regenerating is cheaper than holding 1M rows
        with cur.copy(copy_projects) as copy:
            for project, _facts in _rows(shape):
                copy.write_row(project)
        with cur.copy(copy_facts) as copy:
            for _project, facts in _rows(shape):
                for row in facts:
                    copy.write_row(row)
    with psycopg.connect(conninfo(url), autocommit=True) as conn:
        conn.execute("ANALYZE")


def load_sqlite(path: str, shape: Shape) -> None:
    _create(f"sqlite:///{path}")
    projects: list[tuple[Any, ...]] = []
    facts: list[tuple[Any, ...]] = []
    for project, project_facts in _rows(shape):
        projects.append((*project[:5], project[5].strftime("%Y-%m-%d %H:%M:%S.%f")))
        facts.extend(
            (*f[:9], f[9].strftime("%Y-%m-%d %H:%M:%S.%f")) for f in project_facts
        )
    conn = sqlite3.connect(path)
    with conn:
        conn.executemany(
            f"INSERT INTO projects ({', '.join(PROJECT_COLUMNS)}) VALUES (?, ?, ?, ?, ?, ?)",
            projects,
        )
        marks = ", ".join("?" * len(FACT_COLUMNS))
        conn.executemany(
            f"INSERT INTO semantic_facts ({', '.join(FACT_COLUMNS)}) VALUES ({marks})", facts
        )
    conn.execute("ANALYZE")
    conn.close()


@contextmanager
def throwaway_pg(admin_url: str) -> Iterator[str]:
    """A fresh database on the server of `admin_url`, dropped at the end."""
    name = f"qdsl_bench_{uuid.uuid4().hex[:10]}"
    admin = make_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(sa.text(f'CREATE DATABASE "{name}"'))  # generated name, not input
    try:
        yield sa.make_url(admin.url).set(database=name).render_as_string(hide_password=False)
    finally:
        with admin.connect() as conn:
            conn.execute(sa.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


def pg_reachable(admin_url: str) -> str | None:
    """None when the server answers, else why not."""
    engine = make_engine(admin_url, connect_args={"connect_timeout": 3})
    try:
        with engine.connect() as conn:
            conn.execute(sa.text("SELECT 1"))
    except sa.exc.OperationalError as exc:
        return str(exc.orig).splitlines()[0] if exc.orig else "unreachable"
    finally:
        engine.dispose()
    return None
