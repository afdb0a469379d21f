"""The HR test deployment (tests/hr_facts/hr/), built as a deployer sets one up:
the deployment's DDL and rows, `qdsl.facts.db.upgrade` for qdsl's own tables,
on PostgreSQL `qdsl db secure` (reader grants, forced row-level security),
then `qdsl facts load` of `facts.jsonl`."""

from __future__ import annotations

from pathlib import Path

from deployments.fixtures import sql_statements

from qdsl.dsl.catalog import load_catalog
from qdsl.facts import fact_files
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.load import load_facts
from qdsl.facts.secure import secure

HR_DIR = Path(__file__).parent / "hr"
HR_CATALOG = HR_DIR / "catalog.toml"


def build_hr_database(url: str) -> None:
    catalog = load_catalog(HR_CATALOG)
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for name in ("schema.sql", "data.sql"):
                for stmt in sql_statements(HR_DIR / name):
                    conn.exec_driver_sql(stmt)
        upgrade(url)
        if engine.dialect.name == "postgresql":
            secure(engine, catalog, reader=READER_ROLE, apply=True)
        with (HR_DIR / "facts.jsonl").open("rb") as stream:
            load_facts(fact_files.read_rows(stream, "jsonl"), engine=engine, catalog=catalog)
    finally:
        engine.dispose()
