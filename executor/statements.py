"""Build the statements of one plan shape, once, and reuse them.

A plan's shape is everything that decides SQL text: catalog, dialect,
template, the filters' fields and operators, projection, sort, the freshness
flags and whether subjects are named. Values, limits, ids and the tenant are
bound parameters, so every plan of one shape shares one `StatementSet` and
the SQL text never changes with values.

Every statement binds `:tenant_id` on every table it reads.
"""

from __future__ import annotations

import copy
import dataclasses
import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from dataclasses import dataclass
from typing import Any, TypeAlias

import sqlalchemy as sa
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement, UnaryExpression

from qdsl.dsl.bound import BoundFilter, BoundPlan, BoundScope
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Plan, SortDirection
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.kinds.hooks import KindStatements
from qdsl.executor import names as N
from qdsl.executor.entity_facts_sql import entity_facts, entity_facts_ranked
from qdsl.executor.fallback_sql import fallback_rows
from qdsl.executor.id_lists import ids_type, in_ids
from qdsl.executor.kind_flow import own_statements
from qdsl.executor.main_facts import evidence, wrap_main
from qdsl.executor.predicates import (
    Params,
    column_condition,
    fact_condition,
    is_text,
)
from qdsl.executor.related_sql import related_condition, related_value
from qdsl.executor.selected import Selected, selected_columns
from qdsl.executor.tables import EntityTable, catalog_key, entity_table, facts_table
from qdsl.executor.templates import Template
from qdsl.facts.storage import Storage

Shape = tuple[Hashable, ...]
AnySelect: TypeAlias = "Select[*tuple[Any, ...]]"


@dataclass(frozen=True)
class StatementSet:
    """The statements a template may run for one plan shape (None: not needed)."""

    shape: Shape
    selected: tuple[Selected, ...]
    fact_fields: tuple[str, ...]  # projected fact fields (filled from entity facts)
    main: AnySelect
    counts: bool  # main carries the match total (a window count over every match)
    baseline: AnySelect
    main_facts: bool  # main is wrapped: baseline guard and/or matching facts (evidence)
    entity_facts: AnySelect
    entity_facts_ranked: AnySelect  # entity_facts bounded per predicate, when it was cut
    fallback: AnySelect | None  # text fallback: rows, hit total and matching slot per filter
    rows_by_id: AnySelect  # rows of ids gathered over several fallback runs
    uses_entity_facts: bool = False
    # entity_facts reads only these predicates (those of projected fact fields), when
    # the template does not report every fact
    fact_predicates: tuple[str, ...] = ()
    # a kind's own statements and reader (`QueryKind.build`): what it runs instead
    own: KindStatements | None = None
    # the facts matching the positive fact filters, of the ids read (`main_facts.evidence`)
    evidence: AnySelect | None = None

    def named(self) -> list[tuple[str, AnySelect]]:
        if self.own is not None:
            return list(self.own.statements)
        out: list[tuple[str, AnySelect]] = [("main", self.main)]
        if self.evidence is not None:
            out.append(("evidence", self.evidence))
        out.append(("baseline", self.baseline))
        if self.uses_entity_facts:
            out.append(("entity_facts", self.entity_facts))
            out.append(("entity_facts_ranked", self.entity_facts_ranked))
        if self.fallback is not None:
            out.append(("fallback", self.fallback))
            out.append(("rows_by_id", self.rows_by_id))
        return out


def projected_fact_fields(plan: Plan, et: EntityTable) -> tuple[str, ...]:
    spec = et.spec
    names = [spec.names.get(n, n) for n in plan.projection]
    return tuple(n for n in dict.fromkeys(names) if (f := spec.fields.get(n)) and f.is_fact)


@dataclass(frozen=True)
class StatementInputs:
    """What one plan's statements are built from (and its shape key computed from)."""

    bound: BoundPlan
    template: Template
    dialect: str
    has_subjects: bool  # the plan names subjects (referenced objects of its entity)
    fallback: bool  # the text fallback may run
    storage: Storage | None = None  # how the entity's columns are kept (None: unknown)
    # a large page: the evidence is read by the rows' ids (`main_facts.evidence_apart`)
    evidence_apart: bool = False


