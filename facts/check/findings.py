"""What a catalog check rule returns: findings with a level and the fix.

A rule is a function of a `CheckContext` that returns findings and never
raises on purpose; `run_rules` turns a crash inside one rule into a finding of
its own, so one broken rule never hides what the others found. Every message
and fix leaves `run_rules` as one line: a finding is a row of the check's
table, and an error's multi-line text (its "hint:" line) would break it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace
from enum import StrEnum
from functools import cached_property
from typing import Any

from sqlalchemy import Engine, inspect
from sqlalchemy.engine.interfaces import ReflectedColumn

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError


class Level(StrEnum):
    ERROR = "error"  # answers are wrong or unsafe until fixed; `catalog check` exits 3
    WARNING = "warning"  # answers may be incomplete
    INFO = "info"


@dataclass(frozen=True)
class Finding:
    rule: str
    level: Level
    message: str
    fix: str
    entity: str | None = None
    table: str | None = None
    column: str | None = None
    details: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        out["level"] = self.level.value
        return out


@dataclass
class CheckContext:
    """The engine, the catalog and the schema read once for every rule."""

    engine: Engine
    catalog: Catalog
    reader_role: str

    @property
    def dialect(self) -> str:
        return self.engine.dialect.name

    @cached_property
    def table_names(self) -> frozenset[str]:
        """Tables and views (an entity may be a view), materialized ones included."""
        found = inspect(self.engine)
        names = {*found.get_table_names(), *found.get_view_names()}
        if self.dialect == "postgresql":
            names.update(found.get_materialized_view_names())
        return frozenset(names)

    @cached_property
    def view_names(self) -> frozenset[str]:
        found = inspect(self.engine)
        names = set(found.get_view_names())
        if self.dialect == "postgresql":
            names.update(found.get_materialized_view_names())
        return frozenset(names)

    @cached_property
    def _columns(self) -> dict[str, dict[str, ReflectedColumn]]:
        from qdsl.facts.storage import reflected_columns

        found: dict[str, dict[str, ReflectedColumn]] = {}
        for table in sorted(self.catalog_tables()):
            if table in self.table_names:
                found[table] = {c["name"]: c for c in reflected_columns(self.engine, table)}
        return found

    def columns(self, table: str) -> dict[str, ReflectedColumn] | None:
        """The table's columns by name, or None when the table does not exist."""
        return self._columns.get(table)

    def catalog_tables(self) -> set[str]:
        return {e.table for e in self.catalog.entities.values()} | {self.catalog.facts.table}


Rule = Callable[[CheckContext], list[Finding]]


def one_line(text: str) -> str:
    """The text's lines joined by "; ", blank ones dropped."""
    return "; ".join(line.strip() for line in text.splitlines() if line.strip())


def _crashed(rule: Rule, exc: Exception) -> Finding:
    fix = (
        "fix the cause named here (often a missing table or privilege) "
        "and run `qdsl catalog check` again"
    )
    if isinstance(exc, QdslError):
        # its hint is the fix a deployer can act on; its message is the cause
        cause = f"{exc.code}: {exc.message}"
        fix = exc.hint or fix
    else:
        cause = f"{type(exc).__name__}: {exc}"
    return Finding(
        rule=rule.__name__,
        level=Level.ERROR,
        message=f"the rule could not run: {one_line(cause)[:300]}",
        fix=fix,
    )


def run_rules(context: CheckContext, rules: tuple[Rule, ...]) -> list[Finding]:
    findings: list[Finding] = []
    for rule in rules:
        try:
            findings.extend(rule(context))
        except Exception as exc:  # a crashing rule is a finding, never the end of the check
            findings.append(_crashed(rule, exc))
    return [replace(f, message=one_line(f.message), fix=one_line(f.fix)) for f in findings]
