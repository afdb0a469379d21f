"""Conditions across declared relations as correlated EXISTS subqueries.

`customer.city = "Berlin"` on orders holds for an order when some customer row
related to it through the path satisfies the condition; `payments.method =
"refund"` when some payment of the order does. Whatever the cardinality, the
related rows are only tested, never joined into the main rows, so a row with
several related rows is still one row. Every table of the path is bound to the
caller's tenant here (`:tenant_id`), as the main table is by the statement:
a related row of another tenant never makes a row match. Table aliases are
numbered per filter and step, so a relation back to the same table is safe.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import sqlalchemy as sa
from sqlalchemy.sql.elements import ColumnElement

from qdsl.dsl.bound import BoundFilter
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog.relations import RelationStep
from qdsl.executor import names as N
from qdsl.executor.predicates import Params, column_condition
from qdsl.executor.tables import EntityTable, entity_table
from qdsl.facts.storage import Storage


def related_condition(
    bf: BoundFilter,
    main: EntityTable,
    catalog: Catalog,
    p: Params,
    storage: Storage | None = None,
) -> ColumnElement[bool]:
    """EXISTS a tenant-bound row at the end of the filter's relation path that
    satisfies the filter, correlated to the main row."""
    assert bf.path, "a related condition needs a relation path"
    here, froms, conds = _walk(bf.path, f"rel{bf.index}", main, catalog, p, storage=storage)
    if bf.related_rows:
        # `payments is null`: no related row at all; `is not null`: some row
        found = sa.exists(sa.select(here.id).select_from(*froms).where(*conds))
        return found if bf.filter.value is False else ~found
    conds.append(column_condition(bf, here, p))
    return sa.exists(sa.select(here.id).select_from(*froms).where(*conds))


def _walk(
    path: tuple[RelationStep, ...],
    prefix: str,
    main: EntityTable,
    catalog: Catalog,
    p: Params,
    *,
    storage: Storage | None,
) -> tuple[EntityTable, list[Any], list[ColumnElement[bool]]]:
    """The tables of a relation path, aliased `<prefix>_<hop>`, and the conditions
    joining each to the one before and binding it to the caller's tenant; the last
    table reached."""
    tenant = p(N.TENANT, type_=sa.Text())
    here = main
    froms: list[Any] = []
    conds: list[ColumnElement[bool]] = []
    for hop, step in enumerate(path):
        base = entity_table(catalog, step.target, storage)
        alias = base.table.alias(f"{prefix}_{hop}")
        there = dataclasses.replace(base, table=alias)  # type: ignore[arg-type]
        froms.append(alias)
        conds.append(there.col(step.target_column) == here.col(step.source_column))
        conds.append(there.col(step.target_tenant) == tenant)
        here = there
    return here, froms, conds


def related_value(
    path: tuple[RelationStep, ...],
    column: str,
    main: EntityTable,
    catalog: Catalog,
    p: Params,
    *,
    storage: Storage | None = None,
) -> ColumnElement[Any]:
    """The value of `column` of the row a main row reaches through many-to-one
    steps (the order's customer's city): a correlated scalar subquery, every table
    of the path bound to the caller's tenant, NULL where no related row is found.
    A declared many-to-one key names one row; LIMIT 1 keeps a key the data
    repeats from failing the whole answer ("more than one row returned by a
    subquery"). (An aggregate such as max() would not do: PostgreSQL has none
    for a boolean.)"""
    here, froms, conds = _walk(path, f"val_{column}", main, catalog, p, storage=storage)
    found = sa.select(here.col(column)).select_from(*froms).where(*conds)
    return found.limit(p(N.ONE_ROW, type_=sa.Integer())).scalar_subquery()
