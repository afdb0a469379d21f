"""What an execution returns: rows with the evidence that supports them.

This is the contract between the executor and everything after it (verifier,
renderer, envelope). It holds only data read in this execution: the verifier's
`evidence_backed` check relies on `execution_id` and the evidence ids here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from qdsl.dsl.ir import QueryType

EvidenceKind = Literal["fact", "object", "text"]
Retrieval = Literal["facts", "columns", "fallback_text", "mixed", "none"]


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
    # projected columns by name; a projected fact field holds its values (a tuple, as `facts`)
    values: dict[str, Any] = Field(default_factory=dict)
    # predicate -> every distinct value this entity's facts state, in a stable order
    # (status / compare / diagnose / explain): spellings of one catalog alias group
    # are one value, its canonical one; at most `FACT_VALUES_CAP` per predicate
    facts: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    # predicate -> how many distinct values it holds, only for predicates whose
    # values (here or in a projected fact field) were cut at the bound
    facts_cut: dict[str, int] = Field(default_factory=dict)
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
    retrieval: Retrieval = "none"
    # a kind's own result shape (`dsl.kinds.hooks.KindRead.data`), JSON-ready; empty
    # for the generic templates, whose result is the rows and counts above
    data: dict[str, Any] = Field(default_factory=dict)

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}


# -- building results ------------------------------------------------------------------
#
# The executor hands its data over as plain dicts and tuples and validates the
# whole result in one `model_validate` call: every row and evidence object is
# checked (and a value the database returned as another type, an integer id,
# is converted or refused) by pydantic's public API alone.


class Validated:
    """The result as data, validated in one call (every value checked)."""

    def fact_evidence(self, id: str, execution_id: str, fact: Sequence[Any]) -> Any:
        """A fact's evidence, from its columns (`FACT_COLUMNS` of the facts table)."""
        (
            _id,
            tenant_id,
            entity_type,
            entity_id,
            predicate,
            value_text,
            value_norm,
            _value_num,
            source_type,
            source_ref,
            confidence,
            observed_at,
            valid_until,
        ) = fact
        return {
            "id": id,
            "kind": "fact",
            "execution_id": execution_id,
            "tenant_id": tenant_id,
            "entity_type": entity_type,
            "entity_id": entity_id,
            "predicate": predicate,
            "value_text": value_text,
            "value_norm": value_norm,
            "source_type": source_type,
            "source_ref": source_ref,
            "confidence": float(confidence) if confidence is not None else None,
            "observed_at": observed_at,
            "valid_until": valid_until,
        }

    def entity(  # noqa: PLR0917 - runs per row: positional, no keyword matching
        self,
        evidence: dict[str, Any],
        execution_id: str,
        entity_type: str,
        entity_id: Any,
        tenant_id: Any,
        label: Any,
        values: dict[str, Any],
        facts: dict[str, Any],
        facts_cut: dict[str, int],
        evidence_ids: list[str],
        text: bool,
        value_text: str | None,
    ) -> Any:
        """An entity's result row, after its own evidence (put in `evidence`, its
        id last in `evidence_ids`; `text`: a text-fallback hit, by `value_text`)."""
        object_id = f"{entity_type}:{entity_id}"
        evidence[object_id] = {
            "id": object_id,
            "kind": "text" if text else "object",
            "execution_id": execution_id,
            "tenant_id": tenant_id,
            "entity_type": entity_type,
            "entity_id": entity_id,
            "value_text": value_text,
            "fallback": text,
        }
        evidence_ids.append(object_id)
        return {
            "entity_type": entity_type,
            "entity_id": entity_id,
            "tenant_id": tenant_id,
            "label": label,
            "values": values,
            "facts": facts,
            "facts_cut": facts_cut,
            "evidence_ids": evidence_ids,
        }

    def result(
        self,
        *,
        execution_id: str,
        tenant_id: str,
        query_type: QueryType,
        entity_type: str,
        template: str,
        plan_hash: str,
        sql_fingerprints: tuple[str, ...],
        rows: tuple[Any, ...],
        count: int | None,
        truncated: bool,
        baseline_total: int | None,
        evidence: tuple[Any, ...],
        used_fallback: bool,
        elapsed_ms: float,
        notes: tuple[str, ...],
        retrieval: Retrieval,
    ) -> ExecutionResult:
        return self.make(
            {
                "execution_id": execution_id,
                "tenant_id": tenant_id,
                "query_type": query_type,
                "entity_type": entity_type,
                "template": template,
                "plan_hash": plan_hash,
                "sql_fingerprints": sql_fingerprints,
                "rows": rows,
                "count": count,
                "truncated": truncated,
                "baseline_total": baseline_total,
                "evidence": evidence,
                "used_fallback": used_fallback,
                "elapsed_ms": elapsed_ms,
                "notes": notes,
                "retrieval": retrieval,
            }
        )

    def make(self, data: dict[str, Any]) -> ExecutionResult:
        return ExecutionResult.model_validate(data)


VALIDATED = Validated()


def builder() -> Validated:
    """How results are made: as data, validated in one call."""
    return VALIDATED
