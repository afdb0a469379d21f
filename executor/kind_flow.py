"""The statements and steps of a query kind that brings its own (`QueryKind.build`).

The kind's builder (in its module under `qdsl.dsl.kinds`) is handed a
`KindContext`: the SQL toolkit and this plan's conditions, which always start
with the tenant and the scope (`StatementBuilder.bounds`), so a kind's
statement binds `:tenant_id` on its table like every generic template. Its
statements run in order through the same tenant session as every other plan
(`executor.run`), each with the plan's shared parameters; their rows reach the
kind's reader as mappings, and the result is validated once like any other
(`result.builder()`), every row the reader cites with its object evidence.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Generator, Sequence
from typing import TYPE_CHECKING, Any

import sqlalchemy as sa

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import EntitySpec, Grain
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.kinds.hooks import ROW_ID, ROW_LABEL, ROW_TENANT, KindStatements
from qdsl.executor import column_types as CT
from qdsl.executor import names as N
from qdsl.executor.grains import is_time, period_of
from qdsl.executor.predicates import is_text
from qdsl.executor.related_groups import (
    RelatedKey,
    is_related_grouping,
    related_key,
    sorts_as_text,
)
from qdsl.executor.result import ExecutionResult, builder
from qdsl.executor.rows import Rows

if TYPE_CHECKING:
    from qdsl.executor.compile import Prepared
    from qdsl.executor.statements import AnySelect, StatementBuilder

# returns how to make the result: the driver makes it once the connection is back
OwnFlow = Generator[tuple[str, "AnySelect", dict[str, Any]], Rows, Callable[[], ExecutionResult]]


class KindContext:
    """`dsl.kinds.hooks.StatementContext` over a `StatementBuilder`."""

    sql = sa

    def __init__(self, b: StatementBuilder, bound: BoundPlan, *, has_subjects: bool) -> None:
        self._b = b
        self._bound = bound
        self._has_subjects = has_subjects

    @property
    def plan(self) -> Plan:
        return self._bound.plan

    @property
    def entity(self) -> EntitySpec:
        return self._b.et.spec

    @property
    def table(self) -> Any:
        return self._b.et.table

    def where(self) -> list[Any]:
        out: list[Any] = self._b.conditions(self._bound.filters, skip_positive_facts=False)
        if self._has_subjects:
            out.append(self._b.et.id.in_(self._b.subject_ids()))
        return out

    def column(self, field: str) -> Any:
        spec = self.entity
        name = spec.names.get(field, field)
        column = spec.column_for(name)
        if column is None or name in spec.sensitive or column in spec.sensitive:
            raise PlanError(
                "field_not_readable",
                f"`{field}` of {spec.name} has no column a {self.plan.query_type.value} can read",
                hint=f"name a column field of {spec.name}",
            )
        return self._b.et.col(column)

    def factor(self, field: str) -> Any:
        col = self.column(field)
        stored = self._b.et.stored.get(col.name)
        return CT.product_factor(col, stored, self._b.dialect)

    def is_related(self, field: str) -> bool:
        return is_related_grouping(self._b.catalog, self.entity, field)

    def _related_key(self, field: str, grain: Grain | None) -> RelatedKey:
        b = self._b
        return related_key(field, grain, b.et, b.catalog, b.p, dialect=b.dialect, storage=b.storage)

    def group_label(self, field: str) -> Any:
        return self._related_key(field, None).label if self.is_related(field) else None

    def group_key(self, field: str, grain: Grain | None) -> Any:
        if self.is_related(field):
            return self._related_key(field, grain).key
        col = self.column(field)
        spec = self.entity
        name = spec.names.get(field, field)
        kind = spec.fields[name].type if name in spec.fields else None
        if kind is None or not is_time(kind):
            return col
        column = spec.column_for(name)
        assert column is not None
        stored = self._b.et.stored.get(column)
        zone = self._b.catalog.timezone
        return period_of(col, kind, stored=stored, grain=grain, zone=zone, dialect=self._b.dialect)

    def key_order(self, field: str, grain: Grain | None, key: Any) -> Any:
        if self.is_related(field):
            b = self._b
            text = grain is None and b.dialect == "postgresql"
            if text and sorts_as_text(field, self.entity, b.catalog, b.storage):
                return sa.collate(key, "C")
            return key
        spec = self.entity
        column = spec.column_for(spec.names.get(field, field))
        pg = self._b.dialect == "postgresql"
        if grain is None and column is not None and pg and is_text(self._b.et, column):
            # byte order on both dialects, whatever the database's collation
            return sa.collate(key, "C")
        return key

    def row_columns(self) -> list[Any]:
        et = self._b.et
        return [
            et.tenant.label(ROW_TENANT),
            et.row_id.label(ROW_ID),
            et.label.label(ROW_LABEL),
        ]

    def id_column(self) -> Any:
        return self._b.et.id

    def limit(self) -> Any:
        return self._b.limit()

    def order_by(self) -> list[Any]:
        return list(self._b.order_by())


def own_statements(
    b: StatementBuilder, bound: BoundPlan, *, has_subjects: bool
) -> KindStatements | None:
    """The kind's own statements and reader, or None when it runs a generic template."""
    build = kind_of(bound.plan.query_type).build
    if build is None:
        return None
    return build(KindContext(b, bound, has_subjects=has_subjects))


def own_flow(
    prep: Prepared,
    execution_id: str,
    *,
    plan_hash: str,
    fingerprints: Callable[[list[str]], tuple[str, ...]],
    plain: Callable[[Any], Any],
) -> OwnFlow:
    """Run the kind's statements in order and make the result from its reader."""
    started = time.perf_counter()
    own = prep.statements.own
    assert own is not None
    got: dict[str, Sequence[dict[str, Any]]] = {}
    ran: list[str] = []
    for role, stmt in own.statements:
        rows = yield role, stmt, prep.params
        keys = rows.layout.keys
        got[role] = [dict(zip(keys, r, strict=True)) for r in rows.data]
        ran.append(role)
    return lambda: _own_result(
        prep, execution_id, got, ran, started, plan_hash, fingerprints, plain
    )


def _own_result(  # noqa: PLR0917 - the flow's state, handed over once
    prep: Prepared,
    execution_id: str,
    got: dict[str, Sequence[dict[str, Any]]],
    ran: list[str],
    started: float,
    plan_hash: str,
    fingerprints: Callable[[list[str]], tuple[str, ...]],
    plain: Callable[[Any], Any],
) -> ExecutionResult:
    own = prep.statements.own
    assert own is not None
    read = own.read(got)
    build = builder()
    template = prep.template
    evidence: dict[str, Any] = {}
    cited = [
        build.entity(
            evidence,
            execution_id,
            template.entity_type,
            str(r.entity_id),
            r.tenant_id,
            r.label,
            {k: plain(v) for k, v in r.values.items()},
            {},
            {},
            [],
            False,
            None,
        )
        for r in read.rows
    ]
    return build.make(
        {
            "execution_id": execution_id,
            "tenant_id": str(prep.params[N.TENANT]),
            "query_type": template.query_type,
            "entity_type": template.entity_type,
            "template": template.name,
            "plan_hash": plan_hash,
            "sql_fingerprints": fingerprints(ran),
            "rows": tuple(cited),
            "count": read.count,
            "truncated": read.truncated,
            "evidence": tuple(evidence.values()),
            "data": {k: plain(v) for k, v in read.data.items()},
            "elapsed_ms": round((time.perf_counter() - started) * 1000, 3),
            "notes": (f"template {template.name}", *(f"ran {r}" for r in ran)),
            "retrieval": "columns",
        }
    )
