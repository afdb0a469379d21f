"""What every normalizer rule receives besides the plan, and what normalize returns."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Generic, TypeVar

from qdsl.dsl.bound import BoundPlan, bind_plan
from qdsl.dsl.catalog import Catalog, EntitySpec
from qdsl.dsl.ir import ObjectRef, Plan, Span
from qdsl.dsl.kinds import kind_of
from qdsl.dsl.settings.limits import Limits


@dataclass(frozen=True)
class PlanContext:
    """What the caller knows and the plan must not decide: above all, the tenant.

    `project_id` scopes every plan the catalog's `[scope]` can scope (the
    normalizer's `bind_scope`); `referenced_objects` are the conversation's
    objects a question may point at (它, this project); `thread_anchor` (the
    conversation's message or thread the question continues) is shown to an
    LLM planner as conversation context and is no part of any plan: nothing
    executes or verifies it."""

    tenant_id: str | None = None
    project_id: str | None = None
    thread_anchor: str | None = None
    referenced_objects: tuple[ObjectRef, ...] = ()


T = TypeVar("T")


class _Once(Generic[T]):
    """`functools.cached_property` without its lock (Python 3.11 takes one per
    first read, on every new plan): the value is a pure function of the frozen
    instance, so two threads computing it at once store equal values. The plan
    cache reads it before an entry is shared."""

    def __init__(self, func: Callable[[NormalizedPlan], T]) -> None:
        self.func = func
        self.name = func.__name__
        self.__doc__ = func.__doc__

    def __get__(self, instance: NormalizedPlan | None, owner: type | None = None) -> T:
        if instance is None:
            return self  # type: ignore[return-value]
        value = instance.__dict__[self.name] = self.func(instance)
        return value


@dataclass(frozen=True)
class NormalizedPlan:
    plan: Plan
    warnings: tuple[str, ...] = ()
    # what the plan was normalized against; `bound` joins the plan to it
    catalog: Catalog | None = field(default=None, compare=False, repr=False)
    tenant_id: str | None = field(default=None, compare=False, repr=False)

    @_Once
    def bound(self) -> BoundPlan | None:
        """What the executor compiles: the plan with its catalog specs and typed
        values, for the context's tenant. None for plans that never execute."""
        if self.catalog is None or not kind_of(self.plan.query_type).executable:
            return None
        return bind_plan(self.plan, self.catalog, self.tenant_id)

    @_Once
    def plan_hash(self) -> str:
        """The plan's digest, computed once however often a cached plan is logged."""
        return self.plan.digest()


@dataclass
class Env:
    """The catalog, the caller's context and the warnings collected so far
    (`limits`: the input limits already read for this call, if any)."""

    catalog: Catalog
    context: PlanContext = field(default_factory=PlanContext)
    warnings: list[str] = field(default_factory=list)
    limits: Limits | None = None
    # the last entity resolved (`entity_of`): the written name and its spec
    entity: tuple[str, EntitySpec] | None = None

    def warn(self, message: str) -> None:
        if message not in self.warnings:
            self.warnings.append(message)


Rule = Callable[[Plan, Env], Plan]
"""A normalizer rule: a pure function of the plan and the env returning a new plan."""


def where(path: str, span: Span | None = None, **extra: Any) -> dict[str, Any]:
    """Error details naming the place of a fault: the JSON path and, from text, line/column."""
    out: dict[str, Any] = {"path": path}
    if span is not None:
        out["line"] = span.line
        out["column"] = span.column
    out.update(extra)
    return out
