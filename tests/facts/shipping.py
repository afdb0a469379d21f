"""A deployer's own schema and catalog, of another domain than the demo: shipments.

Written as a deployer would: its own table and column names (`org`, `ship_no`,
`modified`), string ids, a carrier and a customer marked `link_values`, a city
that links only while its vocabulary is small, a long free-text body searched
through the text index, and a fact field (`cargo`) whose absence in
semantic_facts sends a plan to the text fallback.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, catalog_from_mapping
from qdsl.facts.db import make_engine, upgrade

CATALOG_TOML = """
[entities.shipment]
table = "shipments"
id = "ship_no"
tenant = "org"
label = "customer"
text_search = ["customer", "body"]
default_projection = ["ship_no", "customer", "carrier"]
query_types = ["existence", "count", "list", "status"]
sorts = ["modified"]
updated_at = "modified"
synonyms = ["运单", "shipment", "shipments"]

[entities.shipment.fields.carrier]
column = "carrier"
type = "text"
operators = ["equals", "in"]
link_values = true

[entities.shipment.fields.customer]
column = "customer"
type = "text"
operators = ["equals", "contains"]
link_values = true

[entities.shipment.fields.city]
column = "city"
type = "text"
operators = ["equals", "in"]

[entities.shipment.fields.body]
column = "body"
type = "text"
operators = ["contains"]

[entities.shipment.fields.cargo]
fact = "cargo"
operators = ["equals", "equals_or_alias"]

[entities.depot]
table = "depots"
id = "code"
tenant = "org"
label = "name"
query_types = ["existence", "count", "list"]
"""

META = sa.MetaData()
SHIPMENTS = sa.Table(
    "shipments",
    META,
    sa.Column("org", sa.String(64), primary_key=True),
    sa.Column("ship_no", sa.String(64), primary_key=True),
    sa.Column("customer", sa.String(200), nullable=False),
    sa.Column("carrier", sa.String(100)),
    sa.Column("city", sa.String(100)),
    sa.Column("body", sa.Text()),
    sa.Column("modified", sa.DateTime(timezone=True), nullable=False),
)
DEPOTS = sa.Table(
    "depots",
    META,
    sa.Column("org", sa.String(64), primary_key=True),
    sa.Column("code", sa.String(64), primary_key=True),
    sa.Column("name", sa.String(200), nullable=False),
)

T0 = datetime(2026, 11, 1, tzinfo=UTC)


def catalog() -> Catalog:
    import tomllib

    return catalog_from_mapping(tomllib.loads(CATALOG_TOML), source="shipping.toml")


def shipment(org: str, no: str, **values: Any) -> dict[str, Any]:
    row = {"org": org, "ship_no": no, "customer": f"customer {no}", "carrier": None}
    row.update({"city": None, "body": None, "modified": T0})
    row.update(values)
    return row


def create_schema(url: str) -> Engine:
    """qdsl's tables (db upgrade), then the deployer's own; on PostgreSQL the reader's grant."""
    upgrade(url)
    engine = make_engine(url)
    META.create_all(engine)
    if engine.dialect.name == "postgresql":
        with engine.begin() as conn:
            # What `qdsl db secure` will grant: the executor reads as qdsl_reader.
            conn.execute(sa.text("GRANT SELECT ON shipments, depots TO qdsl_reader"))
    return engine


def insert(engine: Engine, rows: Iterable[dict[str, Any]]) -> None:
    rows = list(rows)
    if rows:
        with engine.begin() as conn:
            conn.execute(SHIPMENTS.insert(), rows)


def wipe(engine: Engine) -> None:
    """Empty the deployer's rows and qdsl's indexes (between Hypothesis examples)."""
    from qdsl.facts.tables import index_state, text_grams, value_index

    with engine.begin() as conn:
        for table in (SHIPMENTS, DEPOTS, text_grams, value_index, index_state):
            conn.execute(table.delete())
