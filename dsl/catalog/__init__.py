"""The catalog: the whitelist of what a plan may name (docs/catalog.md).

A TOML file maps entity types onto real tables. It is validated on load and
every problem is reported at once, each naming the file and the dotted key.
Nothing outside the catalog can be queried: the normalizer binds plan names
against it and the executor takes every SQL identifier from it.

The package is split by stage: `types` (the vocabulary), `specs` (fields,
measures, relations, entities), `model` (the catalog), `relations` (join
steps and `relation_path`), `checks` and `analytics` (what the loader
refuses), `load` (TOML to a catalog, the demo's, the resolved one).
"""

from __future__ import annotations

from qdsl.dsl.catalog.load import (
    catalog_from_mapping,
    demo_catalog,
    load_catalog,
    resolve_catalog,
)
from qdsl.dsl.catalog.model import DEFAULT_TIMEZONE, Catalog, FactsSpec
from qdsl.dsl.catalog.relations import (
    MAX_HOPS,
    RelationPathError,
    RelationStep,
    relation_named,
    relation_path,
    rows_path,
)
from qdsl.dsl.catalog.specs import EntitySpec, FieldSpec, MeasureSpec, RelationSpec
from qdsl.dsl.catalog.types import (
    EVIDENCE_PROJECTION,
    OPERATORS_BY_TYPE,
    AliasGroup,
    Cardinality,
    CatalogError,
    FieldType,
    alias_index,
)
from qdsl.dsl.grain import Grain
from qdsl.dsl.ir import Aggregation

__all__ = [
    "DEFAULT_TIMEZONE",
    "EVIDENCE_PROJECTION",
    "MAX_HOPS",
    "OPERATORS_BY_TYPE",
    "Aggregation",
    "AliasGroup",
    "Cardinality",
    "Catalog",
    "CatalogError",
    "EntitySpec",
    "FactsSpec",
    "FieldSpec",
    "FieldType",
    "Grain",
    "MeasureSpec",
    "RelationPathError",
    "RelationSpec",
    "RelationStep",
    "alias_index",
    "catalog_from_mapping",
    "demo_catalog",
    "load_catalog",
    "relation_named",
    "relation_path",
    "resolve_catalog",
    "rows_path",
]
