"""Entity column types come from the catalog, whatever tables the demo has."""

from __future__ import annotations

import sqlalchemy as sa

from qdsl.dsl.catalog import catalog_from_mapping
from qdsl.executor.tables import entity_table


def test_a_table_named_like_a_demo_table_is_typed_by_its_catalog() -> None:
    # The demo also has a `projects` table with a numeric `budget`; this
    # deployment's `projects` is another table, and its catalog says text.
    catalog = catalog_from_mapping(
        {
            "entities": {
                "grant": {
                    "table": "projects",
                    "label": "title",
                    "query_types": ["list"],
                    "fields": {
                        "budget": {"column": "budget", "type": "text", "operators": ["equals"]},
                        "awarded": {"column": "awarded", "type": "date", "operators": ["gt"]},
                    },
                }
            }
        }
    )
    table = entity_table(catalog, "grant").table
    assert isinstance(table.c.budget.type, sa.Text)
    assert table.c.awarded.type.python_type is not str
    assert isinstance(table.c.title.type, sa.Text)
