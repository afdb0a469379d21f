"""A second deployment for tests: support tickets, a domain unlike the demo's.

`ticket_database(url)` creates a `tickets` table beside qdsl's own tables (as
a deployer's database would hold) and, on PostgreSQL, grants it to the
reader role; `TICKETS` is its catalog.
"""

from __future__ import annotations

import tomllib
from pathlib import Path

from sqlalchemy import Column, Engine, MetaData, PrimaryKeyConstraint, String, Table, Text, text

from qdsl.dsl.catalog import Catalog, catalog_from_mapping

TICKETS_TOML = """
[entities.ticket]
table = "tickets"
id = "ticket_no"
tenant = "account"
label = "subject"
text_search = ["subject", "body"]
default_projection = ["ticket_no", "subject", "state"]
query_types = ["existence", "count", "list", "status"]
synonyms = ["ticket", "tickets", "工单"]

[entities.ticket.fields.state]
column = "state"
type = "enum"
values = ["open", "closed"]
operators = ["equals", "in"]

[entities.ticket.fields.area]
fact = "area"
operators = ["equals", "equals_or_alias", "contains"]
synonyms = ["area", "领域"]
aliases = { billing = ["billing", "invoices", "账单"] }

[entities.ticket.fields.priority]
fact = "priority"
type = "number"
operators = ["equals", "gt", "lt"]
"""
TICKETS: Catalog = catalog_from_mapping(tomllib.loads(TICKETS_TOML), source="tickets.toml")


def write_catalog(directory: Path) -> Path:
    path = directory / "tickets.toml"
    path.write_text(TICKETS_TOML, encoding="utf-8")
    return path


_meta = MetaData()
tickets = Table(
    "tickets",
    _meta,
    Column("account", String(64), nullable=False),
    Column("ticket_no", String(64), nullable=False),
    Column("subject", Text, nullable=False),
    Column("body", Text, nullable=True),
    Column("state", String(16), nullable=False),
    PrimaryKeyConstraint("account", "ticket_no"),
)


def ticket_database(engine: Engine) -> None:
    """The deployer's own table next to qdsl's (which `qdsl db upgrade` made)."""
    with engine.begin() as conn:
        _meta.create_all(conn)
        if conn.dialect.name == "postgresql":
            conn.execute(text("GRANT SELECT ON tickets TO qdsl_reader"))


def add_tickets(engine: Engine, account: str, *numbers: str) -> None:
    with engine.begin() as conn:
        conn.execute(
            tickets.insert(),
            [
                {"account": account, "ticket_no": n, "subject": f"ticket {n}", "state": "open"}
                for n in numbers
            ],
        )
