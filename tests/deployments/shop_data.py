"""Write tests/deployments/shop/data.sql: the online shop's rows, deterministic.

    .venv/bin/python tests/deployments/shop_data.py

Two tenants with different customers, products and orders (both have
customers in Berlin, so a leak between them shows). Times are UTC between
09:00 and 17:00, so a day, a month or a year is the same in UTC and in the
catalog's zone (Europe/Berlin). Ids are small integers, unique per tenant.
"""

from __future__ import annotations

import random
from datetime import date, datetime, timedelta
from pathlib import Path

OUT = Path(__file__).parent / "shop" / "data.sql"

TENANTS = {
    "nordwind": {
        "prefix": "NW",
        "seed": 22,
        "customers": [
            ("Anna Schmidt", "Berlin", "gold", True, date(2024, 3, 4)),
            ("Jonas Weber", "Hamburg", "standard", False, date(2024, 6, 18)),
            ("Lena Fischer", "Berlin", "standard", True, date(2024, 11, 2)),
            ("Paul Becker", "Munich", "gold", False, date(2025, 1, 20)),
            ("Mia Wagner", "Cologne", "standard", True, date(2025, 2, 14)),
            ("Felix Hoffmann", "Berlin", "gold", True, date(2025, 5, 9)),
            ("Emma Schulz", "Hamburg", "standard", False, date(2025, 7, 30)),
            ("Noah Koch", "Munich", "standard", True, date(2025, 9, 12)),
            ("Sofia Richter", "Cologne", "gold", False, date(2025, 12, 1)),
            ("Ben Klein", "Berlin", "standard", False, date(2026, 2, 23)),
        ],
        "products": [
            ("Garden Hose", "garden", 24.50),
            ("Rose Shears", "garden", 18.90),
            ("Crime Novel", "books", 12.00),
            ("Cookbook", "books", 29.00),
            ("Headphones", "electronics", 89.00),
            ("Power Bank", "electronics", 39.50),
            ("Desk Lamp", "electronics", 45.00),
            ("Plant Pots", "garden", 15.50),
        ],
        "orders": 34,
    },
    "sunrise": {
        "prefix": "SR",
        "seed": 7,
        "customers": [
            ("Wang Fang", "Shanghai", "gold", True, date(2024, 4, 1)),
            ("Li Na", "Beijing", "standard", False, date(2024, 8, 8)),
            ("Zhang Wei", "Shanghai", "standard", True, date(2025, 3, 3)),
            ("Chen Jie", "Shenzhen", "gold", True, date(2025, 4, 21)),
            ("Liu Yang", "Berlin", "standard", False, date(2025, 6, 6)),
            ("Zhao Lei", "Beijing", "gold", False, date(2025, 10, 10)),
            ("Sun Mei", "Shenzhen", "standard", True, date(2026, 1, 15)),
        ],
        "products": [
            ("Smart Watch", "electronics", 199.00),
            ("Tablet", "electronics", 329.00),
            ("Building Blocks", "toys", 49.90),
            ("Puzzle", "toys", 19.90),
            ("Travel Guide", "books", 22.00),
            ("Phone Case", "electronics", 14.50),
        ],
        "orders": 26,
    },
}
STATUSES = ["placed", "shipped", "delivered", "delivered", "delivered", "cancelled"]
CHANNELS = ["web", "web", "app"]
METHODS = ["card", "card", "paypal", "transfer"]
START = datetime(2025, 1, 6, 9)
END = datetime(2026, 6, 12, 9)


def _q(value: object) -> str:
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int | float):
        return f"{value:.2f}" if isinstance(value, float) else str(value)
    if isinstance(value, datetime):
        return f"'{value:%Y-%m-%d %H:%M:%S}.000000'"
    if isinstance(value, date):
        return f"'{value:%Y-%m-%d}'"
    return "'" + str(value).replace("'", "''") + "'"


