"""`catalog init` on the shop's normalized schema drafts its relations and measures,
and `catalog check` passes the draft's relations and measures (SQLite, PostgreSQL)."""

from __future__ import annotations

import tomllib

import sqlalchemy as sa

from qdsl.dsl.catalog import Cardinality, catalog_from_mapping, relation_path
from qdsl.facts.check import check_catalog
from qdsl.facts.db import make_engine
from qdsl.facts.scaffold import draft_catalog
from qdsl.facts.scaffold_analytics import plural

TABLES = ["customers", "products", "orders", "order_lines", "payments"]


def test_the_draft_declares_relations_from_foreign_keys_and_measures(shop_url: str) -> None:
    engine = make_engine(shop_url)
    try:
        draft = draft_catalog(engine, TABLES)
        catalog = catalog_from_mapping(tomllib.loads(draft.toml))
        report = check_catalog(engine, catalog)
    finally:
        engine.dispose()
    relations = {
        (name, rname): (rel.entity, rel.key, rel.inverse)
        for name, e in catalog.entities.items()
        for rname, rel in e.relations.items()
    }
    assert relations == {
        ("order", "customer"): ("customer", "customer_id", "orders"),
        ("order_line", "order"): ("order", "order_id", "order_lines"),
        ("order_line", "product"): ("product", "product_id", "order_lines"),
        ("payment", "order"): ("order", "order_id", "payments"),
    }
    two = relation_path(catalog, "customer", ["orders", "payments"])
    assert [s.cardinality for s in two] == [Cardinality.ONE_TO_MANY, Cardinality.ONE_TO_MANY]
    aggregated = {
        f"{n}.{f}"
        for n, e in catalog.entities.items()
        for f, s in e.fields.items()
        if s.aggregations
    }
    assert aggregated == {
        "order_line.quantity",
        "order_line.unit_price",
        "payment.amount",
        "product.list_price",
    }
    grained = {
        f"{n}.{f}" for n, e in catalog.entities.items() for f, s in e.fields.items() if s.grains
    }
    assert grained == {"customer.signed_up", "order.ordered_at", "payment.paid_at"}
    assert catalog.entities["order"].measures["order_count"].function == "count"
    assert catalog.timezone == "UTC"
    assert "`relations`" in draft.toml and "`aggregations`" in draft.toml  # the header says so
    assert [f for f in report.findings if f.rule in ("relations", "measures")] == []


def test_a_foreign_key_off_the_id_drafts_no_relation(tmp_path: object) -> None:
    url = f"sqlite+pysqlite:///{tmp_path}/odd.sqlite3"
    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            conn.execute(
                sa.text(
                    "CREATE TABLE teams (tenant_id TEXT NOT NULL, id INTEGER NOT NULL, "
                    "code VARCHAR(8) NOT NULL, name VARCHAR(40), PRIMARY KEY (tenant_id, id), "
                    "UNIQUE (tenant_id, code))"
                )
            )
            conn.execute(
                sa.text(
                    "CREATE TABLE players (tenant_id TEXT NOT NULL, id INTEGER NOT NULL, "
                    "name VARCHAR(40), team_code VARCHAR(8), score INTEGER, jersey_no INTEGER, "
                    "PRIMARY KEY (tenant_id, id), "
                    "FOREIGN KEY (tenant_id, team_code) REFERENCES teams (tenant_id, code))"
                )
            )
        draft = draft_catalog(engine, ["teams", "players"])
    finally:
        engine.dispose()
    catalog = catalog_from_mapping(tomllib.loads(draft.toml))
    assert catalog.entities["player"].relations == {}
    assert any("not the id of team; no relation drafted" in n for n in draft.notes)
    fields = catalog.entities["player"].fields
    assert fields["score"].aggregations and not fields["jersey_no"].aggregations


def test_inverse_names_are_plural() -> None:
    assert [plural(n) for n in ("order", "category", "address", "day", "box")] == [
        "orders",
        "categories",
        "addresses",
        "days",
        "boxes",
    ]
