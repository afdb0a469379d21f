"""The shop deployment (tests/deployments/shop/) scaled up: N order lines over Zipf-skewed tenants.

Orders are shared out to tenants by Zipf's law (`dataset.zipf_sizes`), so the
largest tenant holds ~17% of every table and the smallest a few rows. Per
tenant: an order has 1–4 lines (2.5 on average, so N lines make N / 2.5
orders), nine in ten orders one payment, a customer ten orders, and forty
products. Values cycle through the catalog's vocabularies at uneven rates
(a filter keeps a half, a quarter or a tenth of the rows), dates spread over
two years. Built as a deployer builds the shop: its DDL, qdsl's own tables
(`upgrade`), `qdsl db secure` (reader role, row-level security), then the rows
by COPY as the owner, VACUUM and ANALYZE.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from pathlib import Path
from typing import Any

from benchmarks.dataset import tenant, zipf_sizes
from qdsl.dsl.catalog import Catalog, load_catalog
from qdsl.facts.db import READER_ROLE, make_engine, upgrade
from qdsl.facts.secure import secure

SHOP = Path(__file__).resolve().parents[1] / "tests" / "deployments" / "shop"
LINES_PER_ORDER = 2.5  # 1 + id % 4 lines
ORDERS_PER_CUSTOMER = 10
PRODUCTS = 40
CITIES = ("Berlin", "Hamburg", "Munich", "Cologne", "Leipzig", "Bremen", "Dresden", "Essen")
CATEGORIES = ("books", "electronics", "garden", "toys")
STATUSES = ("delivered", "delivered", "shipped", "delivered", "placed", "cancelled")
METHODS = ("card", "card", "paypal", "transfer")
START = datetime(2024, 1, 1)
MINUTES = 2 * 365 * 24 * 60

Row = tuple[Any, ...]


def shop_catalog() -> Catalog:
    return load_catalog(SHOP / "catalog.toml")


@dataclass(frozen=True)
class ShopShape:
    lines: int  # order lines in all (the largest table)
    tenants: int

    def orders(self) -> list[int]:
        """Orders per tenant, rank 0 the largest."""
        return zipf_sizes(max(self.tenants, round(self.lines / LINES_PER_ORDER)), self.tenants)


def _customers(t: str, count: int, rank: int) -> Iterator[Row]:
    for c in range(1, count + 1):
        yield (
            t,
            c,
            f"Customer {c}",
            CITIES[(c * 3 + rank) % len(CITIES)],
            "gold" if c % 5 == 0 else "standard",
            c % 3 == 0,
            date(2023, 1, 1) + timedelta(days=(c * 7) % 700),
        )


def _products(t: str) -> Iterator[Row]:
    for p in range(1, PRODUCTS + 1):
        yield (
            t,
            p,
            f"Product {p}",
            CATEGORIES[p % len(CATEGORIES)],
            Decimal(5 + p % 90) + Decimal("0.5"),
        )


def _orders(
    t: str, count: int, customers: int, rank: int
) -> Iterator[tuple[Row, list[Row], Row | None]]:
    line_id = 0
    for o in range(1, count + 1):
        at = START + timedelta(minutes=(o * 7919 + rank * 131) % MINUTES)
        order = (
            t,
            o,
            f"{t}-{o}",
            (o * 31) % customers + 1,
            STATUSES[o % len(STATUSES)],
            "app" if o % 3 == 0 else "web",
            at,
        )
        lines = []
        for k in range(1 + o % 4):
            line_id += 1
            product = (o + k * 13) % PRODUCTS + 1
            lines.append(
                (
                    t,
                    line_id,
                    o,
                    product,
                    f"Product {product}",
                    1 + (o + k) % 5,
                    Decimal(5 + product % 90) + Decimal("0.5"),
                )
            )
        payment = None
        if o % 10:
            amount = sum((line[5] * line[6] for line in lines), Decimal(0))
            payment = (
                t,
                o,
                o,
                f"P-{o}",
                amount,
                METHODS[o % len(METHODS)],
                at + timedelta(hours=2),
                o % 20 == 1,
            )
        yield order, lines, payment


def _tenants(shape: ShopShape) -> Iterator[tuple[int, str, int, int]]:
    for rank, orders in enumerate(shape.orders()):
        yield rank, tenant(rank), orders, max(1, orders // ORDERS_PER_CUSTOMER)


def _schema() -> list[str]:
    text = "\n".join(
        line
        for line in (SHOP / "schema.sql").read_text(encoding="utf-8").splitlines()
        if not line.lstrip().startswith("--")
    )
    return [s.strip() for s in text.split(";") if s.strip()]


TABLES: dict[str, tuple[str, ...]] = {
    "customers": ("tenant_id", "id", "name", "city", "tier", "newsletter", "signed_up"),
    "products": ("tenant_id", "id", "name", "category", "list_price"),
    "orders": ("tenant_id", "id", "number", "customer_id", "status", "channel", "ordered_at"),
    "order_lines": (
        "tenant_id",
        "id",
        "order_id",
        "product_id",
        "title",
        "quantity",
        "unit_price",
    ),
    "payments": (
        "tenant_id",
        "id",
        "order_id",
        "reference",
        "amount",
        "method",
        "paid_at",
        "refunded",
    ),
}


def _rows(table: str, shape: ShopShape) -> Iterator[Row]:
    # one pass over the generator per table: regenerating is cheaper than holding 1M rows
    for rank, t, orders, customers in _tenants(shape):
        if table == "customers":
            yield from _customers(t, customers, rank)
        elif table == "products":
            yield from _products(t)
        else:
            for order, lines, payment in _orders(t, orders, customers, rank):
                if table == "orders":
                    yield order
                elif table == "order_lines":
                    yield from lines
                elif payment is not None:
                    yield payment


def load_shop_pg(url: str, shape: ShopShape) -> dict[str, int]:
    """The shop's tables built, secured and filled at `shape`; rows per table."""
    import psycopg
    from psycopg import sql

    from benchmarks.rawdb import conninfo

    engine = make_engine(url)
    try:
        with engine.begin() as conn:
            for statement in _schema():
                conn.exec_driver_sql(statement)
        upgrade(url)
        secure(engine, shop_catalog(), reader=READER_ROLE, apply=True)
    finally:
        engine.dispose()
    counts: dict[str, int] = {}
    with psycopg.connect(conninfo(url)) as pg, pg.cursor() as cur:
        for table, columns in TABLES.items():
            copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(
                sql.Identifier(table), sql.SQL(", ").join(map(sql.Identifier, columns))
            )
            n = 0
            with cur.copy(copy_sql) as copy:
                for row in _rows(table, shape):
                    copy.write_row(row)
                    n += 1
            counts[table] = n
    with psycopg.connect(conninfo(url), autocommit=True) as pg:
        # VACUUM too: a deployment's autovacuum has set the visibility map long since,
        # so its index-only scans (the tenant's baseline count) skip the heap
        pg.execute("VACUUM (ANALYZE)")
    return counts
