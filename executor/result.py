"""What an execution returns: rows with the evidence that supports them.

This is the contract between the executor and everything after it (verifier,
renderer, envelope). It holds only data read in this execution: the verifier's
`evidence_backed` check relies on `execution_id` and the evidence ids here.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdsl.dsl.ir import QueryType

EvidenceKind = Literal["fact", "object", "text"]


class Evidence(BaseModel):
    """One piece of evidence: a semantic_facts row or a source object row.

    `id` is stable across runs (`fact:<semantic_facts.id>` or
    `<entity_type>:<entity_id>`); `execution_id` ties it to the run that read it.
    `fallback` marks evidence found by text search rather than by a fact.
    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    id: str
    kind: EvidenceKind
    execution_id: str
    tenant_id: str
    entity_type: str
    entity_id: str
    predicate: str | None = None
    value_text: str | None = None
    value_norm: str | None = None
    source_type: str | None = None
    source_ref: str | None = None
    confidence: float | None = None
    observed_at: datetime | None = None
    valid_until: datetime | None = None
    fallback: bool = False


class ResultRow(BaseModel):
    """One entity the answer is about, with the ids of the evidence behind it."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    entity_type: str
    entity_id: str
    tenant_id: str
    label: str | None = None
    values: dict[str, Any] = Field(default_factory=dict)
    # predicate -> value_text, from this entity's facts (status / compare / diagnose)
    facts: dict[str, str] = Field(default_factory=dict)
    evidence_ids: tuple[str, ...] = ()


class ExecutionResult(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    execution_id: str
    tenant_id: str
    query_type: QueryType
    entity_type: str
    template: str
    plan_hash: str
    sql_fingerprints: tuple[str, ...] = ()
    rows: tuple[ResultRow, ...] = ()
    # count: the matching total for count plans; for list plans, how many match
    # before the limit (None when not computed). `truncated`: rows were capped.
    count: int | None = None
    truncated: bool = False
    # The tenant's unfiltered number of entities of this type, read as a guard so
    # the verifier can catch an answer that is really the total ("有 137 个项目"
    # for "有没有 A 股项目"). None when the template did not read it.
    baseline_total: int | None = None
    evidence: tuple[Evidence, ...] = ()
    used_fallback: bool = False
    elapsed_ms: float = 0.0
    # What the template did, for the audit log and `qdsl run` output (no values).
    notes: tuple[str, ...] = ()
    retrieval: Literal["facts", "columns", "fallback_text", "mixed", "none"] = "none"

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}
