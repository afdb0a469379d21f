"""Lightweight table clauses built from catalog names only.

The executor never reflects the database and never takes a name from a plan:
every identifier in a compiled statement comes from here, and everything here
comes from the catalog (entity tables and columns) or from the fixed shape of
`semantic_facts` / `text_grams` (docs/catalog.md). Column types matter only for binding
and reading values (UTC datetimes, floats): an entity column's comes from its
catalog field type, whatever deployment the catalog describes; the facts table's
from qdsl's own schema.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.expression import ColumnClause, TableClause
from sqlalchemy.types import TypeEngine

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldType
from qdsl.facts.tables import UtcDateTime, semantic_facts

FACT_COLUMNS: tuple[str, ...] = (
    "id",
    "tenant_id",
    "entity_type",
    "entity_id",
    "predicate",
    "value_text",
    "value_norm",
    "value_num",
    "source_type",
    "source_ref",
    "confidence",
    "observed_at",
    "valid_until",
)
GRAMS_TABLE = "text_grams"
GRAM_COLUMNS: tuple[str, ...] = ("tenant_id", "entity_type", "gram", "entity_id")

_TYPE_FOR: dict[FieldType, TypeEngine[Any]] = {
    FieldType.TEXT: sa.Text(),
    FieldType.ENUM: sa.Text(),
    FieldType.ID: sa.Text(),
    FieldType.NUMBER: sa.Float(),
    FieldType.DATE: UtcDateTime(),
    FieldType.DATETIME: UtcDateTime(),
    FieldType.BOOL: sa.Boolean(),
}
TEXT_TYPES = frozenset({FieldType.TEXT, FieldType.ENUM, FieldType.ID})


@dataclass(frozen=True)
class EntityTable:
    """The table clause of one entity plus what the compiler needs to know of its columns."""

    spec: EntitySpec
    table: TableClause
    # column name -> field type, where known; None means "type unknown, no collation"
    kinds: dict[str, FieldType | None]

    def col(self, name: str) -> ColumnClause[object]:
        return self.table.c[name]

    @property
    def id(self) -> ColumnClause[object]:
        return self.table.c[self.spec.id]

    @property
    def tenant(self) -> ColumnClause[object]:
        return self.table.c[self.spec.tenant]

    @property
    def label(self) -> ColumnClause[object]:
        return self.table.c[self.spec.label]


def entity_columns(spec: EntitySpec) -> dict[str, FieldType | None]:
    """Every column of the entity the catalog names, with its type where known."""
    kinds: dict[str, FieldType | None] = {spec.tenant: FieldType.TEXT, spec.id: FieldType.ID}
    kinds[spec.label] = FieldType.TEXT
    for name in spec.text_search:
        kinds[name] = FieldType.TEXT
    for fspec in spec.fields.values():
        if fspec.column is not None:
            kinds[fspec.column] = fspec.type
    for name in (*spec.default_projection, *spec.sorts):
        if name not in kinds:
            known = spec.fields.get(name)
            kinds[name] = known.type if known is not None and known.column else None
    return kinds


def _column_type(kind: FieldType | None) -> TypeEngine[Any] | None:
    """The bind/result type of an entity column: from its catalog field type only
    (a deployment's tables are its own; none of them is known here)."""
    return _TYPE_FOR[kind] if kind is not None else None


# Catalogs are unhashable (they hold dicts), and a deployment catalog is loaded
# afresh per call (`resolve_catalog` with QDSL_CATALOG): key them by content, so
# equal catalogs share statements and no catalog object is kept alive. The key
# is memoized per live catalog object (weakly, by id, checked by identity).
_KEYS: dict[int, tuple[weakref.ref[Catalog], str]] = {}
_TABLES: dict[str, dict[str, EntityTable]] = {}


def catalog_key(catalog: Catalog) -> str:
    """A content key for a catalog, usable in cache keys."""
    entry = _KEYS.get(id(catalog))
    if entry is not None and entry[0]() is catalog:
        return entry[1]
    key = catalog.content_key
    _KEYS[id(catalog)] = (weakref.ref(catalog), key)
    weakref.finalize(catalog, _forget, id(catalog), key)
    if key not in _TABLES:
        _TABLES[key] = _build_entity_tables(catalog)
    return key


def _forget(object_id: int, key: str) -> None:
    entry = _KEYS.get(object_id)
    if entry is not None and entry[1] == key and entry[0]() is None:
        del _KEYS[object_id]


def _entity_tables(catalog: Catalog) -> dict[str, EntityTable]:
    return _TABLES[catalog_key(catalog)]


def _build_entity_tables(catalog: Catalog) -> dict[str, EntityTable]:
    out: dict[str, EntityTable] = {}
    for name, spec in catalog.entities.items():
        kinds = entity_columns(spec)
        cols = [sa.column(c, _column_type(k)) for c, k in kinds.items()]
        out[name] = EntityTable(spec=spec, table=sa.table(spec.table, *cols), kinds=kinds)
    return out


def entity_table(catalog: Catalog, entity_type: str) -> EntityTable:
    return _entity_tables(catalog)[entity_type]


@lru_cache(maxsize=16)
def facts_table(name: str) -> TableClause:
    """The catalog's facts table, with the column types of qdsl's own schema."""
    return sa.table(name, *(sa.column(c, semantic_facts.c[c].type) for c in FACT_COLUMNS))


@lru_cache(maxsize=1)
def grams_table() -> TableClause:
    return sa.table(GRAMS_TABLE, *(sa.column(c, sa.Text()) for c in GRAM_COLUMNS))
