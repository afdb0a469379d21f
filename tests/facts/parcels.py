"""A small second deployment (a parcel carrier) for the catalog check, secure and init tests.

Its own tables beside qdsl's, its own catalog; nothing here is the demo.
`fresh_parcels(url)` migrates qdsl's tables into the database and creates and
fills the carrier's table.
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import sqlalchemy as sa

from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import make_engine, upgrade

CATALOG_TOML = """
[facts]
table = "semantic_facts"

[entities.parcel]
table = "parcels"
id = "ref"
tenant = "account"
label = "title"
default_projection = ["ref", "title", "carrier"]
query_types = ["existence", "count", "list", "status"]
sorts = ["sent_at", "weight_kg"]

[entities.parcel.fields.carrier]
column = "carrier"
type = "enum"
values = ["dhl", "ups"]
operators = ["equals", "in"]

[entities.parcel.fields.weight_kg]
column = "weight_kg"
type = "number"
operators = ["gt", "lt"]

[entities.parcel.fields.sent_at]
column = "sent_at"
type = "datetime"
operators = ["gt", "lt"]

[entities.parcel.fields.recipient_email]
column = "recipient_email"
type = "text"
operators = ["equals"]
sensitive = true

[entities.parcel.fields.destination]
fact = "destination"
operators = ["equals"]
"""

meta = sa.MetaData()
parcels = sa.Table(
    "parcels",
    meta,
    sa.Column("account", sa.String(40), nullable=False),
    sa.Column("ref", sa.String(40), nullable=False),
    sa.Column("title", sa.String(200), nullable=False),
    sa.Column("carrier", sa.String(16), nullable=False),
    sa.Column("weight_kg", sa.Float, nullable=True),
    sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
    sa.Column("recipient_email", sa.String(200), nullable=True),
    # No primary key on purpose: the duplicate-id fault must be insertable.
    sa.Index("ix_parcels_account_ref", "account", "ref"),
    sa.Index("ix_parcels_sent_at", "sent_at"),
)

ROWS = [
    ("acme", "P-1", "Lab samples", "dhl", 1.5, "a@acme.test"),
    ("acme", "P-2", "Spare parts", "ups", 12.0, "b@acme.test"),
    ("acme", "P-3", "Catalogue", "dhl", 0.4, None),
    ("zeta", "P-1", "Furniture", "ups", 80.0, "c@zeta.test"),
]


def write_catalog(directory: Path, text: str = CATALOG_TOML) -> Path:
    path = directory / "parcels.toml"
    path.write_text(text, encoding="utf-8")
    return path


def parcels_catalog(directory: Path, text: str = CATALOG_TOML) -> Catalog:
    return load_catalog(write_catalog(directory, text))


def fresh_parcels(url: str) -> sa.Engine:
    upgrade(url)
    engine = make_engine(url)
    sent = datetime(2026, 11, 1, tzinfo=UTC)
    facts = sa.table(
        "semantic_facts",
        *(
            sa.column(c)
            for c in (
                "tenant_id",
                "entity_type",
                "entity_id",
                "predicate",
                "value_text",
                "value_norm",
                "source_type",
                "observed_at",
            )
        ),
    )
    with engine.begin() as conn:
        meta.create_all(conn)
        conn.execute(
            parcels.insert(),
            [
                dict(
                    account=a,
                    ref=r,
                    title=t,
                    carrier=c,
                    weight_kg=w,
                    sent_at=sent,
                    recipient_email=e,
                )
                for a, r, t, c, w, e in ROWS
            ],
        )
        conn.execute(
            facts.insert(),
            [
                dict(
                    tenant_id=a,
                    entity_type="parcel",
                    entity_id=r,
                    predicate="destination",
                    value_text=city,
                    value_norm=normalize_text(city),
                    source_type="manifest",
                    observed_at=sent,
                )
                for (a, r, *_), city in zip(
                    ROWS, ["Berlin", "Ｏｓｌｏ", "Lyon", "Kraków"], strict=True
                )
            ],
        )
    return engine
