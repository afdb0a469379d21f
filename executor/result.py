"""What an execution returns: rows with the evidence that supports them.

This is the contract between the executor and everything after it (verifier,
renderer, envelope). It holds only data read in this execution: the verifier's
`evidence_backed` check relies on `execution_id` and the evidence ids here.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any, Literal, TypeVar

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

    def evidence_by_id(self) -> dict[str, Evidence]:
        return {e.id: e for e in self.evidence}


# -- building results from data the executor typed itself ------------------------------
#
# `model_validate` checks every field of every row and evidence object: about a
# microsecond each, more than sqlite3 takes to read the row. The executor makes
# these objects from values whose types it knows (its own strings, counts and
# converters) or checks (exact types only, for what comes from the database),
# so `Built` sets their fields directly, as `model_construct` does (which is
# slower than validating: it walks every field's aliases and defaults in
# Python). `__dict__`, `__pydantic_fields_set__`, `__pydantic_extra__` and
# `__pydantic_private__` are the instance attributes pydantic documents for
# BaseModel. Fail-safe both ways:
# * a value of another type (an integer id column, bytes) raises `Untyped`, and
#   the caller builds the result again through `Validated`, which converts or
#   refuses it exactly as validation always did;
# * should a pydantic release lay instances out otherwise, the check at the end
#   of this module finds built objects differ from validated ones, and
#   `builder()` is `Validated` for every result.

_M = TypeVar("_M", bound=BaseModel)


class Untyped(Exception):
    """A value read from the database is not of its field's exact type."""


_new = object.__new__
_set = object.__setattr__

# The fields each kind of object is given (its `model_fields_set`): the keys of
# the data `Validated` builds.
OBJECT_EVIDENCE_SET = frozenset(
    ("id", "kind", "execution_id", "tenant_id", "entity_type", "entity_id", "value_text")
) | {"fallback"}
FACT_EVIDENCE_SET = frozenset(Evidence.model_fields) - {"fallback"}


def _built(cls: type[_M], values: dict[str, Any], fields_set: frozenset[str]) -> _M:
    m = _new(cls)
    _set(m, "__dict__", values)
    _set(m, "__pydantic_fields_set__", set(fields_set))
    _set(m, "__pydantic_extra__", None)
    _set(m, "__pydantic_private__", None)
    return m


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


class Built(Validated):
    """The result's objects made directly from data of the fields' exact types
    (`Untyped` otherwise): equal, field for field, to what `Validated` gives."""

    def fact_evidence(self, id: str, execution_id: str, fact: Sequence[Any]) -> Any:
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
        if (
            type(tenant_id) is not str
            or type(entity_type) is not str
            or type(entity_id) is not str
            or type(predicate) is not str
            or type(value_text) not in _TEXT_OR_NONE
            or type(value_norm) not in _TEXT_OR_NONE
            or type(source_type) not in _TEXT_OR_NONE
            or type(source_ref) not in _TEXT_OR_NONE
            or type(observed_at) not in _DATETIME_OR_NONE
            or type(valid_until) not in _DATETIME_OR_NONE
        ):
            raise Untyped
        return _built(
            Evidence,
            {
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
                "fallback": False,
            },
            FACT_EVIDENCE_SET,
        )

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
        if (
            type(entity_id) is not str
            or type(tenant_id) is not str
            or type(label) not in _TEXT_OR_NONE
        ):
            raise Untyped
        if facts:
            for held in facts.values():
                if type(held) is not tuple:
                    raise Untyped
                for value in held:
                    if type(value) is not str:
                        raise Untyped
        object_id = f"{entity_type}:{entity_id}"
        evidence[object_id] = _built(
            Evidence,
            {
                "id": object_id,
                "kind": "text" if text else "object",
                "execution_id": execution_id,
                "tenant_id": tenant_id,
                "entity_type": entity_type,
                "entity_id": entity_id,
                "predicate": None,
                "value_text": value_text,
                "value_norm": None,
                "source_type": None,
                "source_ref": None,
                "confidence": None,
                "observed_at": None,
                "valid_until": None,
                "fallback": text,
            },
            OBJECT_EVIDENCE_SET,
        )
        evidence_ids.append(object_id)
        return _built(
            ResultRow,
            {
                "entity_type": entity_type,
                "entity_id": entity_id,
                "tenant_id": tenant_id,
                "label": label,
                "values": values,
                "facts": facts,
                "facts_cut": facts_cut,
                "evidence_ids": tuple(evidence_ids),
            },
            _ROW_SET,
        )

    def make(self, data: dict[str, Any]) -> ExecutionResult:
        # rows and evidence are tuples of Built objects already; every other
        # field is the executor's own (tuples, counts, its strings, the
        # template's enum)
        if type(data["query_type"]) is not QueryType:
            raise Untyped
        return _built(ExecutionResult, data, _RESULT_SET)


_TEXT_OR_NONE: frozenset[type] = frozenset({str, type(None)})
_DATETIME_OR_NONE: frozenset[type] = frozenset({datetime, type(None)})
_ROW_SET = frozenset(ResultRow.model_fields)
_RESULT_SET = frozenset(ExecutionResult.model_fields)


def _same(a: BaseModel, b: BaseModel) -> bool:
    return (
        a == b
        and repr(a) == repr(b)
        and a.model_fields_set == b.model_fields_set
        and a.model_dump() == b.model_dump()
        and a.model_dump_json() == b.model_dump_json()
    )


def _built_as_validated() -> bool:
    """Whether `Built` makes what `Validated` makes, on a result with one row of
    each kind of evidence (see the note above `Untyped`)."""
    try:
        made = []
        for how in (Built(), Validated()):
            when = datetime(2020, 1, 2, 3, 4, 5, tzinfo=UTC)
            fact = how.fact_evidence(
                "fact:1", "x", (1, "t", "e", "1", "p", "v", "v", None, "s", "r", 0.5, when, None)
            )
            evidence: dict[str, Any] = {"fact:1": fact}
            row = how.entity(
                evidence,
                "x",
                "e",
                "1",
                "t",
                "l",
                {"a": 1, "p": ("v",)},
                {"p": ("v",)},
                {"p": 3},
                ["fact:1"],
                False,
                None,
            )
            hit = how.entity(evidence, "x", "e", "2", "t", None, {}, {}, {}, [], True, "w")
            made.append(
                how.result(
                    execution_id="x",
                    tenant_id="t",
                    query_type=QueryType.LIST,
                    entity_type="e",
                    template="e.list",
                    plan_hash="h",
                    sql_fingerprints=("f",),
                    rows=(row, hit),
                    count=1,
                    truncated=False,
                    baseline_total=2,
                    evidence=tuple(evidence.values()),
                    used_fallback=False,
                    elapsed_ms=1.5,
                    notes=("n",),
                    retrieval="facts",
                )
            )
        built, validated = made
        pairs = [
            (built, validated),
            *zip(built.rows, validated.rows, strict=True),
            *zip(built.evidence, validated.evidence, strict=True),
        ]
        return all(_same(a, b) for a, b in pairs)
    except Exception:  # any surprise: validate every result, as before
        return False


VALIDATED = Validated()
BUILT: Validated = Built() if _built_as_validated() else VALIDATED


def builder() -> Validated:
    """How results are made: `Built` unless it cannot be trusted on this pydantic."""
    return BUILT
