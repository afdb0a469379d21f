"""The demo catalog and the demo schema agree: every catalog name is a real column."""

from __future__ import annotations

from qdsl.dsl.catalog import demo_catalog
from qdsl.facts.demo.tables import TABLES_BY_NAME, TRIGRAM_COLUMNS
from qdsl.facts.tables import TABLES_BY_NAME as OWN_TABLES


def test_every_catalog_column_exists() -> None:
    catalog = demo_catalog()
    assert catalog.facts.table in OWN_TABLES
    for name, spec in catalog.entities.items():
        table = TABLES_BY_NAME[spec.table]
        columns = set(table.c.keys())
        named = {spec.id, spec.tenant, spec.label, *spec.text_search, *spec.sorts}
        named |= {spec.column_for(n) or n for n in spec.default_projection}
        named |= {f.column for f in spec.fields.values() if f.column}
        assert named <= columns, (name, named - columns)
        assert set(table.primary_key.columns.keys()) == {spec.tenant, spec.id}


def test_trigram_columns_are_the_text_search_columns() -> None:
    catalog = demo_catalog()
    assert {
        spec.table: tuple(spec.text_search) for spec in catalog.entities.values()
    } == TRIGRAM_COLUMNS
