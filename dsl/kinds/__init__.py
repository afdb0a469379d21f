"""The query taxonomy: one record per query type, registered in one map.

Each kind is declared in its own module of this package (`QueryKind`,
`qdsl.dsl.kinds.record`): its contract and data keys, checks, plan spellings,
question cues, planner policy, and either the generic template it runs on or
its own statement builder, reader, renderer and consistency rule
(`qdsl.dsl.kinds.hooks`). `_DECLARED` below lists them; everything else reads
`KINDS`: the closure of plan words, the question reader's cues, the
normalizer, the executor, the renderer and the verifier.

Adding a query kind (docs/architecture.md, "How to add a query kind"): its
`QueryType` and `AnswerContract` names (`names.py`), its module, and one line
in `_DECLARED` here.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from qdsl.dsl.kinds import (
    aggregate,
    breakdown,
    compare,
    count,
    diagnose,
    existence,
    explain,
    listing,
    status,
    unknown,
)
from qdsl.dsl.kinds.names import AnswerContract, EmptyResult, QueryType, VerifierCheck
from qdsl.dsl.kinds.record import (
    MANDATORY_CHECKS,
    PlannerPolicy,
    QueryKind,
    TemplateShape,
    needs_facts,
    needs_text,
)

__all__ = [
    "KINDS",
    "MANDATORY_CHECKS",
    "AnswerContract",
    "EmptyResult",
    "KindTable",
    "PlannerPolicy",
    "QueryKind",
    "QueryType",
    "TemplateShape",
    "VerifierCheck",
    "cue_table",
    "kind_for_contract",
    "kind_of",
    "needs_facts",
    "needs_text",
    "spelling_table",
]

# The registered kinds. A count is where a total could pass for a filtered count,
# so the substitution check is never optional there nor for a yes/no; a list or
# an existence answer can be cut, so within_limit runs by default.
_DECLARED: tuple[QueryKind, ...] = (
    existence.KIND,
    count.KIND,
    listing.KIND,
    status.KIND,
    explain.KIND,
    diagnose.KIND,
    compare.KIND,
    aggregate.KIND,
    breakdown.KIND,
    unknown.KIND,
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


def spelling_table(kinds: Iterable[QueryKind] | None = None) -> dict[str, QueryType]:
    """Every plan spelling of a query type besides its own value (`dsl.plan.closure`)."""
    out: dict[str, QueryType] = {}
    for kind in KINDS.values() if kinds is None else kinds:
        for word in kind.spellings:
            if out.setdefault(word, kind.query_type) is not kind.query_type:
                raise ValueError(f"plan word {word!r} names two query types")
    return out


def cue_table() -> tuple[tuple[QueryType, tuple[str, ...]], ...]:
    """The question cues of every kind, the winning kind first (`cue_rank`)."""
    ranked = sorted((k for k in KINDS.values() if k.cues), key=lambda k: k.cue_rank)
    return tuple((k.query_type, k.cues) for k in ranked)


T = TypeVar("T")


@dataclass
class KindTable(Generic[T]):
    """What one component registers per query type (the built-in renderers).

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
