"""The alternative qdsl replaces: SQL written by an LLM, guarded with sqlglot.

`guard` does what such a guard must do to be as safe as a qdsl plan: parse the
SQL (sqlglot's compiled build, `sqlglot[c]`, when installed), allow SELECT
only, walk the tree against the catalog's whitelist (tables, and each column
against the table its alias names), forbid writes and unknown functions,
require `tenant_id = '<caller's tenant>'` for every table reference (the facts
EXISTS subquery included), and regenerate the SQL to run.
"""

from __future__ import annotations

import sqlglot
import sqlglot.parser
from sqlglot import exp

from qdsl.dsl.catalog import Catalog
from qdsl.executor.tables import FACT_COLUMNS, entity_columns

_FUNCS = (exp.Count, exp.Lower, exp.Exists, exp.Star, exp.Max, exp.Min, exp.Sum, exp.Avg)
_FORBIDDEN = (exp.Insert, exp.Update, exp.Delete, exp.Drop, exp.Create, exp.Command, exp.Alter)


class GuardError(Exception):
    pass


def compiled_build() -> bool:
    """True when sqlglot's parser is the compiled extension (sqlglotc)."""
    return not str(sqlglot.parser.__file__).endswith(".py")


def build_label() -> str:
    version = getattr(sqlglot, "__version__", "")
    return f"sqlglot {version} ({'compiled' if compiled_build() else 'pure Python'})"


class Whitelist:
    """Tables and their columns, built once per catalog (as a real guard would)."""

    def __init__(self, catalog: Catalog) -> None:
        self.columns: dict[str, frozenset[str]] = {
            spec.table: frozenset(entity_columns(spec)) for spec in catalog.entities.values()
        }
        self.columns[catalog.facts.table] = frozenset(FACT_COLUMNS)
        self.tenant_column = "tenant_id"


def _check_node(node: object, wl: Whitelist, aliases: dict[str, str]) -> None:
    if isinstance(node, _FORBIDDEN):
        raise GuardError(type(node).__name__)
    if isinstance(node, exp.Table):
        if node.name not in wl.columns:
            raise GuardError(f"table {node.name}")
        aliases[node.alias_or_name] = node.name
    elif (
        isinstance(node, exp.Func)
        and not isinstance(node, exp.Binary | exp.Connector | exp.Predicate | exp.Unary)
        and not isinstance(node, _FUNCS)
    ):
        raise GuardError(f"function {node.sql()}")


def _check_columns(tree: exp.Expression, wl: Whitelist, aliases: dict[str, str]) -> None:
    every = frozenset().union(*(wl.columns[t] for t in aliases.values()))
    for column in tree.find_all(exp.Column):
        table = aliases.get(column.table) if column.table else None
        allowed = wl.columns[table] if table else every
        if column.name not in allowed:
            raise GuardError(f"column {column.name}")


def _tenant_bound(tree: exp.Expression, tenant: str, wl: Whitelist) -> set[str]:
    return {
        eq.left.table
        for eq in tree.find_all(exp.EQ)
        if isinstance(eq.left, exp.Column)
        and eq.left.name == wl.tenant_column
        and isinstance(eq.right, exp.Literal)
        and eq.right.this == tenant
    }


def guard(sql: str, tenant: str, wl: Whitelist, dialect: str = "postgres") -> str:
    """Parse, walk against the whitelist, require the tenant on every table, regenerate."""
    tree = sqlglot.parse_one(sql, read=dialect)
    if not isinstance(tree, exp.Select):
        raise GuardError("only SELECT")
    aliases: dict[str, str] = {}
    for node in tree.walk():
        _check_node(node, wl, aliases)
    _check_columns(tree, wl, aliases)
    if set(aliases) - _tenant_bound(tree, tenant, wl):
        raise GuardError("tenant predicate missing")
    return tree.sql(dialect=dialect)
