"""The query taxonomy: one declared record per query type.

A `QueryKind` says everything the pipeline needs to know about one query type:
the answer contract it is answered with, the keys of that contract's data,
whether a positive answer must cite evidence, the verifier checks it runs by
default and those no plan can remove, the shape of its executor template, and
what an empty result turns into. The normalizer, executor, verifier and
pipeline read these records; renderers and planner cues register against
query types in a `KindTable`, and `tests/dsl/test_kinds.py` proves that every
query type is covered by every table.

Adding a query type touches three files (docs/architecture.md, "Extending"):
this one (its `QueryType` and `AnswerContract` names and its record), the
renderer (`qdsl/render.py`) and the planner's wording cues
(`dsl/question/words.py`). Its template is generic: the executor builds its
statements from `TemplateShape`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import TYPE_CHECKING, Generic, TypeVar

if TYPE_CHECKING:
    from qdsl.dsl.catalog import EntitySpec


class QueryType(StrEnum):
    EXISTENCE = "existence"
    COUNT = "count"
    LIST = "list"
    STATUS = "status"
    EXPLAIN = "explain"
    DIAGNOSE = "diagnose"
    COMPARE = "compare"
    UNKNOWN = "unknown"


class AnswerContract(StrEnum):
    YES_NO_WITH_EVIDENCE = "yes_no_with_evidence"
    COUNT_SCALAR = "count_scalar"
    ENTITY_LIST = "entity_list"
    ENTITY_SNAPSHOT = "entity_snapshot"
    EXPLANATION_WITH_CITATIONS = "explanation_with_citations"
    DIAGNOSIS_WITH_EVIDENCE = "diagnosis_with_evidence"
    COMPARISON_WITH_BASIS = "comparison_with_basis"
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


# Checks that run on every answer whatever the plan names: the route, the
# tenant, the contract, and that the answer is backed by this execution.
# A plan can repeat them but never remove them. Adding one is one line here.
MANDATORY_CHECKS: tuple[VerifierCheck, ...] = (
    VerifierCheck.ROUTE_CONTRACT_INTERNAL,
    VerifierCheck.TENANT_CONSISTENT,
    VerifierCheck.CONTRACT_MATCHES_QUERY_TYPE,
    VerifierCheck.EVIDENCE_BACKED,
    VerifierCheck.CONSISTENT_WITH_RESULT,
    VerifierCheck.QUESTION_COVERED,
)


class EmptyResult(StrEnum):
    """What an execution that matched nothing turns into."""

    # Nothing matched is itself the answer (a count of zero); clarify_on_empty does not apply.
    ANSWER = "answer"
    # A verified "none found", or a clarifying question when the plan sets clarify_on_empty.
    NOT_FOUND = "not_found"
    # Nothing to answer from: insufficient_evidence, never an invented explanation.
    INSUFFICIENT = "insufficient_evidence"


def _any_entity(_entity: EntitySpec) -> str | None:
    return None


def needs_text(entity: EntitySpec) -> str | None:
    return None if entity.text_search else "it has no text_search columns to cite"


def needs_facts(entity: EntitySpec) -> str | None:
    has_fact = any(f.is_fact for f in entity.fields.values())
    return None if has_fact else "it has no fact fields to report as findings"


@dataclass(frozen=True)
class TemplateShape:
    """What a query type's generic template reads (see `qdsl.executor.statements`)."""

    # a count(*) of the matches
    counts: bool = False
    # every fact of each matched entity (snapshots, passages' topics, error facts)
    entity_facts: bool = False
    # project every non-sensitive column, not only the plan's projection
    snapshot: bool = False
    # project the text_search columns (passages to cite)
    passages: bool = False
    # how many distinct subjects (ids) the plan must name
    min_subjects: int = 0
    # why an entity cannot use this template, or None when it can
    unusable: Callable[[EntitySpec], str | None] = _any_entity


