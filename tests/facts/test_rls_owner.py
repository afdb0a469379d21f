"""FORCE ROW LEVEL SECURITY: even the (non-superuser) table owner sees only the session tenant.

The session's demo database belongs to the admin user, a superuser, which
bypasses RLS entirely; this test migrates and seeds a database owned by an
ordinary role, as a deployment would.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, func, select, text
from sqlalchemy.engine import make_url
from sqlalchemy.exc import DBAPIError

from qdsl.facts.db import READER_ROLE, make_engine, tenant_transaction
from qdsl.facts.demo.data import build_demo
from qdsl.facts.demo.setup import ensure_demo
from qdsl.facts.demo.tables import projects

pytestmark = pytest.mark.pg


@pytest.fixture(scope="module")
def owner_url(pg_admin_url: str) -> Iterator[str]:
    suffix = uuid.uuid4().hex[:10]
    role, database = f"qdsl_owner_{suffix}", f"qdsl_test_owner_{suffix}"
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    # Names are generated from hex digits above, not taken from input.
    with admin.connect() as conn:
        conn.execute(text(f'CREATE ROLE "{role}" LOGIN CREATEROLE'))
        conn.execute(text(f'CREATE DATABASE "{database}" OWNER "{role}"'))
    url = make_url(pg_admin_url).set(username=role, database=database)
    yield url.render_as_string(hide_password=False)
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)'))
        conn.execute(text(f'DROP ROLE IF EXISTS "{role}"'))
    admin.dispose()


@pytest.fixture(scope="module")
def owner_engine(owner_url: str) -> Iterator[Engine]:
    status = ensure_demo(owner_url, count_rows=True)
    assert sum(status.rows.values()) == build_demo().total_rows()
    engine = make_engine(owner_url)
    yield engine
    engine.dispose()


def test_owner_is_not_superuser(owner_engine: Engine) -> None:
    with owner_engine.connect() as conn:
        assert (
            conn.execute(
                text("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
            ).scalar_one()
            is False
        )


def test_owner_without_tenant_sees_nothing(owner_engine: Engine) -> None:
    with owner_engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(projects)).scalar_one() == 0


def test_owner_with_tenant_sees_only_it(owner_engine: Engine) -> None:
    with tenant_transaction(owner_engine, "t2") as conn:
        tenants = set(conn.execute(select(projects.c.tenant_id)).scalars())
    assert tenants == {"t2"}


def test_owner_cannot_write_into_another_tenant(owner_engine: Engine) -> None:
    row = {
        "tenant_id": "t2",
        "id": "999",
        "title": "x",
        "status": "active",
        "created_at": "2026-11-01T00:00:00Z",
    }
    with (
        pytest.raises(DBAPIError, match="row-level security"),
        tenant_transaction(owner_engine, "t1") as conn,
    ):
        conn.execute(projects.insert().values(**row))


def test_owner_may_become_the_reader(owner_engine: Engine) -> None:
    with tenant_transaction(owner_engine, "t1", read_only=True, role=READER_ROLE) as conn:
        assert conn.execute(text("SELECT current_user")).scalar_one() == READER_ROLE
        n = conn.execute(select(func.count()).select_from(projects)).scalar_one()
    assert n == len(build_demo().rows_for("t1")["projects"])


def test_the_owner_loads_facts_of_every_tenant_under_forced_rls(owner_engine: Engine) -> None:
    from qdsl.dsl.catalog import demo_catalog
    from qdsl.facts.load import load_facts
    from qdsl.facts.tables import semantic_facts as sf

    rows = [
        {"tenant_id": t, "entity_type": "project", "entity_id": "64",
         "predicate": "market_theme", "value_text": "Ａ股", "source_ref": f"load-test:{t}"}
        for t in ("t1", "t2", "t3")
    ]
    first = load_facts(rows, engine=owner_engine, catalog=demo_catalog())
    again = load_facts(rows, engine=owner_engine, catalog=demo_catalog())
    assert (first.inserted, again.inserted, again.updated) == (3, 0, 0)
    for tenant in ("t1", "t2", "t3"):
        with tenant_transaction(owner_engine, tenant) as conn:
            found = conn.execute(
                select(sf.c.value_norm).where(sf.c.source_ref == f"load-test:{tenant}")
            ).scalars().all()
        assert found == ["a股"]
