"""The names of the query taxonomy: query types, their contracts, the checks.

A new query kind adds its `QueryType` and `AnswerContract` members here; its
record lives in a module of its own (`qdsl.dsl.kinds.<kind>`) and is listed
once in `qdsl.dsl.kinds` (docs/architecture.md, "How to add a query kind").
"""

from __future__ import annotations

from enum import StrEnum


class QueryType(StrEnum):
    EXISTENCE = "existence"
    COUNT = "count"
    LIST = "list"
    STATUS = "status"
    EXPLAIN = "explain"
    DIAGNOSE = "diagnose"
    COMPARE = "compare"
    AGGREGATE = "aggregate"
    BREAKDOWN = "breakdown"
    UNKNOWN = "unknown"


class AnswerContract(StrEnum):
    YES_NO_WITH_EVIDENCE = "yes_no_with_evidence"
    COUNT_SCALAR = "count_scalar"
    ENTITY_LIST = "entity_list"
    ENTITY_SNAPSHOT = "entity_snapshot"
    EXPLANATION_WITH_CITATIONS = "explanation_with_citations"
    DIAGNOSIS_WITH_EVIDENCE = "diagnosis_with_evidence"
    COMPARISON_WITH_BASIS = "comparison_with_basis"
    AGGREGATE_WITH_BASIS = "aggregate_with_basis"
    BREAKDOWN_TABLE = "breakdown_table"
    CLARIFY_OR_FAIL = "clarify_or_fail"


class VerifierCheck(StrEnum):
    """The verifier checks a plan can name (`verify ...`); each is a function of `qdsl.verifier`."""

    CONTRACT_MATCHES_QUERY_TYPE = "contract_matches_query_type"
    EVIDENCE_BACKED = "evidence_backed"
    NO_TOTAL_COUNT_SUBSTITUTION = "no_total_count_substitution"
    COVERS_CONDITIONS = "covers_conditions"
    FRESH_EVIDENCE = "fresh_evidence"
    WITHIN_LIMIT = "within_limit"
    TENANT_CONSISTENT = "tenant_consistent"
    ROUTE_CONTRACT_INTERNAL = "route_contract_internal"
    CONSISTENT_WITH_RESULT = "consistent_with_result"
    QUESTION_COVERED = "question_covered"
    WITHIN_SCOPE = "within_scope"


class EmptyResult(StrEnum):
    """What an execution that matched nothing turns into."""

    # Nothing matched is itself the answer (a count of zero); clarify_on_empty does not apply.
    ANSWER = "answer"
    # A verified "none found", or a clarifying question when the plan sets clarify_on_empty.
    NOT_FOUND = "not_found"
    # Nothing to answer from: insufficient_evidence, never an invented explanation.
    INSUFFICIENT = "insufficient_evidence"
