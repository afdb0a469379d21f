"""What a query kind's own code is handed, and what it hands back.

A kind that brings its own statement and result shape sets `QueryKind.build`,
`render` and `consistent`. The code lives in the kind's module under
`qdsl.dsl.kinds`, which imports no database code (tests/test_import_graph.py):
the executor hands the builder a `StatementContext` carrying the SQL toolkit
and the plan's tenant-bound conditions, the renderer hands a `RenderContext`,
the verifier a `ConsistencyContext`. Each is a protocol the caller implements
(`qdsl.executor.kind_flow`, `qdsl.render`, `qdsl.verifier.checks.consistency`).

The builder returns its statements together with their reader, so a shape whose
rows depend on what it built (the groups of a breakdown, the measures of an
aggregate) reads them with what it knows, without a second lookup.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog, EntitySpec
    from qdsl.dsl.ir import Plan

# The result-column names of `StatementContext.row_columns()`: a row a kind cites.
ROW_TENANT = "row_tenant"
ROW_ID = "row_id"
ROW_LABEL = "row_label"


class StatementContext(Protocol):
    """The executor's side of a kind's statement builder."""

    @property
    def sql(self) -> Any:
        """The SQL toolkit (SQLAlchemy Core: `select`, `func`, `literal` …)."""

    @property
    def plan(self) -> Plan: ...

    @property
    def entity(self) -> EntitySpec: ...

    @property
    def table(self) -> Any:
        """The entity's table (identifiers from the catalog only)."""

    def where(self) -> list[Any]:
        """The rows the plan reads: its tenant's (bound by the executor, never by the
        plan), within its scope, under every filter and named subject."""

    def column(self, field: str) -> Any:
        """The column of a catalog field (refused when the field has none)."""

    def factor(self, field: str) -> Any:
        """The column of a number field as a factor of a declared product, widened
        where the database would compute the product in a type it overflows."""

    def group_key(self, field: str, grain: Any) -> Any:
        """A field's value as a breakdown key: a time field's period (a `Grain`: its
        first day, a date, in the catalog's time zone for a datetime), else its value."""

    def is_related(self, field: str) -> bool:
        """Whether a grouping crosses declared relations (`customer.tier`, `customer`)."""

    def group_label(self, field: str) -> Any:
        """What a grouping by a related object shows each group by: its label (None
        for any other grouping)."""

    def key_order(self, field: str, grain: Any, key: Any) -> Any:
        """`key` (a key column of `field`) as it sorts: text in byte order on every dialect."""

    def row_columns(self) -> list[Any]:
        """A cited row's tenant, id and label, labelled ROW_TENANT, ROW_ID, ROW_LABEL."""

    def id_column(self) -> Any:
        """The id in its column's own type (cheaper to sort than its text; it sorts as
        `key_order(entity.id, None, key)` says)."""

    def limit(self) -> Any:
        """The bound row limit: the plan's limit + 1 (one more, to know it was cut)."""

    def order_by(self) -> list[Any]:
        """The plan's order, the id last (a total order, byte order on every dialect)."""


@dataclass(frozen=True)
class RowRef:
    """A row the result cites: it becomes a result row with its object evidence."""

    entity_id: Any
    tenant_id: Any
    label: Any = None
    values: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class KindRead:
    """What a kind's reader makes of its statements' rows."""

    # the kind's own result shape (`ExecutionResult.data`): plain JSON-ready values
    data: Mapping[str, Any]
    rows: tuple[RowRef, ...] = ()
    count: int | None = None
    truncated: bool = False


# role -> that statement's rows, each a mapping of result-column name to value
RowsByRole = Mapping[str, Sequence[Mapping[str, Any]]]
Reader = Callable[[RowsByRole], KindRead]


@dataclass(frozen=True)
class KindStatements:
    """A plan shape's statements (run in order, with the plan's shared parameters)
    and the reader of their rows. Built once per shape and cached."""

    statements: tuple[tuple[str, Any], ...]
    read: Reader


Builder = Callable[[StatementContext], KindStatements]


class RenderContext(Protocol):
    """The renderer's side of a kind's answer: the question's language and phrases."""

    @property
    def plan(self) -> Plan: ...

    @property
    def catalog(self) -> Catalog: ...

    @property
    def lang(self) -> str: ...

    @property
    def zh(self) -> bool: ...

    @property
    def one(self) -> str:
        """The entity's name, singular."""

    @property
    def many(self) -> str:
        """The entity's name, plural."""

    @property
    def result(self) -> Any:
        """The execution result (`qdsl.executor.result.ExecutionResult`)."""

    def where(self) -> str:
        """The plan's conditions and scope as the answer states them."""

    def field(self, name: str) -> str:
        """A field's name in the answer's language."""

    def shown(self, value: Any) -> str:
        """A value as the answer states it."""

    def value_shown(self, field: str, value: Any) -> str:
        """A field's value as answers state it (an enum value with its local alias)."""

    def cite(self, ids: Sequence[str]) -> str:
        """Evidence ids inline ("[employee:E-4]")."""

    def evidence_ids(self) -> list[str]:
        """The evidence ids of every row of the result, facts first."""


# -> (text, data under the contract's keys, cited evidence ids)
Renderer = Callable[[RenderContext], tuple[str, dict[str, Any], list[str]]]


class ConsistencyContext(Protocol):
    """The verifier's side of a kind's consistency rule."""

    @property
    def data(self) -> Mapping[str, Any]:
        """The answer's data."""

    @property
    def matched(self) -> int:
        """How many rows the execution matched."""

    @property
    def result(self) -> Any:
        """The execution result the answer must agree with."""


# -> what the answer states that the result does not (one message each)
Consistency = Callable[[ConsistencyContext], Iterable[str]]