@dataclass(frozen=True)
class QueryKind:
    """Everything the pipeline knows about one query type."""

    query_type: QueryType
    contract: AnswerContract
    # the keys of `Answer.data` under this contract, the same in every language
    data_keys: frozenset[str]
    # a positive answer is a claim about stored data and must cite evidence
    must_cite: bool
    # the checks run when the plan names none
    default_checks: tuple[VerifierCheck, ...]
    # checks this query type runs whatever the plan names (besides MANDATORY_CHECKS)
    mandatory_checks: tuple[VerifierCheck, ...] = ()
    # None: plans of this type are never executed (they clarify)
    template: TemplateShape | None = None
    on_empty: EmptyResult = EmptyResult.NOT_FOUND
    # checks_for's answers: every plan normalized asks, with few distinct questions
    _checks: dict[tuple[tuple[VerifierCheck, ...], bool, bool], tuple[VerifierCheck, ...]] = (
        field(default_factory=dict, init=False, repr=False, compare=False, hash=False)
    )

    @property
    def executable(self) -> bool:
        return self.template is not None

    def required_checks(
        self, *, fresh: bool = False, scoped: bool = False
    ) -> tuple[VerifierCheck, ...]:
        """The checks no plan of this type can remove (fresh_evidence when freshness is
        asked, within_scope when the plan has a project scope)."""
        more: tuple[VerifierCheck, ...] = (VerifierCheck.FRESH_EVIDENCE,) if fresh else ()
        if scoped:
            more += (VerifierCheck.WITHIN_SCOPE,)
        return tuple(dict.fromkeys((*MANDATORY_CHECKS, *self.mandatory_checks, *more)))

    def checks_for(
        self, named: Iterable[VerifierCheck], *, fresh: bool = False, scoped: bool = False
    ) -> tuple[VerifierCheck, ...]:
        """What the verifier runs for a plan naming `named`: the required checks, then
        the named ones (the defaults when none are named), without repeats."""
        key = (tuple(named), fresh, scoped)
        found = self._checks.get(key)
        if found is None:
            chosen = key[0] or self.default_checks
            required = self.required_checks(fresh=fresh, scoped=scoped)
            found = tuple(dict.fromkeys((*required, *chosen)))
            if len(self._checks) < _MAX_CHECK_SETS:
                self._checks[key] = found
        return found


# A bound on checks_for's memory per kind (a plan may name any subset of checks).
_MAX_CHECK_SETS = 256

_C = VerifierCheck
_Q = QueryType
_A = AnswerContract

# The built-in kinds. A count is where a total could pass for a filtered count,
# so the substitution check is never optional there nor for a yes/no; a list or
# an existence answer can be cut, so within_limit runs by default.
_DECLARED: tuple[QueryKind, ...] = (
    QueryKind(
        _Q.EXISTENCE,
        _A.YES_NO_WITH_EVIDENCE,
        frozenset({"exists", "matches"}),
        must_cite=True,
        default_checks=(_C.COVERS_CONDITIONS, _C.WITHIN_LIMIT),
        mandatory_checks=(_C.NO_TOTAL_COUNT_SUBSTITUTION,),
        template=TemplateShape(),
    ),
    QueryKind(
        _Q.COUNT,
        _A.COUNT_SCALAR,
        frozenset({"count"}),
        must_cite=False,
        default_checks=(_C.COVERS_CONDITIONS,),
        mandatory_checks=(_C.NO_TOTAL_COUNT_SUBSTITUTION,),
        template=TemplateShape(counts=True),
        on_empty=EmptyResult.ANSWER,
    ),
    QueryKind(
        _Q.LIST,
        _A.ENTITY_LIST,
        frozenset({"items", "total", "truncated"}),
        must_cite=False,
        default_checks=(_C.COVERS_CONDITIONS, _C.WITHIN_LIMIT),
        template=TemplateShape(counts=True),
    ),
    QueryKind(
        _Q.STATUS,
        _A.ENTITY_SNAPSHOT,
        frozenset({"entity"}),
        must_cite=True,
        default_checks=(_C.COVERS_CONDITIONS,),
        template=TemplateShape(entity_facts=True, snapshot=True),
    ),
    QueryKind(
        _Q.EXPLAIN,
        _A.EXPLANATION_WITH_CITATIONS,
        frozenset({"passages", "citations"}),
        must_cite=True,
        default_checks=(_C.WITHIN_LIMIT,),
        template=TemplateShape(entity_facts=True, passages=True, unusable=needs_text),
        on_empty=EmptyResult.INSUFFICIENT,
    ),
    QueryKind(
        _Q.DIAGNOSE,
        _A.DIAGNOSIS_WITH_EVIDENCE,
        frozenset({"findings"}),
        must_cite=True,
        default_checks=(_C.COVERS_CONDITIONS,),
        template=TemplateShape(entity_facts=True, snapshot=True, unusable=needs_facts),
        on_empty=EmptyResult.INSUFFICIENT,
    ),
    QueryKind(
        _Q.COMPARE,
        _A.COMPARISON_WITH_BASIS,
        frozenset({"subjects", "differences"}),
        must_cite=True,
        default_checks=(_C.COVERS_CONDITIONS,),
        template=TemplateShape(entity_facts=True, snapshot=True, min_subjects=2),
    ),
    QueryKind(
        _Q.UNKNOWN,
        _A.CLARIFY_OR_FAIL,
        frozenset({"clarification"}),
        must_cite=False,
        default_checks=(),
    ),
)


