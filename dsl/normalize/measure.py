"""A plan's measure: what an aggregate computes, checked against the catalog.

Checked here so that a plan an LLM or the rule planner wrote is refused as a
plan (typed, with the alternatives in the hint), not when it runs:
* a function over a field runs only where the field's catalog `aggregations`
  list it; `count()` (the rows) is always allowed; a sensitive field is never
  aggregated;
* a declared measure must be one of the entity's, its function (or ratio)
  coming from the catalog only;
* the legacy `aggregate <entity> select <field>` means `sum(<field>)`: it is
  rewritten into the measure, so a normalized aggregate always states one;
* a breakdown's measure (a sum or an average per group) is checked the same way;
  `count()` is what a breakdown computes without one, and is dropped so that a
  count per group has one normalized form.
"""

from __future__ import annotations

from qdsl.dsl.catalog import EntitySpec, MeasureSpec
from qdsl.dsl.errors import PlanError, PolicyError
from qdsl.dsl.ir import Aggregation, Measure, Plan, QueryType
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.kinds.aggregate import measure_of
from qdsl.dsl.normalize.entity import entity_of
from qdsl.dsl.normalize.env import Env, where
from qdsl.dsl.normalize.names import is_sensitive
from qdsl.dsl.suggest import did_you_mean, suggest

_PATH = "measure"


def bind_measure(plan: Plan, env: Env) -> Plan:
    if plan.measure is None and plan.query_type is not QueryType.AGGREGATE:
        return plan  # (another measure kind reads its own projection)
    policy = kind_of(plan.query_type).policy
    if policy.optional_measure and plan.measure is not None:
        # a breakdown's measure; `count()` is what it computes without one: one shape
        bound = bound_measure(entity_of(plan, env), plan.measure)
        counts = bound.function is Aggregation.COUNT and bound.field is None
        kept = None if counts else bound
        return plan if kept == plan.measure else plan.model_copy(update={"measure": kept})
    if not policy.measure:
        assert plan.measure is not None
        raise PlanError(
            "measure_not_allowed",
            f"a {plan.query_type.value} plan computes no measure",
            hint="write `aggregate <entity> ... measure <function>(<field>)`, "
            "or leave the measure out",
            details=where(_PATH, plan.measure.span),
        )
    ent = entity_of(plan, env)
    if plan.measure is None:
        field = measure_of(ent, plan.projection)
        measure = Measure(function=Aggregation.SUM, field=field)
        return plan.model_copy(update={"measure": measure, "projection": ()})
    measure = bound_measure(ent, plan.measure)
    named = {ent.names.get(n, n) for n in plan.projection}
    if named - {measure.field}:
        raise PlanError(
            "measure_not_named",
            f"the plan names its measure twice: `select {', '.join(plan.projection)}` "
            "besides its measure",
            hint="state the measure once, in `measure`; leave `select` out",
            details=where("projection", None, entity=ent.name),
        )
    if measure == plan.measure and not plan.projection:
        return plan
    return plan.model_copy(update={"measure": measure, "projection": ()})


