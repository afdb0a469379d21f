"""Plan -> statements and bound parameters (no database).

`prepare` is what `execute` runs: it takes a plan bound by the normalizer
(binding a raw plan through it first), checks the template, takes the plan
shape's statements from the cache (building them once) and computes this
call's parameters, the caller's tenant among them. `compile_plan` renders the same thing as SQL
text for `qdsl compile` and the golden tests.
"""

from __future__ import annotations

import hashlib
import itertools
import json
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cached_property
from typing import Any

from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement

from qdsl.dsl.bound import BoundFilter, BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import InternalError, PlanError, PolicyError, UsageError
from qdsl.dsl.ir import Plan
from qdsl.dsl.settings.limits import Limits, limits
from qdsl.dsl.tenant import valid_tenant
from qdsl.executor import names as N
from qdsl.executor.bind import (
    contains_param,
    fallback_terms,
    filter_params,
    id_filter_values,
    subject_ids,
)
from qdsl.executor.fallback_sql import FALLBACK_SLOTS
from qdsl.executor.main_facts import evidence_apart
from qdsl.executor.statements import (
    STATEMENTS,
    StatementCache,
    StatementInputs,
    StatementSet,
    build_statements,
    shape_key,
)
from qdsl.executor.tables import EntityTable, entity_table
from qdsl.executor.templates import Template, template_for
from qdsl.facts.storage import Storage
from qdsl.facts.textindex import grams_for_term

DIALECTS = ("postgresql", "sqlite")
# Facts read per call for the rows' own facts (status, compare, projected fact
# fields), and distinct values per (entity, predicate): a snapshot states at most
# this many values of a many-valued fact, and says how many it holds when cut.
FACTS_CAP = 1000
FACT_VALUES_CAP = 20
# At most this many runs of the fallback statement (values with more spellings
# than its term slots); one run covers up to FALLBACK_SLOTS spellings per filter.
MAX_FALLBACK_RUNS = 8


@dataclass(frozen=True)
class Prepared:
    plan: Plan
    template: Template
    entity: EntityTable
    bound: tuple[BoundFilter, ...]
    statements: StatementSet
    params: dict[str, Any]  # shared by every statement (each ignores what it does not use)
    limit: int
    fallback: bool  # the plan allows the text fallback and has a fact filter to search
    fallback_cap: int
    dialect: str
    # the plan filters or is scoped: the baseline guard is read (`statements`)
    guarded: bool = False

    @cached_property
    def fallback_runs(self) -> tuple[FallbackRun, ...]:
        """Usually one: every spelling in one statement. Worked out only if the
        fallback is reached (facts first usually find rows)."""
        return _fallback_runs(self.bound, self.fallback, self.dialect)


def dialect_for(name: str) -> Dialect:
    if name == "postgresql":
        from sqlalchemy.dialects.postgresql import psycopg

        return psycopg.dialect()  # type: ignore[no-untyped-call]
    if name == "sqlite":
        from sqlalchemy.dialects.sqlite import pysqlite

        return pysqlite.dialect()
    raise UsageError(
        "unknown_dialect",
        f"unknown SQL dialect `{name}`",
        hint=f"use one of: {', '.join(DIALECTS)}",
    )


@dataclass(frozen=True)
class FallbackRun:
    """One run of the fallback statement: its slot parameters and, per fact filter
    index, the spelling in each slot (a hit's slot index names its spelling)."""

    params: dict[str, Any]
    terms: dict[int, tuple[str, ...]]


def _slot_chunks(bf: BoundFilter, dialect: str) -> list[tuple[dict[str, Any], tuple[str, ...]]]:
    terms = [t for t in fallback_terms(bf) if grams_for_term(t)]
    out = []
    for start in range(0, len(terms), FALLBACK_SLOTS):
        chunk = tuple(terms[start : start + FALLBACK_SLOTS])
        params: dict[str, Any] = {}
        union: dict[str, None] = {}
        for j in range(FALLBACK_SLOTS):
            # An unused slot repeats the first spelling: it can find nothing the first
            # slot does not, and the first slot wins the label.
            term = chunk[j] if j < len(chunk) else chunk[0]
            grams = grams_for_term(term)
            union.update(dict.fromkeys(grams))
            params[N.slot_grams(bf.index, j)] = list(grams)
            params[N.slot_gram_count(bf.index, j)] = len(grams)
            params[N.slot_text(bf.index, j)] = contains_param(term, dialect)
        params[N.grams(bf.index)] = list(union)
        params.update({N.slot_number(j): j for j in range(FALLBACK_SLOTS)})
        out.append((params, chunk))
    return out


def check_fallback_terms(bound: tuple[BoundFilter, ...], limit: Limits | None = None) -> None:
    """Refuse a fallback term with more grams than `[limits] fallback_grams`.

    Checked whenever the fallback may run, before the first statement, so the
    refusal does not depend on whether facts first found rows."""
    lim = limit or limits()
    for bf in bound:
        if not bf.positive_fact:
            continue
        for term in fallback_terms(bf):
            count = len(grams_for_term(term))
            if count > lim.fallback_grams:
                shown = term if len(term) <= 20 else term[:20] + "..."
                what = f"the text-fallback term {shown!r} of filter {bf.index}"
                raise lim.plan_over("fallback_grams", what, count, "grams (character pairs)")


