"""The third deployment: an online shop, normalized (tests/deployments/shop/).

Customers, products, orders (-> customer), order lines (-> order, product) and
payments (-> order), INTEGER ids, DATE and TIMESTAMP columns, a boolean,
amounts on lines and on payments, two tenants with different rows and no view
doing a join. Its catalog declares measures, relations and grains. The rows
are written by `shop_data.py` into `data.sql`; a database is built the way a
deployer sets one up (`small.build`: DDL and data, qdsl's own tables, on
PostgreSQL `qdsl db secure`, then `qdsl index refresh`).

Fixtures (registered from tests/conftest.py): `shop_catalog`,
`shop_sqlite_path`, `shop_sqlite_url`, `shop_pg_url` (session-scoped built
databases), `shop_url` (once per dialect), `shop` (an engine on it with every
table's rows, for oracles) and `shop_engine` (an engine on the `dialect`
fixture's shop); `reached` follows relation steps over the rows.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
import sqlalchemy as sa
from deployments.small import build

from qdsl.dsl.catalog import Catalog, RelationStep, load_catalog

SHOP_DIR = Path(__file__).parent / "shop"
SHOP_CATALOG = SHOP_DIR / "catalog.toml"
SHOP_TENANTS: tuple[str, ...] = ("nordwind", "sunrise")
SHOP_TABLES = ("customers", "products", "orders", "order_lines", "payments")
Rows = dict[str, list[dict[str, Any]]]


def build_shop_database(url: str) -> None:
    build(SHOP_DIR, url)


@pytest.fixture(scope="session")
def shop_catalog() -> Catalog:
    return load_catalog(SHOP_CATALOG)


@pytest.fixture(scope="session")
def shop_sqlite_path(tmp_path_factory: pytest.TempPathFactory) -> str:
    path = tmp_path_factory.mktemp("shop-sqlite") / "shop.sqlite3"
    build_shop_database(f"sqlite+pysqlite:///{path}")
    return str(path)


@pytest.fixture(scope="session")
def shop_sqlite_url(shop_sqlite_path: str) -> str:
    return f"sqlite+pysqlite:///{shop_sqlite_path}"


@pytest.fixture(scope="session")
def shop_pg_url(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    build_shop_database(url)
    return url


@pytest.fixture(params=[pytest.param("sqlite"), pytest.param("postgresql", marks=pytest.mark.pg)])
def shop_url(request: pytest.FixtureRequest) -> str:
    name = "shop_sqlite_url" if request.param == "sqlite" else "shop_pg_url"
    return str(request.getfixturevalue(name))


@pytest.fixture
def shop_engine(dialect: str, request: pytest.FixtureRequest) -> Iterator[sa.Engine]:
    """An engine on the session's shop of the `dialect` fixture's database."""
    from qdsl.facts.db import make_engine

    url = request.getfixturevalue("shop_sqlite_url" if dialect == "sqlite" else "shop_pg_url")
    engine = make_engine(str(url))
    yield engine
    engine.dispose()


def reached(
    rows: Rows, row: dict[str, Any], steps: Sequence[RelationStep], *, same_tenant: bool = True
) -> list[dict[str, Any]]:
    """The rows `row` reaches through relation `steps`, as an oracle follows them: of
    its own tenant only, unless `same_tenant` is False (the careless join a test
    tells apart from the executor's)."""
    tenant = row["tenant_id"]
    frontier = [row]
    for step in steps:
        frontier = [
            r
            for f in frontier
            for r in rows[step.target_table]
            if r[step.target_column] == f[step.source_column]
            and (r["tenant_id"] == tenant or not same_tenant)
        ]
    return frontier


@pytest.fixture
def shop(shop_url: str) -> Iterator[tuple[sa.Engine, Rows]]:
    """An engine on the shop and every table's rows, as an oracle reads them."""
    from qdsl.facts.db import make_engine

    engine = make_engine(shop_url)
    with engine.connect() as conn:
        rows: Rows = {
            name: [dict(r) for r in conn.execute(sa.text(f"SELECT * FROM {name}")).mappings()]
            for name in SHOP_TABLES
        }
    yield engine, rows
    engine.dispose()
