"""The shared DB fixtures deliver a migrated, seeded database on each dialect."""

from __future__ import annotations

import os

from sqlalchemy import Engine, func, select

from qdsl.facts.db import tenant_transaction
from qdsl.facts.demo.data import T3_PROJECT_COUNT
from qdsl.facts.demo.tables import projects


def test_engine_and_url_point_at_the_same_seeded_database(
    engine: Engine, db_url: str, dialect: str
) -> None:
    assert engine.dialect.name == dialect
    assert str(engine.url.database) in db_url
    with tenant_transaction(engine, "t3") as conn:
        n = conn.execute(
            select(func.count()).select_from(projects).where(projects.c.tenant_id == "t3")
        ).scalar_one()
    assert n == T3_PROJECT_COUNT


def test_state_dir_is_isolated_per_test() -> None:
    state = os.environ["QDSL_STATE_DIR"]
    assert "qdsl-state" in state
    assert not state.startswith(os.path.expanduser("~/"))