def _fallback_runs(
    bound: tuple[BoundFilter, ...], enabled: bool, dialect: str
) -> tuple[FallbackRun, ...]:
    if not enabled:
        return ()
    per_filter = [(bf.index, _slot_chunks(bf, dialect)) for bf in bound if bf.positive_fact]
    runs = []
    chunk_lists = [chunks for _index, chunks in per_filter]
    for parts in itertools.islice(itertools.product(*chunk_lists), MAX_FALLBACK_RUNS):
        merged: dict[str, Any] = {}
        terms: dict[int, tuple[str, ...]] = {}
        for (index, _chunks), (params, chunk) in zip(per_filter, parts, strict=True):
            merged.update(params)
            terms[index] = chunk
        runs.append(FallbackRun(merged, terms))
    return tuple(runs)


def bind(plan: Plan | BoundPlan, catalog: Catalog, tenant_id: str | None) -> BoundPlan:
    """The bound form of `plan` for the caller's tenant.

    A BoundPlan (from `normalize`) is used as it is, and must be bound for this
    caller; a raw plan goes through the normalizer, the one binder. The tenant
    is always the caller's, never the plan's.
    """
    if isinstance(plan, BoundPlan):
        if plan.catalog is not catalog and plan.catalog != catalog:
            raise InternalError(
                "catalog_mismatch",
                "the plan was bound to another catalog than the one executing it",
                hint="normalize and execute with the same catalog",
            )
        if plan.tenant_id == tenant_id:
            return plan
        if plan.tenant_id is not None:
            raise _tenant_mismatch()
        plan = plan.plan
    from qdsl.dsl.normalize import PlanContext, normalize

    bound = normalize(plan, catalog, PlanContext(tenant_id=tenant_id)).bound
    if bound is None:
        # a plan that never executes (unknown): say so as not_covered
        template_for(catalog, plan.entity_type, plan.query_type)
        raise AssertionError("unreachable: template_for raised")
    return bound


def _tenant_mismatch() -> PolicyError:
    return PolicyError(
        "tenant_scope_mismatch",
        "the plan was bound for another tenant than the caller",
        hint="the tenant is bound from the caller; normalize the plan for this tenant",
        retryable=False,
    )


def _check_subjects(template: Template, bound: BoundPlan, refs: tuple[str, ...]) -> None:
    need = template.shape.min_subjects
    named = dict.fromkeys((*refs, *id_filter_values(bound.filters, bound)))
    if len(named) < need:
        name = bound.entity.name
        raise PlanError(
            "too_few_subjects",
            f"{template.query_type.value} over {name} needs "
            f"{need} or more subjects, the plan names {len(named)}",
            hint=f"name them, e.g. `about {name} 64, {name} 65`",
        )


def _statements(w: StatementInputs, cache: StatementCache) -> StatementSet:
    """The plan shape's statements, from the cache or built once."""
    shape = shape_key(w)
    statements = cache.get(shape)
    if statements is None:
        statements = build_statements(w, shape)
        cache.put(statements)
    return statements


def prepare(
    plan: Plan | BoundPlan,
    catalog: Catalog,
    dialect: str,
    tenant_id: str | None,
    *,
    now: datetime | None = None,
    cache: StatementCache = STATEMENTS,
    lim: Limits | None = None,
    storage: Storage | None = None,
) -> Prepared:
    """Template, statements and parameters of one execution for `tenant_id`.

    A blank or malformed tenant is a usage error; None only where nothing runs
    (`qdsl compile` without --tenant), and the executor refuses None. `lim`:
    the input limits already read for this call, if any. `storage`: how the
    entity's columns are kept (`qdsl.facts.storage`, reflected by `execute`);
    without it each column is compiled by its catalog type alone."""
    if dialect not in DIALECTS:
        dialect_for(dialect)
    if tenant_id is not None:
        valid_tenant(tenant_id, lim)
    bound = bind(plan, catalog, tenant_id)
    plan, catalog, spec = bound.plan, bound.catalog, bound.entity
    template = template_for(catalog, plan.entity_type, plan.query_type)
    refs = subject_ids(bound)
    if template.shape.min_subjects:
        _check_subjects(template, bound, refs)
    policy = plan.retrieval_policy
    fallback = (
        policy.allow_fallback_text
        and bool(spec.text_search)
        and any(bf.positive_fact for bf in bound.filters)
    )
    if fallback:
        check_fallback_terms(bound.filters, lim)
    limit = min(plan.limit or spec.default_limit, spec.max_limit)
    statements = _statements(
        StatementInputs(
            bound,
            template,
            dialect,
            has_subjects=bool(refs),
            fallback=fallback,
            storage=storage,
            evidence_apart=evidence_apart(limit),
        ),
        cache,
    )
    return Prepared(
        plan=plan,
        template=template,
        entity=entity_table(catalog, template.entity_type, storage),
        bound=bound.filters,
        statements=statements,
        params=_params(bound, template, statements, dialect, refs, limit=limit, now=now),
        limit=limit,
        fallback=fallback,
        fallback_cap=max(limit, spec.max_limit) + 1,
        dialect=dialect,
        guarded=bool(bound.filters) or bound.scope is not None,
    )


