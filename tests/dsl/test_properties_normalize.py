"""Properties of the normalizer over a catalog-aware plan strategy.

(c) normalization is idempotent; a normalized plan never holds a sensitive name,
never exceeds its entity's max_limit, and names only catalog things; anything
the normalizer refuses is a user error, never a crash.
"""

from __future__ import annotations

from typing import Any

from hypothesis import example, given, settings
from hypothesis import strategies as st

from qdsl.dsl.catalog import EVIDENCE_PROJECTION, FieldType, demo_catalog
from qdsl.dsl.errors import QdslError, UserError
from qdsl.dsl.ir import (
    AnswerContract,
    Filter,
    ObjectRef,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Scalar,
    Scope,
    Sort,
    SortDirection,
    Value,
    ValueSource,
    VerifierCheck,
)
from qdsl.dsl.kinds import KINDS
from qdsl.dsl.normalize import DEFAULT_RULES, Env, NormalizedPlan, PlanContext, normalize
from qdsl.dsl.normalize.names import field_spec, filterable

CAT = demo_catalog()
SETTINGS = settings(max_examples=200, deadline=None)


def _variants(word: str) -> st.SearchStrategy[str]:
    return st.sampled_from([word, word.upper(), word.title(), word[:-1] or word, word + "s"])


ENTITY_WORDS = sorted(
    {*CAT.entities, *(s for e in CAT.entities.values() for s in e.synonyms), "projcet", "nothing"}
)
TENANTS = st.sampled_from(["t1", "t2"])


def _names(ent_key: str) -> list[str]:
    e = CAT.entities[ent_key]
    return sorted(
        {
            *e.fields,
            *e.names,
            *e.whitelisted,
            *e.sensitive,
            *e.sorts,
            e.id,
            e.label,
            EVIDENCE_PROJECTION,
            "evidence",
        }
    )


def _spellings(ent_key: str) -> list[str]:
    e = CAT.entities[ent_key]
    out = {v for f in e.fields.values() for v in f.values}
    out |= {a for f in e.fields.values() for al in f.aliases.values() for a in al}
    return sorted(out)


def scalars(ent_key: str) -> st.SearchStrategy[Scalar]:
    words = _spellings(ent_key) or ["x"]
    return st.one_of(
        st.sampled_from(words),
        _variants(words[0]),
        st.text(max_size=8),
        st.integers(-5, 10**6),
        st.floats(allow_nan=True, allow_infinity=True),
        st.booleans(),
        st.sampled_from(["2026-01-01", "2026-11-01T00:00:00Z", "2026-02-30", "64"]),
    )


def values(ent_key: str) -> st.SearchStrategy[Value]:
    s = scalars(ent_key)
    return st.one_of(st.none(), s, st.lists(s, max_size=3).map(tuple))