def shape_key(w: StatementInputs) -> Shape:
    plan = w.bound.plan
    policy = plan.retrieval_policy
    return (
        catalog_key(w.bound.catalog),
        w.dialect,
        w.storage,
        w.template.name,
        tuple(bf.shape() for bf in w.bound.filters),
        tuple(plan.projection),
        tuple((s.field, s.direction.value) for s in plan.sort),
        tuple((g.field, g.grain) for g in plan.group_by),
        policy.require_fresh_fact,
        policy.require_fresh_fact and policy.freshness_days is not None,
        w.has_subjects,
        w.fallback,
        (w.bound.scope.field, w.bound.scope.column) if w.bound.scope is not None else None,
        _measure_key(plan),
        w.evidence_apart,
    )


def _measure_key(plan: Plan) -> tuple[str | None, str | None, str | None] | None:
    # an aggregate's statements compute its measure: another measure, another shape
    m = plan.measure
    return None if m is None else (m.function, m.field, m.name)


def _first_per_column(keys: list[tuple[str, SortDirection]]) -> list[tuple[str, SortDirection]]:
    seen: set[str] = set()
    out = []
    for column, direction in keys:
        if column not in seen:
            seen.add(column)
            out.append((column, direction))
    return out


class StatementBuilder:
    """One plan shape's statements under construction: its bound parameters (one
    object per name), tenant condition, filter conditions and order, shared with
    `executor.main_facts` and `executor.fallback_sql`."""

    def __init__(
        self,
        catalog: Catalog,
        et: EntityTable,
        dialect: str,
        plan: Plan,
        scope: BoundScope | None = None,
        *,
        storage: Storage | None = None,
    ) -> None:
        self.catalog = catalog
        self.storage = storage
        self.et = et
        self.dialect = dialect
        self.plan = plan
        self.scope = scope
        self.p = Params(dialect)
        self.facts = facts_table(catalog.facts.table)
        policy = plan.retrieval_policy
        self.fresh = policy.require_fresh_fact
        self.window = self.fresh and policy.freshness_days is not None

    def tenant(self) -> ColumnElement[bool]:
        return self.et.tenant == self.p(N.TENANT, type_=sa.Text())

    def bounds(self) -> list[ColumnElement[bool]]:
        """The rows a plan may read at all: its tenant's, within its project scope."""
        out = [self.tenant()]
        if self.scope is not None:
            # bound as an equals filter on the scope field binds (its column's type)
            col = self.et.col(self.scope.column)
            out.append(col == self.p(N.SCOPE, type_=col.type))
        return out

    def conditions(
        self, bound: tuple[BoundFilter, ...], *, skip_positive_facts: bool
    ) -> list[ColumnElement[bool]]:
        out = self.bounds()
        for bf in bound:
            if bf.path:
                out.append(related_condition(bf, self.et, self.catalog, self.p, self.storage))
            elif bf.is_fact:
                if skip_positive_facts and bf.positive_fact:
                    continue
                out.append(
                    fact_condition(
                        bf, self.et, self.facts, self.p, fresh=self.fresh, window=self.window
                    )
                )
            else:
                out.append(column_condition(bf, self.et, self.p))
        return out

    def order_keys(self) -> list[tuple[str, SortDirection]]:
        """The columns the rows are ordered by, the id last (a total order)."""
        spec = self.et.spec
        sorts = [(s.field, s.direction) for s in self.plan.sort]
        # A count's rows are only samples backing the number: unless the plan asks
        # for an order, take them in key order, which the primary key index
        # serves without sorting every match.
        shape = kind_of(self.plan.query_type).template
        sample_only = shape is not None and shape.sample_only
        if not sorts and spec.default_sort is not None and not sample_only:
            sorts = [(spec.default_sort[0], SortDirection(spec.default_sort[1]))]
        keys: list[tuple[str, SortDirection]] = [
            (spec.column_for(spec.names.get(f, f)) or spec.id, d) for f, d in sorts
        ]
        keys.append((spec.id, SortDirection.ASC))
        return _first_per_column(keys)

    def order_by(
        self, column: Callable[[int, str], ColumnElement[Any]] | None = None
    ) -> list[UnaryExpression[object]]:
        """ORDER BY the keys; `column(i, name)` reads key i elsewhere than the table."""
        out: list[UnaryExpression[object]] = []
        for i, (name, direction) in enumerate(self.order_keys()):
            expr: ColumnElement[Any] = self.et.col(name) if column is None else column(i, name)
            if self.dialect == "postgresql" and is_text(self.et, name):
                # Byte order on both dialects, whatever the database's collation.
                expr = sa.collate(expr, "C")
            ordered = expr.desc() if direction is SortDirection.DESC else expr.asc()
            out.append(ordered.nulls_last())
        return out

    def entity_select(
        self, selected: tuple[Selected, ...], *, baseline: bool, total: bool = False
    ) -> AnySelect:
        et = self.et
        cols: list[ColumnElement[Any]] = [
            et.tenant.label(N.ROW_TENANT),
            et.row_id.label(N.ROW_ID),
            et.label.label(N.ROW_LABEL),
        ]
        cols += [self.value_of(s).label(N.value_column(s.name)) for s in selected]
        if baseline:
            cols.append(self.baseline_column())
        if total:
            # The total before LIMIT, in the same pass that finds the rows.
            cols.append(sa.func.count().over().label(N.ROW_TOTAL))
        return sa.select(*cols).select_from(et.table)

    def match_count(self, bound: tuple[BoundFilter, ...], *, has_subjects: bool) -> Any:
        """How many rows match, as a subquery of its own over another alias of the
        table: where a condition crosses a relation, a window count over the page's
        pass makes PostgreSQL test the relation row by row in the page's order for
        every match (a nested loop it costs as if the LIMIT stopped it early);
        apart, each half is planned for what it does (the count by a hash semi
        join, the page stopping at its limit). Uncorrelated: evaluated once."""
        alias = self.et.table.alias("matched")
        counter = copy.copy(self)
        counter.et = dataclasses.replace(self.et, table=alias)  # type: ignore[arg-type]
        where = counter.conditions(bound, skip_positive_facts=False)
        if has_subjects:
            where.append(counter.et.id.in_(counter.subject_ids()))
        return (
            sa.select(sa.func.count())
            .select_from(alias)
            .where(*where)
            .correlate(None)
            .scalar_subquery()
            .label(N.ROW_TOTAL)
        )

    def value_of(self, s: Selected) -> ColumnElement[Any]:
        """A selected column: the entity's own, or a related row's (`customer.city`)."""
        if not s.path:
            return self.et.col(s.column)
        return related_value(s.path, s.column, self.et, self.catalog, self.p, storage=self.storage)

    def baseline_column(self) -> ColumnElement[Any]:
        """The tenant's unfiltered count, riding along in a row the plan reads anyway
        (one round trip less); evaluated once per statement, it is uncorrelated."""
        base = self.et.table.alias("base")
        return (
            sa.select(sa.func.count())
            .select_from(base)
            .where(base.c[self.et.spec.tenant] == self.p(N.TENANT, type_=sa.Text()))
            .correlate(None)
            .scalar_subquery()
            .label(N.ROW_BASELINE)
        )

    def limit(self) -> sa.BindParameter[object]:
        return self.p(N.LIMIT, type_=sa.Integer())

    def in_ids(self, column: ColumnElement[Any]) -> ColumnElement[bool]:
        """`column` (the facts' entity id, text) is one of the ids read (:ids)."""
        return in_ids(column, self.p(N.IDS, type_=ids_type(self.dialect)), self.dialect)

    def subject_ids(self) -> sa.BindParameter[object]:
        """The plan's subjects, compared with the id column in its own type."""
        return self.p(N.SUBJECT_IDS, expanding=True, type_=self.et.id.type)

    def facts_select(self) -> AnySelect:
        f = self.facts
        return sa.select(*f.c).where(
            f.c.tenant_id == self.p(N.TENANT, type_=sa.Text()),
            f.c.entity_type == self.p(N.ENTITY_TYPE, type_=sa.Text()),
            self.in_ids(f.c.entity_id),
        )


