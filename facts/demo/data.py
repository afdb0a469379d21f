"""The deterministic demo data set: three tenants with overlapping ids and values.

* t1: A股 projects whose market_theme facts are written "A股", "A-share" and
  "沪深A股" (some stale), 港股 projects, no 美股; tasks of project 64; run 12
  failed with error facts, run 15 the most recent failed run; zh and en doc
  passages about architecture / ingress gate / verifier / executor.
* t2: 港股 and 美股 projects and NO A股 (not even in free text).
* t3: A股 written only "A-share" / "A shares", and 300 projects with 600 tasks so
  that an unfiltered list is far beyond 24 KB of JSON.

Projects "64" and "65" exist in every tenant with different titles, statuses,
budgets and themes. Every row carries its tenant. Nothing here is random at run
time: the bulk rows of t3 come from `random.Random(DEMO_SEED)`, so two builds
are equal row for row (and, inserted into fresh databases, so are the fact ids).

The published constants (facts.demo.constants, re-exported here) describe the
data for tests; tests/facts/test_demo_data.py checks them against the rows.
The rows are built per family: facts.demo.projects (projects, tasks),
facts.demo.docs (passages), facts.demo.activity (runs, signals, users, configs).
"""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.facts.demo.activity import runs_and_signals, users_and_configs
from qdsl.facts.demo.builder import TABLE_ORDER, Builder, DemoData, ts
from qdsl.facts.demo.constants import (
    DEMO_NOW,
    DEMO_SEED,
    DEMO_TENANTS,
    T1_A_SHARE,
    T1_A_SHARE_FRESH,
    T1_A_SHARE_STALE,
    T1_FAILED_RUNS,
    T1_HK,
    T1_HK_TEXT_ONLY,
    T1_LATEST_FAILED_RUN,
    T1_RUN_12_ERRORS,
    T1_TASKS_OF_64,
    T2_HK,
    T2_US,
    T2_US_STALE,
    T3_PROJECT_COUNT,
    T3_TASK_COUNT,
    t3_a_share_ids,
)
from qdsl.facts.demo.docs import doc_rows
from qdsl.facts.demo.projects import t1_projects, t2_projects, t3_bulk, tasks
from qdsl.facts.textindex import gram_rows

__all__ = [
    "DEMO_NOW",
    "DEMO_SEED",
    "DEMO_TENANTS",
    "T1_A_SHARE",
    "T1_A_SHARE_FRESH",
    "T1_A_SHARE_STALE",
    "T1_FAILED_RUNS",
    "T1_HK",
    "T1_HK_TEXT_ONLY",
    "T1_LATEST_FAILED_RUN",
    "T1_RUN_12_ERRORS",
    "T1_TASKS_OF_64",
    "T2_HK",
    "T2_US",
    "T2_US_STALE",
    "T3_PROJECT_COUNT",
    "T3_TASK_COUNT",
    "TABLE_ORDER",
    "DemoData",
    "build_demo",
    "t3_a_share_ids",
]


def _docs(b: Builder) -> None:
    for row in doc_rows():
        topic = row.pop("topic")
        passage = row.pop("passage")
        b.tables["docs"].append(row)
        if topic is not None:
            b.fact(
                row["tenant_id"],
                "doc",
                row["id"],
                "topic",
                topic,
                source_type="doc",
                source_ref=f"doc:{row['id']}#p{passage}",
                observed_at=ts("2026-10-01"),
                confidence=1.0,
            )


def _grams(b: Builder, catalog: Catalog) -> None:
    for entity_type, spec in catalog.entities.items():
        for row in b.tables.get(spec.table, []):
            b.tables["text_grams"].extend(
                gram_rows(
                    row["tenant_id"],
                    entity_type,
                    row[spec.id],
                    [row.get(c) for c in spec.text_search],
                )
            )


def build_demo(catalog: Catalog | None = None) -> DemoData:
    """Every demo row of every tenant; text_grams follow `catalog`'s text_search columns."""
    b = Builder()
    t1_projects(b)
    t2_projects(b)
    t3_bulk(b)
    tasks(b)
    _docs(b)
    runs_and_signals(b)
    users_and_configs(b)
    _grams(b, catalog or demo_catalog())
    return DemoData(tables=b.tables)
