"""Shared helpers for the executor tests: sample plans, a data snapshot, and a
plain-Python reference evaluation of a plan (the differential oracle).

Import as `from exec_support import ...` (pytest puts tests/executor on the path).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Engine

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldType, demo_catalog
from qdsl.dsl.ir import (
    Filter,
    Grouping,
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
from qdsl.executor.rows import Rows
from qdsl.executor.sqlite_functions import sql_lower
from qdsl.facts.demo.data import DEMO_NOW
from qdsl.facts.demo.tables import TABLES_BY_NAME as DEMO_TABLES
from qdsl.facts.tables import TABLES_BY_NAME as OWN_TABLES

TABLES_BY_NAME = {**DEMO_TABLES, **OWN_TABLES}

CATALOG: Catalog = demo_catalog()
NOW = DEMO_NOW
TENANTS = ("t1", "t2", "t3")


def _first_value(entity: EntitySpec) -> Filter | None:
    for name, f in entity.fields.items():
        if f.sensitive or f.column is None:
            continue
        if f.type is FieldType.ENUM:
            return Filter(field=name, operator=Operator.IN, value=tuple(f.values[:2]))
        if f.type is FieldType.NUMBER:
            return Filter(
                field=name,
                operator=f.operators[-1],
                value=(1, 5) if f.operators[-1] is Operator.BETWEEN else 1,
            )
        if f.type is FieldType.ID:
            return Filter(field=name, operator=Operator.EQUALS, value="64")
        if f.type is FieldType.TEXT and Operator.CONTAINS in f.operators:
            return Filter(field=name, operator=Operator.CONTAINS, value="a")
    return None


def _fact_filter(entity: EntitySpec) -> Filter | None:
    for name, f in entity.fields.items():
        if f.is_fact:
            value = next(iter(f.aliases), "timeout")
            op = (
                Operator.EQUALS_OR_ALIAS
                if Operator.EQUALS_OR_ALIAS in f.operators
                else f.operators[0]
            )
            return Filter(field=name, operator=op, value=value)
    return None


def sample_plan(entity_type: str, query_type: QueryType) -> Plan:
    """A representative plan for one covered pair (golden SQL, coverage tests)."""
    entity = CATALOG.entity(entity_type)
    filters = [f for f in (_first_value(entity), _fact_filter(entity)) if f is not None]
    scope = Scope()
    policy = RetrievalPolicy()
    sort: tuple[Sort, ...] = ()
    if query_type in (QueryType.STATUS, QueryType.DIAGNOSE):
        scope = Scope(referenced_objects=(ObjectRef(entity_type=entity_type, id="12"),))
        filters = filters[:1]
    elif query_type is QueryType.COMPARE:
        scope = Scope(
            referenced_objects=(
                ObjectRef(entity_type=entity_type, id="64"),
                ObjectRef(entity_type=entity_type, id="65"),
            )
        )
        filters = []
    elif query_type in (QueryType.EXISTENCE, QueryType.EXPLAIN):
        policy = RetrievalPolicy(
            allow_fallback_text=True, require_fresh_fact=True, freshness_days=90
        )
    elif query_type is QueryType.LIST and entity.sorts:
        sort = (Sort(field=entity.sorts[0], direction=SortDirection.DESC),)
    # an aggregate sums the first field that allows it
    summed = [n for n, f in entity.fields.items() if "sum" in f.aggregations]
    projection = tuple(summed[:1]) if query_type is QueryType.AGGREGATE else ()
    # a breakdown groups by the first field with grains (by its first) and an enum
    group_by: tuple[Grouping, ...] = ()
    if query_type is QueryType.BREAKDOWN:
        timed = [Grouping(field=n, grain=f.grains[0]) for n, f in entity.fields.items() if f.grains]
        enums = [
            Grouping(field=n) for n, f in entity.fields.items() if f.type == "enum" and f.column
        ]
        group_by = (*timed[:1], *enums[:1])
    return Plan(
        query_type=query_type,
        entity_type=entity_type,
        filters=tuple(filters),
        scope=scope,
        sort=sort,
        projection=projection,
        group_by=group_by,
        limit=10,
        retrieval_policy=policy,
    )


# -- data snapshot ---------------------------------------------------------------------

Snapshot = dict[str, list[dict[str, Any]]]


def snapshot(engine: Engine) -> Snapshot:
    """Every row of every demo table, read as the admin (fixtures connect as one)."""
    out: Snapshot = {}
    with engine.connect() as conn:
        for name in (
            "projects",
            "tasks",
            "docs",
            "runs",
            "signals",
            "users",
            "configs",
            "semantic_facts",
        ):
            table = TABLES_BY_NAME[name]
            out[name] = [dict(r) for r in conn.execute(sa.select(table)).mappings()]
    return out


# -- reference evaluation --------------------------------------------------------------


def ascii_lower(text: str) -> str:
    # The executor's lower() on both dialects (PostgreSQL's on a UTF-8 database,
    # registered on SQLite): the Unicode simple lowercase mapping.
    return str(sql_lower(text))


def _aliases(field_aliases: dict[str, tuple[str, ...]], value: Any) -> set[str]:
    norm = normalize_text(str(value))
    for canon, spellings in field_aliases.items():
        names = {normalize_text(canon), *(normalize_text(s) for s in spellings)}
        if str(value) == canon or norm in names:
            return names
    return {norm}


def _canonical(aliases: dict[str, tuple[str, ...]], value: Any) -> Any:
    norm = normalize_text(str(value))
    for canon, spellings in aliases.items():
        if norm in {normalize_text(canon), *(normalize_text(x) for x in spellings)}:
            return canon
    return value


def _as_dt(value: Any) -> datetime:
    moment = value if isinstance(value, datetime) else datetime.fromisoformat(str(value))
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def _cmp_value(kind: FieldType, value: Any) -> Any:
    if kind is FieldType.NUMBER:
        return float(value)
    if kind in (FieldType.DATE, FieldType.DATETIME):
        return _as_dt(value)
    return value


def _equality(kind: FieldType, v: Any, aliases: dict[str, tuple[str, ...]]) -> Any:
    """`eq(x)`: whether the stored value `v` equals the plan value `x` for this type."""
    if kind is FieldType.TEXT:
        lv = ascii_lower(v) if isinstance(v, str) else v
        return lambda x: lv is not None and lv == normalize_text(str(x))
    if kind is FieldType.ENUM:
        return lambda x: v is not None and v == _canonical(aliases, x)
    return lambda x: v is not None and _cmp_value(kind, v) == _cmp_value(kind, x)


def _ordered_match(kind: FieldType, op: Operator, v: Any, value: Any) -> bool:
    """gt / gte / lt / lte / between over the typed stored value."""
    if v is None:
        return False
    left = _cmp_value(kind, v)
    if op is Operator.BETWEEN:
        lo, hi = value
        return bool(_cmp_value(kind, lo) <= left <= _cmp_value(kind, hi))
    right = _cmp_value(kind, value)
    return bool(
        {
            Operator.GT: left > right,
            Operator.GTE: left >= right,
            Operator.LT: left < right,
            Operator.LTE: left <= right,
        }[op]
    )


def _column_match(
    kind: FieldType, op: Operator, v: Any, value: Any, aliases: dict[str, tuple[str, ...]]
) -> bool:
    values = value if isinstance(value, tuple) else (value,)
    if op is Operator.IS_NULL:
        return (v is None) if value is not False else (v is not None)
    eq = _equality(kind, v, aliases)
    if op is Operator.EQUALS:
        return bool(eq(value))
    if op is Operator.NOT_EQUALS:
        return v is None or not eq(value)
    if op is Operator.IN:
        return any(eq(x) for x in values)
    if op is Operator.NOT_IN:
        return v is None or not any(eq(x) for x in values)
    if op is Operator.EQUALS_OR_ALIAS:
        if kind is FieldType.ENUM:
            return bool(v == _canonical(aliases, value))
        return v is not None and ascii_lower(v) in _aliases(aliases, value)
    if op is Operator.CONTAINS:
        return v is not None and normalize_text(str(value)) in ascii_lower(str(v))
    return _ordered_match(kind, op, v, value)


def _fresh(fact: dict[str, Any], plan: Plan, now: datetime) -> bool:
    policy = plan.retrieval_policy
    if not policy.require_fresh_fact:
        return True
    until = fact["valid_until"]
    if until is not None and not _as_dt(until) > now:
        return False
    if policy.freshness_days is not None:
        return _as_dt(fact["observed_at"]) >= now - timedelta(days=policy.freshness_days)
    return True


def _fact_match(
    flt: Filter, facts: list[dict[str, Any]], aliases: dict[str, tuple[str, ...]]
) -> bool:
    op = flt.operator
    values = flt.value if isinstance(flt.value, tuple) else (flt.value,)
    if op is Operator.IS_NULL:
        return (not facts) if flt.value is not False else bool(facts)
    if op is Operator.CONTAINS:
        return any(normalize_text(str(flt.value)) in f["value_norm"] for f in facts)
    names: set[str] = set()
    for v in values:
        names |= _aliases(aliases, v)
    hit = any(f["value_norm"] in names for f in facts)
    return not hit if op in (Operator.NOT_EQUALS, Operator.NOT_IN) else hit


_POSITIVE = (Operator.EQUALS, Operator.EQUALS_OR_ALIAS, Operator.IN, Operator.CONTAINS)


def _matching_facts(
    plan: Plan, entity: EntitySpec, facts: list[dict[str, Any]], entity_id: str, now: datetime
) -> set[int]:
    """The facts of one entity that match a positive fact filter: its evidence."""
    out: set[int] = set()
    for flt in plan.filters:
        spec = entity.fields.get(entity.names.get(flt.field, flt.field))
        if spec is None or not spec.is_fact or flt.operator not in _POSITIVE:
            continue
        for f in facts:
            if (
                f["entity_id"] == entity_id
                and f["predicate"] == spec.fact
                and _fresh(f, plan, now)
                and _fact_match(flt, [f], spec.aliases)
            ):
                out.add(int(f["id"]))
    return out


@dataclass(frozen=True)
class Expected:
    ids: tuple[str, ...]
    count: int | None
    truncated: bool
    baseline_total: int | None
    # per returned id: the ids of the facts matching the plan's positive fact filters
    matched_facts: dict[str, set[int]]


def evaluate(plan: Plan, data: Snapshot, tenant: str, now: datetime = NOW) -> Expected:
    """What the plan means, evaluated in Python over the snapshot (no fallback)."""
    entity = CATALOG.entity(plan.entity_type)
    rows = [r for r in data[entity.table] if r["tenant_id"] == tenant]
    facts = [
        f
        for f in data["semantic_facts"]
        if f["tenant_id"] == tenant and f["entity_type"] == entity.name
    ]
    refs = {o.id for o in plan.scope.referenced_objects if o.entity_type == entity.name}

    def keep(row: dict[str, Any]) -> bool:
        if refs and row["id"] not in refs:
            return False
        for flt in plan.filters:
            name = entity.names.get(flt.field, flt.field)
            spec = entity.fields.get(name)
            if spec is not None and spec.is_fact:
                mine = [
                    f
                    for f in facts
                    if f["entity_id"] == row["id"]
                    and f["predicate"] == spec.fact
                    and _fresh(f, plan, now)
                ]
                if not _fact_match(flt, mine, spec.aliases):
                    return False
                continue
            if spec is not None:
                kind, column, aliases = spec.type, spec.column, spec.aliases
            elif name == entity.id:
                kind, column, aliases = FieldType.ID, entity.id, {}
            else:
                kind, column, aliases = FieldType.TEXT, entity.label, {}
            assert column is not None
            if not _column_match(kind, flt.operator, row[column], flt.value, aliases):
                return False
        return True

    matched = [r for r in rows if keep(r)]
    sorts = [(s.field, s.direction) for s in plan.sort]
    if not sorts and entity.default_sort is not None and plan.query_type is not QueryType.COUNT:
        sorts = [(entity.default_sort[0], SortDirection(entity.default_sort[1]))]
    keys = [(entity.column_for(f) or entity.id, d) for f, d in sorts]
    matched.sort(key=lambda r: r[entity.id])
    for column, direction in reversed(keys):
        present = [r for r in matched if r[column] is not None]
        absent = [r for r in matched if r[column] is None]
        present.sort(key=lambda r: r[column], reverse=direction is SortDirection.DESC)
        matched = present + absent
    limit = min(plan.limit or entity.default_limit, entity.max_limit)
    counts = plan.query_type in (QueryType.COUNT, QueryType.LIST)
    ids = tuple(r["id"] for r in matched[:limit])
    return Expected(
        ids=ids,
        matched_facts={i: _matching_facts(plan, entity, facts, i, now) for i in ids},
        count=len(matched) if counts else None,
        truncated=len(matched) > limit,
        baseline_total=len(rows) if plan.filters else None,
    )


# -- rows as dicts, for tests that compare them -----------------------------------


def as_dicts(rows: Rows) -> list[dict[str, Any]]:
    """Rows as dicts keyed by result column."""
    keys = rows.layout.keys
    return [dict(zip(keys, r, strict=True)) for r in rows.data]
