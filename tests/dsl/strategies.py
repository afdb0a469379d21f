"""Hypothesis strategies for raw plan IR (reusable by any test).

Plans drawn here are well-formed IR: names are identifiers, each filter value has
the shape its operator takes. They are not bound to a catalog (entity and field
names are arbitrary identifiers) and the contract need not match the query type.
Import as `from strategies import plans` from tests/dsl (pytest puts this
directory on sys.path).
"""

from __future__ import annotations

import re

from hypothesis import strategies as st

from qdsl.dsl.ir import (
    Aggregation,
    AnswerContract,
    Filter,
    Grain,
    Grouping,
    Measure,
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

_NAME = re.compile(r"[^\W\d]\w*")

# Mostly plain ASCII names (including words that are keywords elsewhere in the
# grammar), sometimes arbitrary Unicode identifiers.
KEYWORDS = (
    "plan", "where", "and", "select", "order", "by", "asc", "desc", "limit", "tenant",
    "project", "anchor", "about", "retrieval", "verify", "on_empty", "contract", "from",
    "in", "not", "between", "is", "null", "contains", "true", "false", "measure",
)  # fmt: skip

names: st.SearchStrategy[str] = st.one_of(
    st.from_regex(r"[a-z_][a-z0-9_]{0,12}", fullmatch=True),
    st.sampled_from((*KEYWORDS, "有没有", "项目", "market_theme")),
    st.from_regex(r"[^\W\d]\w{0,8}", fullmatch=True).filter(lambda s: bool(_NAME.fullmatch(s))),
)

texts: st.SearchStrategy[str] = st.text(max_size=20)

scalars: st.SearchStrategy[Scalar] = st.one_of(
    texts,
    st.integers(),
    st.floats(allow_nan=False, allow_infinity=False),
    st.booleans(),
)

_SCALAR_OPERATORS = tuple(
    op for op in Operator if op not in (Operator.IN, Operator.NOT_IN, Operator.BETWEEN)
    and op is not Operator.IS_NULL
)  # fmt: skip


@st.composite
def filters(draw: st.DrawFn) -> Filter:
    operator = draw(st.sampled_from(list(Operator)))
    value: Value
    if operator in (Operator.IN, Operator.NOT_IN):
        value = tuple(draw(st.lists(scalars, min_size=1, max_size=4)))
    elif operator is Operator.BETWEEN:
        value = (draw(scalars), draw(scalars))
    elif operator is Operator.IS_NULL:
        value = draw(st.booleans())
    else:
        value = draw(scalars)
    return Filter(
        field=draw(names),
        operator=operator,
        value=value,
        value_source=draw(st.sampled_from(list(ValueSource))),
    )


sorts: st.SearchStrategy[Sort] = st.builds(
    Sort, field=names, direction=st.sampled_from(list(SortDirection))
)

# a breakdown's keys: any name, with or without a grain
groupings: st.SearchStrategy[Grouping] = st.builds(
    Grouping, field=names, grain=st.none() | st.sampled_from(list(Grain))
)

object_refs: st.SearchStrategy[ObjectRef] = st.builds(
    ObjectRef,
    entity_type=names,
    id=st.one_of(st.from_regex(r"[0-9]{1,4}", fullmatch=True), st.text(min_size=1, max_size=10)),
)

scopes: st.SearchStrategy[Scope] = st.builds(
    Scope,
    tenant_id=st.none() | texts,
    project_id=st.none() | texts,
    referenced_objects=st.lists(object_refs, max_size=3).map(tuple),
)

retrieval_policies: st.SearchStrategy[RetrievalPolicy] = st.builds(
    RetrievalPolicy,
    facts_first=st.booleans(),
    allow_fallback_text=st.booleans(),
    require_fresh_fact=st.booleans(),
    freshness_days=st.none() | st.integers(min_value=1, max_value=36500),
)

# A function over a field (count also over none), or a declared measure's name.
measures: st.SearchStrategy[Measure] = st.one_of(
    st.builds(Measure, function=st.sampled_from(list(Aggregation)), field=st.none() | names),
    st.builds(Measure, name=names),
)

plans: st.SearchStrategy[Plan] = st.builds(
    Plan,
    query_type=st.sampled_from(list(QueryType)),
    entity_type=names,
    answer_contract=st.none() | st.sampled_from(list(AnswerContract)),
    filters=st.lists(filters(), max_size=4).map(tuple),
    scope=scopes,
    projection=st.lists(names, max_size=4).map(tuple),
    sort=st.lists(sorts, max_size=3).map(tuple),
    group_by=st.lists(groupings, max_size=2).map(tuple),
    limit=st.none() | st.integers(min_value=1, max_value=10**9),
    retrieval_policy=retrieval_policies,
    verifier_checks=st.lists(st.sampled_from(list(VerifierCheck)), max_size=4).map(tuple),
    clarify_on_empty=st.booleans(),
    measure=st.none() | measures,
)
