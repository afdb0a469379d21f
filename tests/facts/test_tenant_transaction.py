"""tenant_transaction: read-only really is read-only on both dialects."""

from __future__ import annotations

from pathlib import Path

import pytest
from sqlalchemy import delete, func, select
from sqlalchemy.exc import DBAPIError

from qdsl.facts.db import make_engine, tenant_transaction
from qdsl.facts.demo.setup import ensure_demo
from qdsl.facts.demo.tables import users


def test_read_only_refuses_writes_on_sqlite_and_resets(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'ro.sqlite3'}"
    ensure_demo(url)
    engine = make_engine(url, pool_size=1, max_overflow=0)  # one pooled connection, reused
    try:
        with (
            pytest.raises(DBAPIError, match="readonly"),
            tenant_transaction(engine, "t1", read_only=True) as conn,
        ):
            conn.execute(delete(users).where(users.c.tenant_id == "t1"))
        with tenant_transaction(engine, "t1", read_only=True) as conn:
            assert conn.execute(select(func.count()).select_from(users)).scalar_one() == 9
        # The same pooled connection accepts writes again outside read_only.
        with tenant_transaction(engine, "t1") as conn:
            conn.execute(delete(users).where(users.c.id == "3", users.c.tenant_id == "t1"))
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(users)).scalar_one() == 8
    finally:
        engine.dispose()


@pytest.mark.pg
def test_read_only_refuses_writes_on_postgresql(pg_engine: object) -> None:
    from sqlalchemy import Engine

    assert isinstance(pg_engine, Engine)
    with (
        pytest.raises(DBAPIError, match="read-only transaction"),
        tenant_transaction(pg_engine, "t1", read_only=True) as conn,
    ):
        conn.execute(delete(users).where(users.c.tenant_id == "t1"))
