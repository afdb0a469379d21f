"""`qdsl catalog check`: the catalog against the live database, one rule per module.

`check_catalog(engine, catalog)` runs `RULES` (a tuple a caller may extend or
replace) and returns every finding; a rule never stops the others, and a rule
that crashes becomes a finding itself (findings.run_rules).
"""

from __future__ import annotations

from dataclasses import dataclass

import sqlalchemy as sa
from sqlalchemy import Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import DatabaseError
from qdsl.facts.check.columns import columns_exist
from qdsl.facts.check.data import enum_values, unique_ids
from qdsl.facts.check.facts_rows import fact_rows
from qdsl.facts.check.findings import CheckContext, Finding, Level, Rule, run_rules
from qdsl.facts.check.indexes import indexes
from qdsl.facts.check.pg_security import pg_security
from qdsl.facts.check.relations import measures, relations
from qdsl.facts.check.types import field_types
from qdsl.facts.check.visibility import visibility
from qdsl.facts.engines import display_url

__all__ = ["RULES", "CheckReport", "Finding", "Level", "Rule", "check_catalog"]

RULES: tuple[Rule, ...] = (
    columns_exist,
    field_types,
    enum_values,
    unique_ids,
    fact_rows,
    indexes,
    relations,
    measures,
    pg_security,
    visibility,
)


@dataclass(frozen=True)
class CheckReport:
    findings: tuple[Finding, ...]

    @property
    def errors(self) -> tuple[Finding, ...]:
        return tuple(f for f in self.findings if f.level is Level.ERROR)

    @property
    def ok(self) -> bool:
        return not self.errors


def check_catalog(
    engine: Engine,
    catalog: Catalog,
    *,
    rules: tuple[Rule, ...] = RULES,
    reader_role: str | None = None,
) -> CheckReport:
    """Every finding of `rules` for `catalog` on `engine` (a DatabaseError if unreachable)."""
    from qdsl.facts.db import READER_ROLE

    try:
        with engine.connect() as conn:
            conn.execute(sa.select(1))
    except SQLAlchemyError as exc:
        raise DatabaseError(
            "unreachable",
            f"cannot connect to {display_url(engine.url.render_as_string())}",
            hint="check --db / QDSL_DATABASE_URL and that the database is running",
            details={"error": str(getattr(exc, "orig", None) or exc)[:500]},
        ) from None
    context = CheckContext(engine, catalog, reader_role or READER_ROLE)
    return CheckReport(tuple(run_rules(context, rules)))