def build_statements(w: StatementInputs, shape: Shape) -> StatementSet:
    plan, catalog, bound = w.bound.plan, w.bound.catalog, w.bound.filters
    template, dialect, has_subjects, fallback = w.template, w.dialect, w.has_subjects, w.fallback
    et = entity_table(catalog, template.entity_type, w.storage)
    scope = w.bound.scope
    b = StatementBuilder(catalog, et, dialect, plan, scope, storage=w.storage)
    selected = selected_columns(plan, catalog, et, template, scope)
    where = b.conditions(bound, skip_positive_facts=False)
    if has_subjects:
        where.append(et.id.in_(b.subject_ids()))
    # the baseline guard (the tenant's unfiltered count) is read when the plan
    # filters or is scoped: a narrowed answer must not be the tenant's total
    guard = bool(bound) or scope is not None
    apart = template.shape.counts and any(bf.path for bf in bound)
    main = (
        b.entity_select(selected, baseline=False, total=template.shape.counts and not apart)
        .where(*where)
        .order_by(*b.order_by())
        .limit(b.limit())
    )
    if apart:
        main = main.add_columns(b.match_count(bound, has_subjects=has_subjects))
    baseline = sa.select(sa.func.count().label(N.COUNT)).select_from(et.table).where(b.tenant())
    joined = wrap_main(b, main, bound, guard=guard, joined=not w.evidence_apart)
    rows_by_id = (
        b.entity_select(selected, baseline=guard)
        .where(*b.bounds(), et.id.in_(et.id_list(N.IDS)))
        .order_by(*b.order_by())
        .limit(b.limit())
    )
    fallback_found = (
        fallback_rows(b, bound, selected, guard=guard, has_subjects=has_subjects)
        if fallback
        else None
    )
    fact_fields = projected_fact_fields(plan, et)
    every = template.shape.entity_facts
    own = own_statements(b, w.bound, has_subjects=has_subjects)
    return StatementSet(
        shape=shape,
        selected=selected,
        fact_fields=fact_fields,
        main=joined if joined is not None else main,
        main_facts=joined is not None,
        counts=template.shape.counts,
        baseline=baseline,
        entity_facts=entity_facts(b, only_projected=not every),
        entity_facts_ranked=entity_facts_ranked(b, only_projected=not every),
        fallback=fallback_found,
        rows_by_id=rows_by_id,
        uses_entity_facts=every or bool(fact_fields),
        fact_predicates=(
            () if every else tuple(dict.fromkeys(et.spec.fields[n].fact or n for n in fact_fields))
        ),
        own=own,
        evidence=evidence(b, bound) if w.evidence_apart else None,
    )


class StatementCache:
    """A bounded LRU of StatementSets by shape (thread-safe; sets are immutable)."""

    def __init__(self, maxsize: int = 512) -> None:
        self.maxsize = maxsize
        self._items: OrderedDict[Shape, StatementSet] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, shape: Shape) -> StatementSet | None:
        with self._lock:
            found = self._items.get(shape)
            if found is None:
                self.misses += 1
                return None
            self.hits += 1
            self._items.move_to_end(shape)
            return found

    def put(self, item: StatementSet) -> None:
        with self._lock:
            self._items[item.shape] = item
            self._items.move_to_end(item.shape)
            while len(self._items) > self.maxsize:
                self._items.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._items.clear()
            self.hits = self.misses = 0


STATEMENTS = StatementCache()
