"""A breakdown key across many-to-one relations (`customer.tier`, `customer`): the
related row's value, or its id with its label, for each main row.

Each is `related_value`'s correlated scalar subquery (every table of the path bound
to the caller's tenant), computed once per row in the breakdown's members
subquery; a row whose related row is missing, or of another tenant, falls in the
NULL group. A time field of the related entity is cut into periods as the
entity's own would be (`grains.period_of`, its column's storage, the catalog's
zone). The path was bound by the normalizer (`dsl.normalize.related_grouping`);
it is resolved again here through the declared relations only.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from sqlalchemy.sql.elements import ColumnElement

from qdsl.dsl.catalog import Catalog, EntitySpec, Grain
from qdsl.dsl.normalize.related_grouping import grouping_path, is_related_grouping
from qdsl.executor.grains import is_time, period_of
from qdsl.executor.predicates import Params, is_text
from qdsl.executor.related_sql import related_value
from qdsl.executor.tables import EntityTable, entity_table
from qdsl.facts.storage import Storage

__all__ = ["RelatedKey", "is_related_grouping", "related_key", "sorts_as_text"]


@dataclass(frozen=True)
class RelatedKey:
    """A related grouping's key per main row, and the label it is shown by (the
    related object's, when the grouping is the object itself)."""

    key: ColumnElement[Any]
    label: ColumnElement[Any] | None


def related_key(
    field: str,
    grain: Grain | None,
    main: EntityTable,
    catalog: Catalog,
    p: Params,
    *,
    dialect: str,
    storage: Storage | None = None,
) -> RelatedKey:
    steps, last = grouping_path(catalog, main.spec, field)
    target: EntitySpec = catalog.entities[steps[-1].target]
    if last is None:
        key = related_value(steps, target.id, main, catalog, p, storage=storage)
        label = related_value(steps, target.label, main, catalog, p, storage=storage)
        return RelatedKey(key, label)
    name = target.names.get(last, last)
    column = target.column_for(name)
    assert column is not None  # the normalizer keeps column fields only
    value = related_value(steps, column, main, catalog, p, storage=storage)
    kind = target.fields[name].type
    if not is_time(kind):
        return RelatedKey(value, None)
    stored = entity_table(catalog, target.name, storage).stored.get(column)
    period = period_of(
        value, kind, stored=stored, grain=grain, zone=catalog.timezone, dialect=dialect
    )
    return RelatedKey(period, None)


def sorts_as_text(
    field: str, main: EntitySpec, catalog: Catalog, storage: Storage | None = None
) -> bool:
    """Whether the related key is a text column (sorted in byte order on PostgreSQL)."""
    steps, last = grouping_path(catalog, main, field)
    target = catalog.entities[steps[-1].target]
    column = target.id if last is None else target.column_for(target.names.get(last, last))
    return column is not None and is_text(entity_table(catalog, target.name, storage), column)