def _params(
    bound: BoundPlan,
    template: Template,
    statements: StatementSet,
    dialect: str,
    refs: tuple[str, ...],
    *,
    limit: int,
    now: datetime | None,
) -> dict[str, Any]:
    """This call's parameters, shared by every statement (each ignores what it does not use)."""
    policy = bound.plan.retrieval_policy
    params: dict[str, Any] = {
        N.TENANT: bound.tenant_id,
        N.ENTITY_TYPE: template.entity_type,
        N.LIMIT: limit + 1,
        N.ONE_ROW: 1,
        N.FACTS_CAP: FACTS_CAP,
        N.VALUES_CAP: FACT_VALUES_CAP,
    }
    if not template.shape.entity_facts:
        # its entity_facts statement reads the projected fact fields' predicates alone
        params[N.FACT_PREDICATES] = list(statements.fact_predicates)
    if refs:
        params[N.SUBJECT_IDS] = list(refs)
    if bound.scope is not None:
        params[N.SCOPE] = bound.scope.value
    if policy.require_fresh_fact:
        moment = (now or datetime.now(UTC)).astimezone(UTC)
        params[N.NOW] = moment
        if policy.freshness_days is not None:
            params[N.FRESH_SINCE] = moment - timedelta(days=policy.freshness_days)
    for bf in bound.filters:
        params.update(filter_params(bf, dialect))
    return params


# --- rendering (qdsl compile, golden tests) ---------------------------------------------


@dataclass(frozen=True)
class CompiledStatement:
    role: str
    sql: str
    params: dict[str, Any]
    # names bound only at run time, from earlier statements' rows (ids)
    runtime_params: tuple[str, ...]
    fingerprint: str


@dataclass(frozen=True)
class CompiledPlan:
    template: str
    dialect: str
    entity_type: str
    query_type: str
    shape: str
    statements: tuple[CompiledStatement, ...]

    def to_dict(self) -> dict[str, Any]:
        return {
            "template": self.template,
            "dialect": self.dialect,
            "entity_type": self.entity_type,
            "query_type": self.query_type,
            "shape": self.shape,
            "statements": [
                {
                    "role": s.role,
                    "sql": s.sql,
                    "params": s.params,
                    "runtime_params": list(s.runtime_params),
                    "fingerprint": s.fingerprint,
                }
                for s in self.statements
            ],
        }


_SQL_TEXT: dict[tuple[int, str], tuple[str, tuple[str, ...], str]] = {}


def render(stmt: ClauseElement, dialect: str) -> tuple[str, tuple[str, ...], str]:
    """SQL text, bind names and fingerprint of a statement (cached per statement object)."""
    key = (id(stmt), dialect)
    found = _SQL_TEXT.get(key)
    if found is None:
        if len(_SQL_TEXT) >= _SQL_TEXT_MAX:
            # Bounded: statement sets leave the LRU, so their texts may go too.
            _SQL_TEXT.clear()
            _KEEP.clear()
        compiled = stmt.compile(dialect=dialect_for(dialect))
        sql = str(compiled)
        names = tuple(getattr(compiled, "binds", {}))
        fingerprint = hashlib.sha256(sql.encode()).hexdigest()[:16]
        # keep the statement alive so its id is never reused while cached
        _KEEP.append(stmt)
        found = (sql, names, fingerprint)
        _SQL_TEXT[key] = found
    return found


_KEEP: list[ClauseElement] = []
_SQL_TEXT_MAX = 4096
_RUNTIME = {N.IDS}


def _jsonable(value: Any) -> Any:
    if isinstance(value, datetime):
        return value.isoformat()
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    return value


def compile_plan(
    plan: Plan,
    catalog: Catalog,
    dialect: str,
    *,
    tenant_id: str | None = None,
    now: datetime | None = None,
) -> CompiledPlan:
    """Every statement the plan's template may run, as SQL text with its bound parameters."""
    prep = prepare(plan, catalog, dialect, tenant_id, now=now)
    base = dict(prep.params)
    if prep.fallback_runs:
        base.update(prep.fallback_runs[0].params)
        base[N.FALLBACK_CAP] = prep.fallback_cap
    out = []
    for role, stmt in prep.statements.named():
        sql, names, fingerprint = render(stmt, dialect)
        params = {n: _jsonable(base[n]) for n in names if n in base}
        runtime = tuple(n for n in names if n in _RUNTIME)
        for n in runtime:
            params[n] = []
        out.append(CompiledStatement(role, sql, params, runtime, fingerprint))
    shape_text = json.dumps([str(x) for x in prep.statements.shape[1:]], ensure_ascii=False)
    return CompiledPlan(
        template=prep.template.name,
        dialect=dialect,
        entity_type=prep.template.entity_type,
        query_type=prep.template.query_type.value,
        shape=hashlib.sha256(shape_text.encode()).hexdigest()[:16],
        statements=tuple(out),
    )
