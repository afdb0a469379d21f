"""The rule planner (zh + en): a plan built from the question's reading, nothing else.

Every name comes from the catalog through `qdsl.dsl.question.read_question`;
the planner only turns the reading's conditions, sort, limit and projection
into a `Plan`. A reading with problems (words no field carries, an ambiguous
name, a number without a field) becomes `unknown`, so the question clarifies
with the reading's own sentence instead of being answered beside the point.
"""

from __future__ import annotations

import threading
from collections.abc import Hashable
from datetime import UTC, datetime

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import (
    Aggregation,
    Filter,
    Grouping,
    Measure,
    ObjectRef,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Scope,
    Sort,
    SortDirection,
    ValueSource,
)
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.linking import TenantValues
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.plan.printer import to_text
from qdsl.dsl.question import Reading, problems_text, read_question
from qdsl.planner.base import PlanDraft


def context_entities(context: PlanContext | None) -> tuple[str, ...]:
    if context is None:
        return ()
    return tuple(dict.fromkeys(r.entity_type for r in context.referenced_objects))


def _referenced(reading: Reading, context: PlanContext | None) -> tuple[ObjectRef, ...]:
    """Objects of the conversation the question points at (它, this project)."""
    if not reading.pronoun or context is None or reading.entity is None:
        return ()
    return tuple(r for r in context.referenced_objects if r.entity_type == reading.entity)


def plan_from_reading(
    reading: Reading, catalog: Catalog, context: PlanContext | None = None
) -> Plan:
    """The plan a reading states; `unknown` when the reading is not understood.

    Built once per distinct input: the plan depends only on the reading's
    conditions (values with their types), sort, limit, projection, grouping, ids, entity
    and query type, the objects referenced, and the catalog's content; plans
    are immutable, so one is shared."""
    refs = _referenced(reading, context)
    key = (
        catalog.content_key,
        reading.entity,
        reading.entity_named,
        reading.query_type,
        reading.understood,
        reading.pronoun,
        reading.ids,
        # typed: 1, 1.0 and True are equal keys but different plans
        tuple((c, _typed(c.value)) for c in reading.conditions),
        reading.sort,
        reading.limit,
        reading.projection,
        reading.group_by,
        refs,
        (reading.function, reading.measure),
    )
    try:
        hit = _PLANS.get(key)
    except TypeError:  # an unhashable value: built afresh
        return _plan_from_reading(reading, catalog, refs)
    if hit is None:
        hit = _plan_from_reading(reading, catalog, refs)
        with _PLANS_LOCK:
            _PLANS[key] = hit
            while len(_PLANS) > _PLANS_SIZE:
                _PLANS.pop(next(iter(_PLANS)))
    return hit


def _typed(value: object) -> object:
    if isinstance(value, tuple):
        return tuple(_typed(v) for v in value)
    return type(value), value


_PLANS: dict[Hashable, Plan] = {}
_PLANS_SIZE = 1024
_PLANS_LOCK = threading.Lock()


def _plan_from_reading(reading: Reading, catalog: Catalog, refs: tuple[ObjectRef, ...]) -> Plan:
    entity = reading.entity or next(iter(catalog.entities))
    if not reading.understood or (reading.pronoun and not refs and not reading.ids):
        return Plan(query_type=QueryType.UNKNOWN, entity_type=entity)
    assert reading.query_type is not None
    ent = catalog.entities[entity]
    filters = [
        Filter(field=c.field, operator=c.operator, value=c.value) for c in reading.conditions
    ]
    if refs and not reading.ids:
        ids = tuple(r.id for r in refs)
        filters.insert(
            0,
            Filter(
                field=ent.id,
                operator=Operator.EQUALS if len(ids) == 1 else Operator.IN,
                value=ids[0] if len(ids) == 1 else ids,
                value_source=ValueSource.REFERENCED_OBJECT,
            ),
        )
    sort = [Sort(field=f, direction=d) for f, d in reading.sort]
    limit = reading.limit
    qt = reading.query_type
    policy = kind_of(qt).policy
    if policy.latest_when_unnamed and not reading.ids and not sort and ent.default_sort:
        # "为什么答错了": the latest matching object is the one meant.
        sort.append(Sort(field=ent.default_sort[0], direction=SortDirection.DESC))
        limit = 1
    projection: tuple[str, ...] = ()
    # the aggregate states its measure, a breakdown the one its question computes per
    # group (none: it counts); another measure kind reads its projection
    per_group = qt is QueryType.BREAKDOWN and bool(reading.function or reading.measure)
    measure = _measure(reading) if qt is QueryType.AGGREGATE or per_group else None
    if reading.projection and measure is None:
        # a measure is the field named, alone; a shown field joins the defaults
        shown = () if policy.measure else ent.default_projection
        projection = tuple(dict.fromkeys((*shown, *reading.projection)))
    fallback = policy.text_fallback or any(
        c.textual and c.field in ent.fields and ent.fields[c.field].is_fact
        for c in reading.conditions
    )
    return Plan(
        query_type=qt,
        entity_type=entity,
        filters=tuple(filters),
        scope=Scope(referenced_objects=refs),
        projection=projection,
        sort=tuple(sort),
        group_by=tuple(Grouping(field=f, grain=g) for f, g in reading.group_by),
        limit=limit,
        retrieval_policy=RetrievalPolicy(allow_fallback_text=fallback),
        measure=measure,
    )


def _measure(reading: Reading) -> Measure:
    """The measure the question reads: a declared one, or its function over the one
    field it names (none: the rows)."""
    if reading.measure is not None:
        return Measure(name=reading.measure)
    field = reading.projection[0] if reading.projection else None
    return Measure(function=Aggregation(reading.function or "sum"), field=field)


def intended_query_type(question: str, catalog: Catalog) -> QueryType | None:
    """The query type the question's wording asks for, None when the rules cannot tell."""
    reading = read_question(question, catalog)
    return reading.query_type if reading.understood else None


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
        now: datetime | None = None,
        values: TenantValues | None = None,
    ) -> PlanDraft:
        reading = read_question(
            question,
            catalog,
            now=now or datetime.now(UTC),
            values=values,
            context_entities=context_entities(context),
        )
        plan, notes = self.plan_reading(
            reading, catalog=catalog, context=context, feedback=feedback
        )
        return PlanDraft(text=to_text(plan), planner=self.name, notes=notes)

    def plan_reading(
        self,
        reading: Reading,
        *,
        catalog: Catalog,
        context: PlanContext | None = None,
        feedback: str | None = None,
    ) -> tuple[Plan, tuple[str, ...]]:
        """The plan object for a reading the caller already made (no print/reparse)."""
        plan = plan_from_reading(reading, catalog, context)
        notes: list[str] = []
        if reading.problems:
            notes.append(problems_text(reading.problems, reading.entity, reading.language))
        if reading.query_type is None:
            notes.append("no query-type cue")
        if reading.entity is None:
            notes.append("no entity named")
        if feedback is not None:
            # Rules give the same reading twice; say so rather than pretend to learn.
            notes.append("feedback ignored: the rule planner is deterministic")
        return plan, tuple(notes)