def _insert(table: str, row: dict[str, object]) -> str:
    cols = ", ".join(row)
    vals = ", ".join(_q(v) for v in row.values())
    return f"INSERT INTO {table} ({cols}) VALUES ({vals});"


def tenant_rows(tenant: str, spec: dict[str, object]) -> list[str]:
    rng = random.Random(spec["seed"])  # type: ignore[arg-type]
    out: list[str] = [f"-- {tenant}"]
    prefix = spec["prefix"]
    customers: list = spec["customers"]  # type: ignore[assignment]
    products: list = spec["products"]  # type: ignore[assignment]
    for i, (name, city, tier, news, signed) in enumerate(customers, 1):
        row = {"tenant_id": tenant, "id": i, "name": name, "city": city, "tier": tier}
        out.append(_insert("customers", {**row, "newsletter": news, "signed_up": signed}))
    for i, (name, category, price) in enumerate(products, 1):
        row = {"tenant_id": tenant, "id": i, "name": name, "category": category}
        out.append(_insert("products", {**row, "list_price": float(price)}))
    n_orders: int = spec["orders"]  # type: ignore[assignment]
    span = (END - START).days
    days = sorted(rng.sample(range(span), n_orders))
    line_id = payment_id = 0
    for oid, day in enumerate(days, 1):
        at = START + timedelta(days=day, hours=rng.randrange(8), minutes=rng.randrange(60))
        status = rng.choice(STATUSES)
        # the newest orders are still on their way
        if at > END - timedelta(days=20):
            status = rng.choice(["placed", "shipped"])
        customer = rng.randrange(1, len(customers) + 1)
        out.append(
            _insert(
                "orders",
                {
                    "tenant_id": tenant,
                    "id": oid,
                    "number": f"{prefix}-{1000 + oid}",
                    "customer_id": customer,
                    "status": status,
                    "channel": rng.choice(CHANNELS),
                    "ordered_at": at,
                },
            )
        )
        total = 0.0
        for product in rng.sample(range(1, len(products) + 1), rng.randint(1, 3)):
            line_id += 1
            qty = rng.randint(1, 4)
            base = float(products[product - 1][2])
            # a discount now and then: the line's price is not always the list price
            price = round(base * rng.choice([1.0, 1.0, 1.0, 0.9]), 2)
            total += qty * price
            out.append(
                _insert(
                    "order_lines",
                    {
                        "tenant_id": tenant,
                        "id": line_id,
                        "order_id": oid,
                        "product_id": product,
                        "title": products[product - 1][0],
                        "quantity": qty,
                        "unit_price": price,
                    },
                )
            )
        if status == "placed" and rng.random() < 0.6:
            continue  # not paid yet
        parts = [round(total, 2)]
        if total > 150 and rng.random() < 0.4:  # paid in two parts
            first = round(total * 0.5, 2)
            parts = [first, round(total - first, 2)]
        for k, amount in enumerate(parts):
            payment_id += 1
            paid = at + timedelta(hours=2 + 26 * k)
            out.append(
                _insert(
                    "payments",
                    {
                        "tenant_id": tenant,
                        "id": payment_id,
                        "order_id": oid,
                        "reference": f"{prefix}-P{5000 + payment_id}",
                        "amount": amount,
                        "method": rng.choice(METHODS),
                        "paid_at": paid,
                        "refunded": status == "cancelled" or rng.random() < 0.05,
                    },
                )
            )
    return out


def main() -> None:
    lines = [
        "-- The online shop's data (written by tests/deployments/shop_data.py: run it, never",
        "-- edit by hand). Two tenants; times UTC, 'YYYY-MM-DD HH:MM:SS.ffffff'.",
        "",
    ]
    for tenant, spec in TENANTS.items():
        lines += tenant_rows(tenant, spec)
        lines.append("")
    OUT.write_text("\n".join(lines), encoding="utf-8")


if __name__ == "__main__":
    main()
