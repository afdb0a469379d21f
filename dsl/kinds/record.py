"""The record of one query kind: everything the pipeline knows about it.

A `QueryKind` says what one query type is answered with and how: its answer
contract and that contract's data keys, whether a positive answer must cite
evidence, the verifier checks it runs by default and those no plan can remove,
the words that name it in a plan (`spellings`) and in a question (`cues`, zh
and en), what the rule planner and the question reader do for it (`policy`),
the shape of its generic executor template or its own statement builder
(`build`), its own renderer (`render`) and consistency rule (`consistent`),
and what an empty result turns into. Each kind's record is declared in its own
module of this package and listed once in `qdsl.dsl.kinds`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from qdsl.dsl.kinds.hooks import Builder, Consistency, Renderer
from qdsl.dsl.kinds.names import AnswerContract, EmptyResult, QueryType, VerifierCheck

if TYPE_CHECKING:
    from qdsl.dsl.catalog import EntitySpec


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
    # the rows only back a number: unless the plan orders them, key order serves
    sample_only: bool = False
    # why an entity cannot use this template, or None when it can
    unusable: Callable[[EntitySpec], str | None] = _any_entity


@dataclass(frozen=True)
class PlannerPolicy:
    """What the question reader and the rule planner do for a kind."""

    # fields named beside the entity are shown (a projection), not refused as unplaced
    shows_fields: bool = False
    # the question must name its subject (an id or a pronoun)
    needs_subject: bool = False
    # the answer is about one object: a superlative takes the first (limit 1)
    singular: bool = False
    # no subject named and no order: the latest object (the entity's default sort) is meant
    latest_when_unnamed: bool = False
    # the question's words are a topic, not an entity: the text fallback may run, an
    # unknown word is part of the topic, and the kind's default entity answers it
    text_fallback: bool = False
    # words no catalog name carries become a text condition (where the entity has text)
    residual_text: bool = False
    # with one object pointed at, its cue asks for that object's attribute
    # ("项目 64 的预算是多少", "what is the priority of TCK-7"), not for a filter
    attribute_cue: bool = False
    # a ranked answer also shows the field it is ranked by ("谁的薪资最高")
    shows_ranked_field: bool = False
    # the kind's answer names its subject by id: the id filter is not restated
    names_subject: bool = False
    # it needs one number field, named in the question (its measure): the reader takes
    # the field of a superlative or the one named beside the entity, and drops the order
    measure: bool = False
    # the aggregation the measure's field must allow in the catalog ("sum"); none: any
    measure_aggregation: str = ""
    # a measure may replace the rows the kind counts ("total paid per method"); without
    # one it counts them
    optional_measure: bool = False


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
    # what it answers, as the planner prompt tells an LLM when to choose it
    intent: str = ""
    # the words a plan may write for it besides its own value (closed by `dsl.plan.closure`)
    spellings: tuple[str, ...] = ()
    # regular expressions over the normalized question (zh and en) that ask for it
    cues: tuple[str, ...] = ()
    # which cue wins when several kinds' cues match (lower first): "有多少" is a count
    cue_rank: int = 100
    policy: PlannerPolicy = PlannerPolicy()
    # the answer reads rows: a plan of it has a limit (a count has none)
    limited: bool = True
    # with no order named, the entity's default sort orders the answer
    default_sorted: bool = False
    # its own statements and reader (None: the generic template of `template`)
    build: Builder | None = None
    # its own renderer (None: the built-in renderer registered in `qdsl.render`)
    render: Renderer | None = None
    # what its answer must agree with in the result (consistent_with_result)
    consistent: Consistency | None = None
    # checks_for's answers: every plan normalized asks, with few distinct questions
    _checks: dict[tuple[tuple[VerifierCheck, ...], bool, bool], tuple[VerifierCheck, ...]] = field(
        default_factory=dict, init=False, repr=False, compare=False, hash=False
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
