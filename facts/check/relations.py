"""Relations and measures against the live schema (docs/catalog.md, "Relations").

For each declared relation: both key columns exist, their types can be
compared (an INTEGER key never joins a VARCHAR id), the target key is unique
within a tenant (a primary key, a unique constraint or a unique index, which
the finding names; without one a many-to-one join could multiply rows), and
the source key leads an index (a warning: joins read every row without one).
For each aggregation and measure that needs a number: its column is numeric.
One finding per problem, each naming the catalog key and what to do.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import inspect

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog.relations import key_column, target_column
from qdsl.dsl.catalog.types import NUMERIC_AGGREGATIONS
from qdsl.facts.check.findings import CheckContext, Finding, Level
from qdsl.facts.storage import Stored, classify

_NUMBERS = frozenset({Stored.INTEGER, Stored.NUMERIC, Stored.FLOAT4, Stored.FLOAT})
_TEXTS = frozenset({Stored.STRING, Stored.LABEL})


def _family(stored: Stored) -> str:
    if stored in _NUMBERS:
        return "number"
    if stored in _TEXTS:
        return "text"
    return stored.value


def relations(ctx: CheckContext) -> list[Finding]:
    out: list[Finding] = []
    keys = _KeyIndex(ctx)
    for name, e in ctx.catalog.entities.items():
        for rname, rel in e.relations.items():
            if rel.entity in ctx.catalog.entities:
                out.extend(_check_relation(ctx, keys, name, rname))
    return out


def _check_relation(ctx: CheckContext, keys: _KeyIndex, name: str, rname: str) -> list[Finding]:
    e = ctx.catalog.entities[name]
    rel = e.relations[rname]
    target = ctx.catalog.entities[rel.entity]
    where = f"entities.{name}.relations.{rname}"
    source_col, target_col = key_column(e, rel.key), target_column(target, rel)
    found: list[Finding] = []

    def finding(level: Level, message: str, fix: str, table: str, column: str) -> None:
        found.append(Finding("relations", level, f"{where}: {message}", fix, name, table, column))

    source_cols, target_cols = ctx.columns(e.table), ctx.columns(target.table)
    if source_cols is None or target_cols is None:
        return []  # columns_exist reports the missing table
    if source_col not in source_cols:
        finding(
            Level.ERROR,
            f"key column {source_col!r} is not a column of {e.table!r}",
            f"set {where}.key to a column of {e.table!r}",
            e.table,
            source_col,
        )
    if target_col not in target_cols:
        finding(
            Level.ERROR,
            f"target key column {target_col!r} is not a column of {target.table!r}",
            f"set {where}.target_key to the id column of {target.table!r}",
            target.table,
            target_col,
        )
    if found:
        return found
    left = classify(source_cols[source_col]["type"], ctx.dialect)
    right = classify(target_cols[target_col]["type"], ctx.dialect)
    if _family(left) != _family(right):
        finding(
            Level.ERROR,
            f"{e.table}.{source_col} ({left.value}) cannot be compared with "
            f"{target.table}.{target_col} ({right.value})",
            "give both key columns the same kind of type (both INTEGER, or both text)",
            e.table,
            source_col,
        )
    unique = keys.unique(target.table, target_col, target.tenant)
    if unique is None:
        finding(
            Level.ERROR,
            f"{target.table}.{target_col} is not unique within a tenant: a row of "
            f"{e.table!r} could join several rows of {target.table!r}",
            f"CREATE UNIQUE INDEX ON {target.table} ({target.tenant}, {target_col}) "
            "(or make it the primary key)",
            target.table,
            target_col,
        )
    if not keys.leads_index(e.table, source_col, e.tenant):
        finding(
            Level.WARNING,
            f"no index leads with {e.table}.{source_col}: a join reads every row",
            f"CREATE INDEX ON {e.table} ({e.tenant}, {source_col})",
            e.table,
            source_col,
        )
    return found


class _KeyIndex:
    """Primary keys, unique constraints and indexes of the catalog's tables, read once."""

    def __init__(self, ctx: CheckContext) -> None:
        self._ctx = ctx
        self._cache: dict[str, list[tuple[str, tuple[str, ...], bool]]] = {}

    def _keys(self, table: str) -> list[tuple[str, tuple[str, ...], bool]]:
        """(name, columns, unique) for the primary key, unique constraints and indexes."""
        if table not in self._cache:
            found = inspect(self._ctx.engine)
            pk = found.get_pk_constraint(table)
            keys = [(str(pk.get("name") or "primary key"), _cols(pk, "constrained_columns"), True)]
            for uc in found.get_unique_constraints(table):
                keys.append((str(uc.get("name") or "unique"), _cols(uc, "column_names"), True))
            for ix in found.get_indexes(table):
                keys.append(
                    (str(ix.get("name") or "index"), _cols(ix, "column_names"), bool(ix["unique"]))
                )
            self._cache[table] = [k for k in keys if k[1]]
        return self._cache[table]

    def unique(self, table: str, column: str, tenant: str) -> str | None:
        """The name of a key making `column` unique per tenant (over it alone, or with
        the tenant), if any."""
        for name, cols, unique in self._keys(table):
            if unique and set(cols) in ({column}, {tenant, column}):
                return name
        return None

    def leads_index(self, table: str, column: str, tenant: str) -> bool:
        for _name, cols, _unique in self._keys(table):
            rest = [c for c in cols if c != tenant] if cols[0] == tenant else list(cols)
            if rest and rest[0] == column:
                return True
        return False


def _cols(spec: Any, key: str) -> tuple[str, ...]:
    return tuple(str(c) for c in (spec.get(key) or []) if c)


def measures(ctx: CheckContext) -> list[Finding]:
    """Every aggregation or measure that needs a number reads a numeric column."""
    out: list[Finding] = []
    for name, e in ctx.catalog.entities.items():
        columns = ctx.columns(e.table)
        if columns is None:
            continue
        for key, column in _numeric_columns(ctx.catalog, name):
            if column not in columns:
                continue  # columns_exist reports it
            stored = classify(columns[column]["type"], ctx.dialect)
            if stored not in _NUMBERS:
                out.append(
                    Finding(
                        "measures",
                        Level.ERROR,
                        f"{key} aggregates {e.table}.{column}, a {stored.value} column",
                        f"aggregate a numeric column (INTEGER, NUMERIC, REAL) or drop {key}",
                        name,
                        e.table,
                        column,
                    )
                )
    return out


def _numeric_columns(catalog: Catalog, name: str) -> list[tuple[str, str]]:
    e = catalog.entities[name]
    out: list[tuple[str, str]] = []
    for fname, f in e.fields.items():
        if f.column is not None and NUMERIC_AGGREGATIONS & set(f.aggregations):
            out.append((f"entities.{name}.fields.{fname}.aggregations", f.column))
    for mname, m in e.measures.items():
        if m.function not in NUMERIC_AGGREGATIONS:
            continue
        key = f"entities.{name}.measures.{mname}"
        # a product's second factor is read like its first
        for factor, named in ((key, m.field), (f"{key}.times", m.times)):
            spec = e.fields.get(named or "")
            if spec is not None and spec.column is not None:
                out.append((factor, spec.column))
    return out