def mostly(good: st.SearchStrategy[Any], bad: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """Good draws about four times in five, so that many plans get through."""
    return st.integers(0, 4).flatmap(lambda n: bad if n == 0 else good)


def fitting_scalars(ent_key: str, field: str) -> st.SearchStrategy[Scalar]:
    spec = field_spec(CAT.entities[ent_key], field)
    assert spec is not None
    kind = spec.type
    if kind is FieldType.NUMBER:
        return st.one_of(st.integers(-100, 10**6), st.floats(-1e6, 1e6))
    if kind in (FieldType.DATE, FieldType.DATETIME):
        return st.dates().map(lambda d: d.isoformat())
    if kind is FieldType.BOOL:
        return st.booleans()
    if kind is FieldType.ID:
        return st.one_of(st.sampled_from(["64", "65", "12"]), st.integers(0, 999))
    words = [*spec.values, *(a for al in spec.aliases.values() for a in al)]
    if kind is FieldType.ENUM:
        return st.sampled_from(words).flatmap(_variants)
    return st.one_of(st.sampled_from(words or ["x"]), st.text(min_size=1, max_size=8))


@st.composite
def fitting_filters(draw: st.DrawFn, ent_key: str) -> Filter:
    ent = CAT.entities[ent_key]
    field = draw(st.sampled_from([n for n in filterable(ent) if n not in ent.sensitive]))
    spec = field_spec(ent, field)
    assert spec is not None
    op = draw(st.sampled_from(spec.operators))
    one = fitting_scalars(ent_key, field)
    value: Value
    if op is Operator.IS_NULL:
        value = draw(st.booleans())
    elif op in (Operator.IN, Operator.NOT_IN):
        value = tuple(draw(st.lists(one, min_size=1, max_size=3)))
    elif op is Operator.BETWEEN:
        value = tuple(sorted(draw(st.lists(one, min_size=2, max_size=2))))
    else:
        value = draw(one)
    return Filter(field=field, operator=op, value=value)


@st.composite
def any_filters(draw: st.DrawFn, ent_key: str) -> Filter:
    return Filter(
        field=draw(
            st.one_of(
                st.sampled_from(_names(ent_key)), st.from_regex(r"[a-z_]{1,8}", fullmatch=True)
            )
        ),
        operator=draw(st.sampled_from(Operator)),
        value=draw(values(ent_key)),
        value_source=draw(st.sampled_from(ValueSource)),
    )


def filters(ent_key: str) -> st.SearchStrategy[Filter]:
    return mostly(fitting_filters(ent_key), any_filters(ent_key))


def object_refs() -> st.SearchStrategy[ObjectRef]:
    return st.builds(
        ObjectRef,
        entity_type=mostly(st.sampled_from(sorted(CAT.entities)), st.sampled_from(ENTITY_WORDS)),
        id=st.sampled_from(["64", "65", "12"]),
    )


@st.composite
def plans(draw: st.DrawFn) -> Plan:
    """Plans close enough to the catalog that many normalize and many are refused."""
    ent_key = draw(st.sampled_from(sorted(CAT.entities)))
    ent = CAT.entities[ent_key]
    written_entity = draw(
        mostly(st.sampled_from([ent_key, *ent.synonyms]), st.sampled_from(ENTITY_WORDS))
    )
    qt = draw(mostly(st.sampled_from(ent.query_types), st.sampled_from(QueryType)))
    names = st.sampled_from(_names(ent_key))
    projectable = st.sampled_from(sorted(ent.whitelisted | {"evidence", *ent.names}))
    return Plan(
        query_type=qt,
        entity_type=written_entity,
        answer_contract=draw(
            mostly(st.sampled_from([None, KINDS[qt].contract]), st.sampled_from(AnswerContract))
        ),
        filters=tuple(draw(st.lists(filters(ent_key), max_size=3))),
        scope=Scope(
            tenant_id=draw(mostly(st.sampled_from([None, "t1"]), TENANTS)),
            project_id=draw(st.one_of(st.none(), st.just("64"))),
            referenced_objects=tuple(
                draw(mostly(st.just([]), st.lists(object_refs(), max_size=3)))
            ),
        ),
        projection=tuple(draw(st.lists(mostly(projectable, names), max_size=5))),
        sort=tuple(
            draw(
                st.lists(
                    st.builds(
                        Sort,
                        field=mostly(st.sampled_from(ent.sorts or ("x",)), names),
                        direction=st.sampled_from(SortDirection),
                    ),
                    max_size=3,
                )
            )
        ),
        limit=draw(st.one_of(st.none(), st.integers(1, 300), st.just(10**9))),
        retrieval_policy=draw(
            st.builds(
                RetrievalPolicy,
                facts_first=st.booleans(),
                allow_fallback_text=st.booleans(),
                require_fresh_fact=st.booleans(),
                freshness_days=st.one_of(st.none(), st.integers(1, 365)),
            )
        ),
        verifier_checks=tuple(draw(st.lists(st.sampled_from(VerifierCheck), max_size=4))),
        clarify_on_empty=draw(st.booleans()),
    )


contexts = st.one_of(
    st.none(),
    st.builds(
        PlanContext,
        tenant_id=mostly(st.sampled_from([None, "t1"]), TENANTS),
        project_id=st.one_of(st.none(), st.just("65")),
        thread_anchor=st.one_of(st.none(), st.just("m2")),
        referenced_objects=st.lists(object_refs(), max_size=2).map(tuple),
    ),
)


def attempt(p: Plan, ctx: PlanContext | None) -> NormalizedPlan | None:
    try:
        return normalize(p, CAT, ctx)
    except QdslError as exc:
        assert isinstance(exc, UserError), exc.to_dict()
        assert "path" in exc.details, exc.to_dict()
        return None


def assert_invariants(plan: Plan, ctx: PlanContext | None) -> None:
    ent = CAT.entities[plan.entity_type]
    assert plan.answer_contract is KINDS[plan.query_type].contract
    assert plan.verifier_checks
    names: list[Any] = [
        *plan.projection,
        *(f.field for f in plan.filters),
        *(s.field for s in plan.sort),
    ]
    assert not set(names) & ent.sensitive
    assert set(plan.projection) <= ent.whitelisted | {EVIDENCE_PROJECTION}
    # an aggregate states its field once, in its measure (`select budget` becomes
    # `measure sum(budget)`); every other plan shows fields
    measured = plan.measure is not None and KINDS[plan.query_type].policy.measure
    assert plan.projection or measured
    assert {s.field for s in plan.sort} <= set(ent.sorts)
    if plan.query_type is QueryType.COUNT:
        assert plan.limit is None
    else:
        assert plan.limit is not None and plan.limit <= ent.max_limit
    if ctx is not None and ctx.tenant_id is not None:
        assert plan.scope.tenant_id == ctx.tenant_id
    assert all(r.entity_type in CAT.entities for r in plan.scope.referenced_objects)


@SETTINGS
@given(plans(), contexts)
# found by the property: `select budget` on an aggregate is its measure
@example(Plan(query_type=QueryType.AGGREGATE, entity_type="project", projection=("budget",)), None)
def test_normalize_is_idempotent_and_keeps_its_guarantees(p: Plan, ctx: PlanContext | None) -> None:
    out = attempt(p, ctx)
    if out is None:
        return
    assert_invariants(out.plan, ctx)
    again = normalize(out.plan, CAT, ctx)
    assert again == NormalizedPlan(plan=out.plan, warnings=())
    # The JSON form of a normalized plan is the same plan.
    assert Plan.model_validate(out.plan.to_json_dict()) == out.plan


@SETTINGS
@given(plans(), contexts)
def test_every_rule_returns_a_normalized_plan_itself(p: Plan, ctx: PlanContext | None) -> None:
    """A rule with nothing to change hands back the very plan it got: no copy."""
    out = attempt(p, ctx)
    if out is None:
        return
    env = Env(catalog=CAT, context=ctx or PlanContext())
    for rule in DEFAULT_RULES:
        assert rule(out.plan, env) is out.plan, rule.__name__


@SETTINGS
@given(plans(), contexts)
def test_limit_never_exceeds_max_and_sensitive_never_survives(
    p: Plan, ctx: PlanContext | None
) -> None:
    out = attempt(p, ctx)
    if out is None:
        return
    ent = CAT.entities[out.plan.entity_type]
    assert (out.plan.limit or 0) <= ent.max_limit
    dumped = out.plan.to_json_dict()
    field_names = {*dumped["projection"], *(f["field"] for f in dumped["filters"])}
    field_names |= {s["field"] for s in dumped["sort"]}
    assert not field_names & ent.sensitive
