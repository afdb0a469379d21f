"""Fact predicates the catalog names: rows exist, and `value_norm` is what lookups expect.

A fact whose `value_norm` is not `normalize_text(value_text)` is never found
by a filter (the planner and executor normalize the same way), so a question
about it answers "no" or counts too few without any warning.
"""

from __future__ import annotations

from typing import Any

import sqlalchemy as sa

from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.check.findings import CheckContext, Finding, Level

MAX_EXAMPLES = 5
BATCH = 5000


def _fact_fields(ctx: CheckContext) -> list[tuple[str, str, str]]:
    """(entity name, field name, predicate) of every fact field."""
    return [
        (name, fname, f.fact)
        for name, e in ctx.catalog.entities.items()
        for fname, f in e.fields.items()
        if f.fact is not None
    ]


def fact_rows(ctx: CheckContext) -> list[Finding]:
    table = ctx.catalog.facts.table
    if not _fact_fields(ctx):
        return []
    if ctx.columns(table) is None:
        return [
            Finding(
                "fact_rows",
                Level.ERROR,
                f"the facts table {table!r} does not exist",
                fix="run `qdsl db upgrade`, or set [facts] table to qdsl's facts table",
                table=table,
            )
        ]
    facts = sa.table(
        table,
        sa.column("entity_type"),
        sa.column("predicate"),
        sa.column("value_text"),
        sa.column("value_norm"),
    )
    out: list[Finding] = []
    with ctx.engine.connect() as conn:
        for entity, fname, predicate in _fact_fields(ctx):
            where = sa.and_(facts.c.entity_type == entity, facts.c.predicate == predicate)
            rows = conn.execute(
                sa.select(facts.c.value_text, facts.c.value_norm).where(where),
                execution_options={"stream_results": True, "yield_per": BATCH},
            )
            total = bad = 0
            wrong: list[dict[str, Any]] = []
            for value_text, value_norm in rows:
                total += 1
                expected = normalize_text(str(value_text))
                if value_norm != expected:
                    bad += 1
                    if len(wrong) < MAX_EXAMPLES:
                        wrong.append({"value_text": value_text, "value_norm": value_norm})
            key = f"entities.{entity}.fields.{fname}"
            if total == 0:
                out.append(
                    Finding(
                        "fact_rows",
                        Level.WARNING,
                        f"{key} reads predicate {predicate!r} of entity type {entity!r}, "
                        f"which has no rows in {table}: every question on it finds nothing",
                        fix=f"load its facts with `qdsl facts load` (entity_type={entity!r}, "
                        f"predicate={predicate!r})",
                        entity=entity,
                        table=table,
                    )
                )
            if bad:
                out.append(
                    Finding(
                        "fact_rows",
                        Level.ERROR,
                        f"{bad} of {total} {predicate!r} facts of {entity!r} have a value_norm "
                        "that is not the normalization of value_text; filters never find them",
                        fix="reload them with `qdsl facts load` (it normalizes value_norm), or "
                        "set value_norm = qdsl.dsl.textnorm.normalize_text(value_text)",
                        entity=entity,
                        table=table,
                        column="value_norm",
                        details={"rows": bad, "examples": wrong},
                    )
                )
    return out