def bound_measure(ent: EntitySpec, measure: Measure) -> Measure:
    """The measure with its names bound to the catalog, or the error saying why not."""
    if measure.name is not None:
        return _declared(ent, measure)
    function = measure.function
    assert function is not None  # the IR holds a name or a function
    if measure.field is None:
        if function is Aggregation.COUNT:
            return measure
        raise _not_allowed(ent, measure, f"`{function.value}` needs a field", function)
    field = ent.names.get(measure.field, measure.field)
    if is_sensitive(ent, measure.field, field):
        raise PolicyError(
            "sensitive_field",
            f"`{measure.field}` is a sensitive field of {ent.name} and cannot be aggregated",
            hint=f"remove `{measure.field}` from the plan; sensitive fields are never aggregated",
            retryable=False,
            details=where(_PATH, measure.span, entity=ent.name, field=measure.field),
        )
    if function is Aggregation.COUNT:
        raise _not_allowed(
            ent,
            measure,
            f"`count` counts rows, not the values of {ent.name}.{field}",
            function,
            hint=f"write count() for the rows, or count_distinct({field}) for its values",
        )
    spec = ent.fields.get(field)
    if spec is None and not (field == ent.id and function is Aggregation.COUNT_DISTINCT):
        known = sorted(aggregable(ent))
        raise PlanError(
            "unknown_field",
            f"`{measure.field}` is not a field of {ent.name} that can be aggregated",
            hint=did_you_mean(
                suggest(measure.field, known) if known else (), known, f"fields of {ent.name}"
            ),
            details=where(_PATH, measure.span, entity=ent.name, field=measure.field),
        )
    if spec is not None and function not in spec.aggregations:
        raise _not_allowed(
            ent, measure, f"{ent.name}.{field} does not allow {function.value}", function
        )
    return measure if field == measure.field else measure.model_copy(update={"field": field})


def aggregable(ent: EntitySpec) -> dict[str, tuple[Aggregation, ...]]:
    """Field -> the functions the catalog lets a plan apply to it."""
    return {
        name: spec.aggregations
        for name, spec in ent.fields.items()
        if spec.aggregations and not spec.sensitive
    }


def _not_allowed(
    ent: EntitySpec, measure: Measure, message: str, function: Aggregation, hint: str = ""
) -> PlanError:
    allowed = aggregable(ent)
    fields = sorted(name for name, fns in allowed.items() if function in fns)
    own = allowed.get(ent.names.get(measure.field or "", measure.field or ""), ())
    if not hint:
        parts = []
        if own:
            parts.append(f"{measure.field} allows {', '.join(f.value for f in own)}")
        if fields:
            parts.append(f"fields of {ent.name} with {function.value}: {', '.join(fields)}")
        parts.append("count() counts the rows")
        if ent.measures:
            parts.append(f"declared measures: {', '.join(sorted(ent.measures))}")
        hint = "; ".join(parts)
    return PlanError(
        "aggregation_not_allowed",
        message,
        hint=hint,
        details=where(
            _PATH,
            measure.span,
            entity=ent.name,
            field=measure.field,
            function=function.value,
            allowed=fields,
        ),
    )


def _declared(ent: EntitySpec, measure: Measure) -> Measure:
    name = measure.name
    assert name is not None
    known = sorted(ent.measures)
    found = ent.measures.get(name) or next(
        (m for key, m in ent.measures.items() if key.casefold() == name.casefold()), None
    )
    if found is None:
        spellings = {key: key for key in known}
        spellings.update((s, key) for key, m in ent.measures.items() for s in m.synonyms)
        raise PlanError(
            "unknown_measure",
            f"{ent.name} declares no measure `{name}`",
            hint=did_you_mean(
                suggest(name, spellings) if spellings else (), known, f"measures of {ent.name}"
            )
            + "; or write a function over a field: measure avg(<field>)",
            details=where(_PATH, measure.span, entity=ent.name, measure=name, allowed=known),
        )
    key = next(k for k, m in ent.measures.items() if m is found)
    parts = (found.numerator, found.denominator) if found.is_ratio else ()
    if any(part is None or part not in ent.measures for part in parts):
        local = sorted(k for k, m in ent.measures.items() if not _across(ent, m))
        raise PlanError(
            "measure_not_supported",
            f"`{key}` is a ratio of measures of related entities, which an aggregate "
            "does not compute yet",
            hint=f"measures of {ent.name} it computes: {', '.join(local) or 'none'}",
            details=where(_PATH, measure.span, entity=ent.name, measure=key),
        )
    return measure if key == name else measure.model_copy(update={"name": key})


def _across(ent: EntitySpec, m: MeasureSpec) -> bool:
    return m.is_ratio and any(p not in ent.measures for p in (m.numerator, m.denominator))