def _index(kinds: Iterable[QueryKind]) -> dict[QueryType, QueryKind]:
    out: dict[QueryType, QueryKind] = {}
    contracts: set[AnswerContract] = set()
    for kind in kinds:
        if kind.query_type in out or kind.contract in contracts:
            raise ValueError(f"query type {kind.query_type.value} declared twice")
        out[kind.query_type] = kind
        contracts.add(kind.contract)
    missing = [qt.value for qt in QueryType if qt not in out]
    if missing:
        raise ValueError(f"query types without a QueryKind: {missing}")
    return out


KINDS: Mapping[QueryType, QueryKind] = _index(_DECLARED)
_BY_CONTRACT: Mapping[AnswerContract, QueryKind] = {k.contract: k for k in KINDS.values()}


def kind_of(query_type: QueryType) -> QueryKind:
    return KINDS[query_type]


def kind_for_contract(contract: AnswerContract) -> QueryKind:
    return _BY_CONTRACT[contract]


T = TypeVar("T")


@dataclass
class KindTable(Generic[T]):
    """What one component registers per query type (renderers, planner cues).

    `needs` picks the kinds the table must cover; `missing()` names the ones it
    does not, which the coverage test turns into a failure.
    """

    what: str
    needs: Callable[[QueryKind], bool] = lambda _k: True
    entries: dict[QueryType, T] = field(default_factory=dict)

    def register(self, query_type: QueryType) -> Callable[[T], T]:
        def add(value: T) -> T:
            self.add(query_type, value)
            return value

        return add

    def add(self, query_type: QueryType, value: T) -> None:
        if query_type in self.entries:
            raise ValueError(f"{self.what} for {query_type.value} registered twice")
        self.entries[query_type] = value

    def __getitem__(self, query_type: QueryType) -> T:
        try:
            return self.entries[query_type]
        except KeyError:
            raise LookupError(f"no {self.what} registered for {query_type.value}") from None

    def __contains__(self, query_type: object) -> bool:
        return query_type in self.entries

    def __iter__(self) -> Iterator[QueryType]:
        return iter(self.entries)

    def items(self) -> Iterable[tuple[QueryType, T]]:
        return self.entries.items()

    def missing(self, kinds: Iterable[QueryKind] | None = None) -> list[QueryType]:
        """Kinds this table must cover and does not; kinds it covers that do not exist."""
        known = list(KINDS.values() if kinds is None else kinds)
        gaps = [k.query_type for k in known if self.needs(k) and k.query_type not in self.entries]
        strays = [qt for qt in self.entries if qt not in {k.query_type for k in known}]
        return gaps + strays
