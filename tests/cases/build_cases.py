"""Write tests/cases/demo.toml, tickets.toml and shop.toml from the rows (run after changing data).

    .venv/bin/python tests/cases/build_cases.py

The expectations come from cases.demo_oracle / tickets_oracle / shop_oracle: filters
written by hand over rows read with sqlite3, never qdsl's answers.
tests/facade/test_eval_cases.py fails when a file no longer matches its rows.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
if __name__ == "__main__":
    sys.path.insert(0, str(HERE.parent))

from cases import (  # noqa: E402
    demo_oracle,
    demo_rows,
    shop_oracle,
    shop_rows,
    tickets_oracle,
    tickets_rows,
)
from deployments.fixtures import TICKETS_CATALOG, build_tickets_database  # noqa: E402
from deployments.shop import build_shop_database  # noqa: E402

from qdsl.facts.demo.setup import ensure_demo  # noqa: E402

DEMO_FILE = HERE / "demo.toml"
TICKETS_FILE = HERE / "tickets.toml"
SHOP_FILE = HERE / "shop.toml"


def demo_text(demo_sqlite: str) -> str:
    return demo_oracle.build(demo_rows.load(demo_sqlite)).toml(demo_oracle.HEADER)


def tickets_text(tickets_sqlite: str) -> str:
    data = tickets_rows.load(tickets_sqlite, TICKETS_CATALOG)
    return tickets_oracle.build(data).toml(tickets_oracle.HEADER)


def shop_text(shop_sqlite: str) -> str:
    return shop_oracle.build(shop_rows.load(shop_sqlite)).toml(shop_oracle.HEADER)


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        demo, tickets = Path(tmp) / "demo.sqlite3", Path(tmp) / "tickets.sqlite3"
        ensure_demo(f"sqlite+pysqlite:///{demo}")
        build_tickets_database(f"sqlite+pysqlite:///{tickets}")
        DEMO_FILE.write_text(demo_text(str(demo)), encoding="utf-8")
        TICKETS_FILE.write_text(tickets_text(str(tickets)), encoding="utf-8")
        shop = Path(tmp) / "shop.sqlite3"
        build_shop_database(f"sqlite+pysqlite:///{shop}")
        SHOP_FILE.write_text(shop_text(str(shop)), encoding="utf-8")


if __name__ == "__main__":
    main()
