"""The rule planner (zh + en): cues, catalog synonyms and aliases, ids.

It writes plan TEXT through the canonical printer and says `unknown` whenever
it is not sure: a clarifying question beats a confident wrong plan.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy, Sort, SortDirection
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.printer import to_text
from qdsl.dsl.textnorm import normalize_text
from qdsl.planner.base import PlanDraft
from qdsl.planner.cues import RECENT, classify
from qdsl.planner.lexicon import Mention, bare_numbers, find_ids, find_mentions

# Where a question names no entity, these kinds of question still have one.
_DEFAULT_ENTITY: dict[QueryType, str] = {
    QueryType.EXPLAIN: "doc",
    QueryType.DIAGNOSE: "run",
}


@dataclass
class Reading:
    """What the rule planner understood; `query_type` UNKNOWN when unsure."""

    query_type: QueryType
    entity: str | None
    filters: list[Filter] = field(default_factory=list)
    sort: list[Sort] = field(default_factory=list)
    limit: int | None = None
    fallback_text: bool = False
    notes: list[str] = field(default_factory=list)

    def unknown(self, why: str) -> Reading:
        self.notes.append(why)
        self.query_type = QueryType.UNKNOWN
        return self


def _choose_entity(
    qt: QueryType, mentions: list[Mention], ids: dict[str, list[str]], catalog: Catalog
) -> tuple[str | None, tuple[str, str] | None]:
    """The entity asked about, and (field, referenced entity) when ids belong to another."""
    named = list(dict.fromkeys(m.entity for m in mentions if m.field is None))
    for main in named:
        if main in ids:
            continue
        ent = catalog.entities[main]
        for fname, spec in ent.fields.items():
            if spec.references in ids and spec.references != main:
                return main, (fname, spec.references)
    with_ids = [e for e in named if e in ids]
    if with_ids:
        return with_ids[0], None
    fitting = [e for e in named if qt in catalog.entities[e].query_types]
    if fitting:
        return fitting[0], None
    if named:
        return named[0], None
    owners = list(dict.fromkeys(m.entity for m in mentions if m.field is not None))
    if qt in _DEFAULT_ENTITY and (not owners or _DEFAULT_ENTITY[qt] in owners):
        return _DEFAULT_ENTITY[qt], None
    if len(owners) == 1:
        return owners[0], None
    return None, None


def _value_filters(entity: str, mentions: list[Mention], ent: EntitySpec) -> list[Filter]:
    by_field: dict[tuple[str, bool], list[str]] = {}
    for m in mentions:
        if m.entity != entity or m.field is None or m.value is None:
            continue
        bucket = by_field.setdefault((m.field, m.negated), [])
        if m.value not in bucket:
            bucket.append(m.value)
    out: list[Filter] = []
    for (fname, negated), values in by_field.items():
        spec = ent.fields[fname]
        if len(values) > 1:
            op = Operator.NOT_IN if negated else Operator.IN
            out.append(Filter(field=fname, operator=op, value=tuple(values)))
        elif negated:
            out.append(Filter(field=fname, operator=Operator.NOT_EQUALS, value=values[0]))
        elif spec.is_fact and Operator.EQUALS_OR_ALIAS in spec.operators:
            out.append(Filter(field=fname, operator=Operator.EQUALS_OR_ALIAS, value=values[0]))
        else:
            out.append(Filter(field=fname, operator=Operator.EQUALS, value=values[0]))
    return out


def read_question(question: str, catalog: Catalog) -> Reading:
    text = normalize_text(question)
    qt = classify(text)
    mentions = find_mentions(text, catalog)
    ids = find_ids(text, catalog)
    if qt is None:
        return Reading(QueryType.UNKNOWN, None).unknown("no query-type cue")
    entity, via = _choose_entity(qt, mentions, ids, catalog)
    reading = Reading(qt, entity)
    if entity is None:
        return reading.unknown("no entity named")
    ent = catalog.entities[entity]
    own_ids = ids.get(entity, [])
    if own_ids and qt is QueryType.COMPARE:
        own_ids = list(dict.fromkeys([*own_ids, *bare_numbers(text)]))
    if via is not None:
        fname, ref = via
        values = ids[ref]
        op = Operator.EQUALS if len(values) == 1 else Operator.IN
        value = values[0] if len(values) == 1 else tuple(values)
        reading.filters.append(Filter(field=fname, operator=op, value=value))
    elif own_ids:
        op = Operator.EQUALS if len(own_ids) == 1 else Operator.IN
        value = own_ids[0] if len(own_ids) == 1 else tuple(own_ids)
        reading.filters.append(Filter(field="id", operator=op, value=value))
    reading.filters.extend(_value_filters(entity, mentions, ent))
    for flt in reading.filters:
        spec = ent.fields.get(flt.field)
        if spec is not None and flt.operator not in spec.operators:
            return reading.unknown(
                f"{entity}.{flt.field} cannot be asked with {flt.operator.value}"
            )
    if qt is QueryType.EXPLAIN and entity != "doc" and own_ids:
        reading.query_type = qt = QueryType.STATUS
    if qt not in ent.query_types:
        return reading.unknown(f"{entity} does not answer {qt.value} questions")
    if qt is QueryType.STATUS and not own_ids:
        return reading.unknown("a status question needs the object's id")
    if qt is QueryType.COMPARE and len(own_ids) < 2:
        return reading.unknown("a comparison needs at least two ids")
    if qt is QueryType.DIAGNOSE and not own_ids and ent.default_sort is not None:
        # "为什么刚才答错了": the latest matching run is the one meant.
        reading.sort.append(Sort(field=ent.default_sort[0], direction=SortDirection.DESC))
        reading.limit = 1
    elif RECENT.search(text) and qt is QueryType.STATUS and ent.default_sort is not None:
        reading.sort.append(Sort(field=ent.default_sort[0], direction=SortDirection.DESC))
    reading.fallback_text = qt is QueryType.EXPLAIN
    return reading


def reading_to_plan(reading: Reading, catalog: Catalog) -> Plan:
    entity = reading.entity or next(iter(catalog.entities))
    if reading.query_type is QueryType.UNKNOWN:
        return Plan(query_type=QueryType.UNKNOWN, entity_type=entity)
    return Plan(
        query_type=reading.query_type,
        entity_type=entity,
        filters=tuple(reading.filters),
        sort=tuple(reading.sort),
        limit=reading.limit,
        retrieval_policy=RetrievalPolicy(allow_fallback_text=reading.fallback_text),
    )


def intended_query_type(question: str, catalog: Catalog) -> QueryType | None:
    """The query type the question's wording asks for, None when the rules cannot tell."""
    qt = read_question(question, catalog).query_type
    return None if qt is QueryType.UNKNOWN else qt


class RulePlanner:
    """The built-in planner: deterministic, zh and en, catalog-driven."""

    name = "rule"

    def plan(
        self,
        question: str,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> PlanDraft:
        reading = read_question(question, catalog)
        notes = list(reading.notes)
        if feedback is not None:
            # Rules give the same reading twice; say so rather than pretend to learn.
            notes.append("feedback ignored: the rule planner is deterministic")
        text = to_text(reading_to_plan(reading, catalog))
        return PlanDraft(text=text, planner=self.name, notes=tuple(notes))
