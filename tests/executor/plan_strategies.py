"""Hypothesis strategies for executable plans over the demo data.

Values are drawn from the data itself (any tenant), so generated filters hit
rows in some tenants and miss in others: the interesting case for isolation.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from exec_support import CATALOG, Snapshot
from hypothesis import strategies as st

from qdsl.dsl.catalog import EntitySpec, FieldType
from qdsl.dsl.ir import (
    Filter,
    ObjectRef,
    Operator,
    Plan,
    QueryType,
    RetrievalPolicy,
    Scope,
    Sort,
    SortDirection,
)
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.main_facts import EVIDENCE_APART_ROWS

ROW_TYPES = (QueryType.EXISTENCE, QueryType.COUNT, QueryType.LIST)
ALL_TYPES = (*ROW_TYPES, QueryType.STATUS, QueryType.EXPLAIN, QueryType.DIAGNOSE, QueryType.COMPARE)


def _pool(data: Snapshot, entity: EntitySpec, column: str) -> list[Any]:
    seen = {r[column] for r in data[entity.table] if r[column] is not None}
    return sorted(seen, key=str)


def _fact_pool(data: Snapshot, entity: EntitySpec, predicate: str) -> list[str]:
    return sorted(
        {
            f["value_text"]
            for f in data["semantic_facts"]
            if f["entity_type"] == entity.name and f["predicate"] == predicate
        }
    )


def _plain(value: Any) -> Any:
    return value.isoformat() if isinstance(value, datetime) else value


@st.composite
def _substring(draw: st.DrawFn, texts: list[str]) -> str:
    text = normalize_text(draw(st.sampled_from(texts or ["x"])))
    if not text:
        return "x"
    start = draw(st.integers(0, len(text) - 1))
    length = draw(st.integers(1, 4))
    return text[start : start + length] or text


# Text the databases fold differently unless the executor makes them agree:
# sharp s, dotted capital I, final sigma, full-width letters, CJK, combining marks.
NON_ASCII = ("ß", "ẞ", "İ", "ı", "Σ", "ΣΟΦΙΑΣ", "ＡＢＣ", "ｓｔａｔｕｓ", "東京", "e\u0301", "Å")


@st.composite
def non_ascii_variant(draw: st.DrawFn, text: str) -> str:
    """`text` as drawn, or changed in case, width or by a non-ASCII piece."""
    how = draw(st.integers(0, 5))
    if how == 1:
        return text.upper()
    if how == 2:
        return text.swapcase()
    if how == 3:
        return text + draw(st.sampled_from(NON_ASCII))
    if how == 4:
        # full-width forms of the ASCII letters and digits
        return "".join(chr(ord(c) + 0xFEE0) if "!" <= c <= "~" else c for c in text)
    return text


@st.composite
def filters(draw: st.DrawFn, data: Snapshot, entity: EntitySpec) -> Filter:
    choices: list[tuple[str, FieldType, tuple[Operator, ...], str | None, str | None]] = [
        (
            entity.id,
            FieldType.ID,
            (Operator.EQUALS, Operator.NOT_EQUALS, Operator.IN, Operator.NOT_IN),
            entity.id,
            None,
        ),
        (
            entity.label,
            FieldType.TEXT,
            (Operator.EQUALS, Operator.CONTAINS, Operator.IN),
            entity.label,
            None,
        ),
    ]
    for name, f in entity.fields.items():
        if not f.sensitive:
            # fact fields drawn more often: they are where facts-first differs most
            weight = 3 if f.is_fact else 1
            choices.extend([(name, f.type, f.operators, f.column, f.fact)] * weight)
    name, kind, ops, column, fact = draw(st.sampled_from(choices))
    op = draw(st.sampled_from(ops))
    spec = entity.fields.get(name)
    if fact is not None:
        pool = _fact_pool(data, entity, fact) + list(spec.aliases if spec else ())
        if spec is not None:
            pool += [s for spellings in spec.aliases.values() for s in spellings]
        pool = pool or ["none"]
    else:
        assert column is not None
        pool = [_plain(v) for v in _pool(data, entity, column)] or ["none"]
        if kind is FieldType.ENUM and spec is not None:
            pool = list(spec.values) + [s for sp in spec.aliases.values() for s in sp]
    if op is Operator.IS_NULL:
        return Filter(field=name, operator=op, value=draw(st.booleans()))
    if op is Operator.CONTAINS:
        texts = [str(v) for v in pool]
        term = draw(non_ascii_variant(draw(_substring(texts))))
        return Filter(field=name, operator=op, value=term)

    def one() -> Any:
        value = draw(st.sampled_from(pool))
        if kind is FieldType.TEXT or fact is not None:
            text = normalize_text(str(value)) if draw(st.booleans()) else str(value)
            return draw(non_ascii_variant(text))
        return value

    if op is Operator.BETWEEN:
        a, b = one(), one()
        lo, hi = sorted((a, b), key=lambda v: (str(type(v)), v))
        return Filter(field=name, operator=op, value=(lo, hi))
    if op in (Operator.IN, Operator.NOT_IN):
        size = draw(st.integers(1, 3))
        return Filter(field=name, operator=op, value=tuple(one() for _ in range(size)))
    return Filter(field=name, operator=op, value=one())


@st.composite
def plans(
    draw: st.DrawFn,
    data: Snapshot,
    *,
    query_types: tuple[QueryType, ...] = ROW_TYPES,
    fallback: bool = False,
) -> Plan:
    candidates = [
        (e, qt)
        for e, spec in CATALOG.entities.items()
        for qt in spec.query_types
        if qt in query_types
    ]
    entity_type, qt = draw(st.sampled_from(sorted(candidates)))
    entity = CATALOG.entity(entity_type)
    flts = tuple(draw(st.lists(filters(data, entity), max_size=2)))
    sort: tuple[Sort, ...] = ()
    if entity.sorts and draw(st.booleans()):
        sort = (
            Sort(
                field=draw(st.sampled_from(entity.sorts)),
                direction=draw(st.sampled_from(list(SortDirection))),
            ),
        )
    refs: tuple[ObjectRef, ...] = ()
    if (
        qt in (QueryType.STATUS, QueryType.DIAGNOSE, QueryType.COMPARE)
        or draw(st.integers(0, 4)) == 0
    ):
        ids = _pool(data, entity, entity.id)
        count = draw(st.integers(2 if qt is QueryType.COMPARE else 1, 3))
        refs = tuple(
            ObjectRef(entity_type=entity_type, id=draw(st.sampled_from(ids))) for _ in range(count)
        )
        if qt is QueryType.COMPARE and len({r.id for r in refs}) < 2:
            refs = (
                ObjectRef(entity_type=entity_type, id=ids[0]),
                ObjectRef(entity_type=entity_type, id=ids[1]),
            )
    fresh = draw(st.booleans())
    policy = RetrievalPolicy(
        facts_first=not fallback or draw(st.booleans()),
        allow_fallback_text=fallback and draw(st.booleans()),
        require_fresh_fact=fresh,
        freshness_days=draw(st.one_of(st.none(), st.integers(30, 400))) if fresh else None,
    )
    return Plan(
        query_type=qt,
        entity_type=entity_type,
        filters=flts,
        scope=Scope(referenced_objects=refs),
        sort=sort,
        # a page above EVIDENCE_APART_ROWS reads its evidence by the rows' ids
        limit=draw(
            st.one_of(
                st.integers(1, 30),
                st.integers(EVIDENCE_APART_ROWS + 1, EVIDENCE_APART_ROWS + 30),
            )
        ),
        retrieval_policy=policy,
    )
