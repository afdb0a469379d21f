"""The demo deployment: its catalog (catalog.toml), schema (tables), rows (data) and set-up.

Used only by `qdsl demo`, the embedded default database and tests; product
code never imports it (tests/test_import_graph.py). Importing this package
loads no database code, so `qdsl.dsl.catalog.demo_catalog()` may read its
catalog.toml as a data file.
"""

from __future__ import annotations

from qdsl.facts.demo.constants import DEMO_NOW, DEMO_TENANTS

__all__ = ["DEMO_NOW", "DEMO_TENANTS"]
