"""bulk_insert writes exactly what Core's INSERT would, on both dialects."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone
from typing import Any

from sqlalchemy import Engine, select

from qdsl.facts.bulk import bulk_insert
from qdsl.facts.demo.tables import projects
from qdsl.facts.tables import text_grams

TENANT = "zz_bulk"


def test_bulk_insert_round_trips_values(engine: Engine) -> None:
    start = datetime(2026, 1, 1, 8, 30, tzinfo=UTC)
    rows: list[dict[str, Any]] = [
        {
            "tenant_id": TENANT,
            "id": str(i),
            "title": f"标题 {i} 'quoted' -- ;",
            "summary": None if i % 2 else "x" * i,
            "status": "active",
            "budget": 1000.5 * i,
            "owner_email": None,
            # Non-UTC input must come back as the same instant in UTC.
            "created_at": (start + timedelta(hours=i)).astimezone(timezone(timedelta(hours=8))),
        }
        for i in range(1, 40)
    ]
    grams = [
        {"tenant_id": TENANT, "entity_type": "project", "gram": g, "entity_id": "1"}
        for g in ("港股", "a", "a股")
    ]
    with engine.connect() as conn, conn.begin() as tx:
        assert bulk_insert(conn, projects, rows) == len(rows)
        assert bulk_insert(conn, text_grams, grams) == 3
        assert bulk_insert(conn, text_grams, []) == 0
        back = (
            conn.execute(
                select(projects)
                .where(projects.c.tenant_id == TENANT)
                .order_by(projects.c.created_at)
            )
            .mappings()
            .all()
        )
        got_grams = set(
            conn.execute(
                select(text_grams.c.gram).where(text_grams.c.tenant_id == TENANT)
            ).scalars()
        )
        tx.rollback()
    assert [dict(r) for r in back] == [
        {**r, "created_at": r["created_at"].astimezone(UTC)} for r in rows
    ]
    assert got_grams == {"港股", "a", "a股"}
