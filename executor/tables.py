"""Lightweight table clauses built from catalog names only.

The executor never reflects the database and never takes a name from a plan:
every identifier in a compiled statement comes from here, and everything here
comes from the catalog (entity tables and columns) or from the fixed shape of
`semantic_facts` / `text_grams` (docs/catalog.md). Column types matter only for binding,
comparing and reading values: an entity column's comes from its catalog field type and,
where the database was asked (`qdsl.facts.storage`, reflected once per engine), how
the column is stored (`executor.column_types`); the facts table's from qdsl's own schema.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import BindParameter, ColumnElement
from sqlalchemy.sql.expression import ColumnClause, TableClause

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldType
from qdsl.executor import column_types as CT
from qdsl.facts.storage import Storage, Stored
from qdsl.facts.tables import semantic_facts

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

TEXT_TYPES = CT.TEXT_TYPES


@dataclass(frozen=True)
class EntityTable:
    """The table clause of one entity plus what the compiler needs to know of its columns."""

    spec: EntitySpec
    table: TableClause
    # column name -> field type, where known; None means "type unknown, no collation"
    kinds: dict[str, FieldType | None]
    # column name -> how it is stored, where the database was asked (None: unknown)
    stored: dict[str, Stored | None]

    def col(self, name: str) -> ColumnClause[object]:
        return self.table.c[name]

    @property
    def id(self) -> ColumnClause[object]:
        return self.table.c[self.spec.id]

    @property
    def row_id(self) -> ColumnElement[Any]:
        """The id as text, as results carry it and the facts and grams tables hold it."""
        return CT.as_text(self.id, self.stored.get(self.spec.id))

    def id_list(self, name: str) -> BindParameter[Any]:
        """An IN list of ids compared with the id column, in the column's own type."""
        return sa.bindparam(name, expanding=True, type_=self.id.type)

    def collatable(self, name: str) -> bool:
        return CT.collatable(self.kinds.get(name), self.stored.get(name))

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


# Catalogs are unhashable (they hold dicts), and a deployment catalog is loaded
# afresh per call (`resolve_catalog` with QDSL_CATALOG): key them by content, so
# equal catalogs share statements and no catalog object is kept alive. The key
# is memoized per live catalog object (weakly, by id, checked by identity).
_KEYS: dict[int, tuple[weakref.ref[Catalog], str]] = {}
_TABLES: dict[str, dict[str, EntityTable]] = {}
_STORED_TABLES: dict[tuple[str, Storage], dict[str, EntityTable]] = {}
_STORED_MAX = 64


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


def _entity_tables(catalog: Catalog, storage: Storage | None) -> dict[str, EntityTable]:
    key = catalog_key(catalog)
    if storage is None:
        return _TABLES[key]
    found = _STORED_TABLES.get((key, storage))
    if found is None:
        if len(_STORED_TABLES) >= _STORED_MAX:
            _STORED_TABLES.clear()
        found = _STORED_TABLES[(key, storage)] = _build_entity_tables(catalog, storage)
    return found


def _build_entity_tables(
    catalog: Catalog, storage: Storage | None = None
) -> dict[str, EntityTable]:
    out: dict[str, EntityTable] = {}
    for name, spec in catalog.entities.items():
        kinds = entity_columns(spec)
        # the columns a declared relation joins on, from either end
        for step in catalog.relation_steps.get(name, {}).values():
            kinds.setdefault(step.source_column, None)
        stored = {c: (storage.of(spec.table, c) if storage is not None else None) for c in kinds}
        cols = [sa.column(c, CT.column_type(k, stored[c])) for c, k in kinds.items()]
        out[name] = EntityTable(
            spec=spec, table=sa.table(spec.table, *cols), kinds=kinds, stored=stored
        )
    return out


def entity_table(catalog: Catalog, entity_type: str, storage: Storage | None = None) -> EntityTable:
    """The entity's table clause; with `storage`, its columns typed by how they are kept."""
    return _entity_tables(catalog, storage)[entity_type]


@lru_cache(maxsize=16)
def facts_table(name: str) -> TableClause:
    """The catalog's facts table, with the column types of qdsl's own schema."""
    return sa.table(name, *(sa.column(c, semantic_facts.c[c].type) for c in FACT_COLUMNS))


@lru_cache(maxsize=1)
def grams_table() -> TableClause:
    return sa.table(GRAMS_TABLE, *(sa.column(c, sa.Text()) for c in GRAM_COLUMNS))
