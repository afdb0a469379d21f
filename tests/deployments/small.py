"""Small hand-written deployments (tests/deployments/<name>/): a catalog, the
deployer's tables as portable DDL (`schema.sql`) and rows (`data.sql`), built the
way a deployer sets one up: the DDL and data, `qdsl.facts.db.upgrade`, on
PostgreSQL `qdsl db secure`, then `qdsl index refresh`.

* `staff`: employees and sites, with DATE, BOOLEAN and NUMERIC columns;
* `premiums`: an insurer's premium payments, asked for totals per policy;
* `handbook`: an employee handbook whose explanations quote a `content` column
  under a `chapter` (the catalog's `passage` and `passage_section`).
"""

from __future__ import annotations

from pathlib import Path

from deployments.fixtures import sql_statements

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.secure import secure

HERE = Path(__file__).parent
STAFF = HERE / "staff"
PREMIUMS = HERE / "premiums"
HANDBOOK = HERE / "handbook"


def catalog_of(directory: Path) -> Catalog:
    return load_catalog(directory / "catalog.toml")


def build(directory: Path, url: str) -> None:
    """Create the deployment's tables and rows and qdsl's own, as a deployer would."""
    catalog = catalog_of(directory)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for name in ("schema.sql", "data.sql"):
                for stmt in sql_statements(directory / name):
                    conn.exec_driver_sql(stmt)
        upgrade(url)
        if engine.dialect.name == "postgresql":
            secure(engine, catalog, reader=READER_ROLE, apply=True)
        refresh_index(engine, catalog)
    finally:
        engine.dispose()
