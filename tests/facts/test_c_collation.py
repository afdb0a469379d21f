"""docs/catalog.md: under a `C` collation pg_trgm sees no CJK at all; the gram index still works."""

from __future__ import annotations

import uuid
from collections.abc import Iterator

import pytest
from sqlalchemy import Engine, create_engine, text
from sqlalchemy.engine import make_url

from qdsl.facts.db import make_engine, tenant_transaction
from qdsl.facts.demo.setup import ensure_demo
from qdsl.facts.textindex import candidate_ids_query

pytestmark = pytest.mark.pg


@pytest.fixture(scope="module")
def c_engine(pg_admin_url: str) -> Iterator[Engine]:
    name = f"qdsl_test_c_{uuid.uuid4().hex[:12]}"
    admin = create_engine(pg_admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        # Generated name; C collation and ctype, as some managed services default to.
        conn.execute(
            text(
                f"CREATE DATABASE \"{name}\" TEMPLATE template0 ENCODING 'UTF8' "
                "LC_COLLATE 'C' LC_CTYPE 'C'"
            )
        )
    url = make_url(pg_admin_url).set(database=name).render_as_string(hide_password=False)
    ensure_demo(url)
    engine = make_engine(url)
    yield engine
    engine.dispose()
    with admin.connect() as conn:
        conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    admin.dispose()


def test_pg_trgm_extracts_nothing_from_cjk_under_c(c_engine: Engine) -> None:
    with c_engine.connect() as conn:
        assert conn.execute(text("SELECT show_trgm('港股通资金流')")).scalar_one() == []
        assert conn.execute(text("SELECT show_trgm('hong kong')")).scalar_one() != []


@pytest.mark.parametrize(
    ("term", "expected"), [("港", {"63", "68"}), ("港股", {"63", "68"}), ("港股通", {"63"})]
)
def test_gram_index_finds_cjk_terms_under_c(
    c_engine: Engine, term: str, expected: set[str]
) -> None:
    with tenant_transaction(c_engine, "t1", read_only=True) as conn:
        found = set(conn.execute(candidate_ids_query("t1", "project", term)).scalars())
    assert found == expected
