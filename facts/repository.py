"""The facts read model: semantic_facts rows by value (alias sets) or by entity.

`FactsRepository` is the Protocol the rest of qdsl codes against;
`SqlFactsRepository` is the SQLAlchemy implementation. The tenant is always a
bound parameter in the WHERE clause, and on PostgreSQL every read also runs in
a READ ONLY transaction as the read-only role with `app.tenant_id` set, so row
level security holds even if a predicate were missing.

Freshness (`fresh_at`): a fact is fresh at time T when it has not expired
(`valid_until` is NULL or later than T) and was observed at most
`STALE_AFTER` (90 days) before T. Callers pass T explicitly (the demo uses
`facts.demo.DEMO_NOW`), so answers do not change with the wall clock.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any, Protocol, runtime_checkable

from pydantic import BaseModel, ConfigDict
from sqlalchemy import ColumnElement, Engine, and_, or_, select

from qdsl.dsl.catalog import alias_index
from qdsl.dsl.freshness import stale_reason
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts.db import READER_ROLE, tenant_transaction
from qdsl.facts.tables import semantic_facts as sf

STALE_AFTER = timedelta(days=90)


class Fact(BaseModel):
    """One semantic_facts row."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: int
    tenant_id: str
    entity_type: str
    entity_id: str
    predicate: str
    value_text: str
    value_norm: str
    value_num: float | None = None
    source_type: str
    source_ref: str | None = None
    confidence: float | None = None
    observed_at: datetime
    valid_until: datetime | None = None

    @property
    def evidence_id(self) -> str:
        """The stable evidence id the executor and verifier use (`fact:<id>`)."""
        return f"fact:{self.id}"

    def is_fresh(self, at: datetime) -> bool:
        window = STALE_AFTER.days
        reason = stale_reason(
            valid_until=self.valid_until, observed_at=self.observed_at, now=at, window_days=window
        )
        return reason is None


def freshness_clause(at: datetime) -> ColumnElement[bool]:
    """SQL twin of `Fact.is_fresh(at)` (both bounds are bound parameters)."""
    return and_(
        or_(sf.c.valid_until.is_(None), sf.c.valid_until > at),
        sf.c.observed_at >= at - STALE_AFTER,
    )


def alias_norms(aliases: Mapping[str, Sequence[str]], value: str) -> frozenset[str]:
    """Normalized spellings that mean `value`.

    If `value` is a canonical key of `aliases` or any of its spellings (compared
    normalized), all spellings of that key and the key itself; otherwise just
    the normalized value. `aliases` is a catalog field's alias table.
    """
    norm = normalize_text(value)
    found = alias_index(aliases).get(norm)
    return found[1] if found is not None else frozenset({norm})


@runtime_checkable
class FactsRepository(Protocol):
    def lookup(
        self,
        tenant_id: str,
        entity_type: str,
        predicate: str,
        value_norms: Iterable[str],
        *,
        fresh_at: datetime | None = None,
    ) -> tuple[Fact, ...]:
        """Facts of `tenant_id` whose value_norm is one of `value_norms`."""
        ...

    def facts_for(
        self,
        tenant_id: str,
        entity_type: str,
        entity_ids: Iterable[str],
        *,
        predicates: Iterable[str] | None = None,
        fresh_at: datetime | None = None,
    ) -> tuple[Fact, ...]:
        """Every fact (optionally of some predicates) of the given entities."""
        ...


def _fact(row: Mapping[Any, Any]) -> Fact:
    return Fact.model_validate(dict(row))


class SqlFactsRepository:
    """FactsRepository over a SQLAlchemy engine (SQLite or PostgreSQL).

    `role` is the PostgreSQL role reads run as (`SET LOCAL ROLE`); None keeps
    the connecting user, for deployments whose user is already read-only.
    """

    def __init__(self, engine: Engine, *, role: str | None = READER_ROLE) -> None:
        self._engine = engine
        self._role = role

    def _run(self, tenant_id: str, stmt: Any) -> tuple[Fact, ...]:
        with tenant_transaction(self._engine, tenant_id, read_only=True, role=self._role) as conn:
            return tuple(_fact(r) for r in conn.execute(stmt).mappings())

    def lookup(
        self,
        tenant_id: str,
        entity_type: str,
        predicate: str,
        value_norms: Iterable[str],
        *,
        fresh_at: datetime | None = None,
    ) -> tuple[Fact, ...]:
        norms = sorted({normalize_text(v) for v in value_norms})
        if not norms:
            return ()
        cond = and_(
            sf.c.tenant_id == tenant_id,
            sf.c.entity_type == entity_type,
            sf.c.predicate == predicate,
            sf.c.value_norm.in_(norms),
        )
        if fresh_at is not None:
            cond = and_(cond, freshness_clause(fresh_at))
        return self._run(tenant_id, select(sf).where(cond).order_by(sf.c.entity_id, sf.c.id))

    def facts_for(
        self,
        tenant_id: str,
        entity_type: str,
        entity_ids: Iterable[str],
        *,
        predicates: Iterable[str] | None = None,
        fresh_at: datetime | None = None,
    ) -> tuple[Fact, ...]:
        ids = sorted({str(i) for i in entity_ids})
        if not ids:
            return ()
        cond = and_(
            sf.c.tenant_id == tenant_id,
            sf.c.entity_type == entity_type,
            sf.c.entity_id.in_(ids),
        )
        if predicates is not None:
            wanted = sorted(set(predicates))
            if not wanted:
                return ()
            cond = and_(cond, sf.c.predicate.in_(wanted))
        if fresh_at is not None:
            cond = and_(cond, freshness_clause(fresh_at))
        return self._run(tenant_id, select(sf).where(cond).order_by(sf.c.entity_id, sf.c.id))
