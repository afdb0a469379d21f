"""Compile a plan once: a bounded cache of normalized, bound plans.

`compile_source(source, catalog, context)` is `normalize(load_plan(source), …)`
with its result remembered; `compile_plan_object(plan, catalog, context)` is
`normalize(plan, …)` for a plan built in Python (the rule planner's). A hit
costs one hash of the key and one dict lookup.

The key holds everything the result depends on, so a plan is never served
across tenants or catalogs:

- the plan source exactly as given (a plan object: its JSON form, which keeps
  `1`, `1.0` and `true` apart where plan equality would not);
- the catalog's content fingerprint (`Catalog.content_key`): catalogs loaded
  apart with the same content share entries, any other catalog never does;
- the caller's whole `PlanContext` (tenant, project, thread, referenced
  objects), which the normalizer binds into the plan;
- the input limits in force (`qdsl.dsl.settings.limits`), which decide what is refused.

Only successes are kept; a plan that fails is refused again, afresh, each
time. Entries are immutable (frozen IR, a frozen `NormalizedPlan` whose bound
form is computed before it is stored), so one entry is safely shared by every
caller and thread. The least recently used entry goes first.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.normalize import NormalizedPlan, PlanContext, normalize
from qdsl.dsl.plan.load import is_json_plan, load_plan
from qdsl.dsl.settings.limits import Limits, check_plan_limits, limits

DEFAULT_SIZE = 1024


class PlanCache:
    """A thread-safe LRU map from a compile key to its normalized plan."""

    def __init__(self, maxsize: int = DEFAULT_SIZE) -> None:
        self.maxsize = maxsize
        self._entries: OrderedDict[Hashable, NormalizedPlan] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, build: Callable[[], NormalizedPlan]) -> NormalizedPlan:
        """The entry for `key`, built (outside the lock) and stored on a miss."""
        with self._lock:
            hit = self._entries.get(key)
            if hit is not None:
                self._entries.move_to_end(key)
                self.hits += 1
                return hit
            self.misses += 1
        built = build()
        built.bound  # noqa: B018 - bound before it is shared: entries never change
        with self._lock:
            self._entries[key] = built
            self._entries.move_to_end(key)
            while len(self._entries) > self.maxsize:
                self._entries.popitem(last=False)
        return built

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self.hits = self.misses = 0


PLANS = PlanCache()


def _context(context: PlanContext | None) -> PlanContext:
    return context if context is not None else PlanContext()


def compile_source(
    source: str,
    catalog: Catalog,
    context: PlanContext | None = None,
    *,
    cache: PlanCache = PLANS,
) -> NormalizedPlan:
    """`normalize(load_plan(source), catalog, context)`, compiled once per key."""
    ctx = _context(context)
    lim = limits()
    key = ("source", source, catalog.content_key, ctx, lim)
    return cache.get(key, lambda: _compile(source, catalog, ctx, lim))


def _compile(source: str, catalog: Catalog, ctx: PlanContext, lim: Limits) -> NormalizedPlan:
    # Plan text is read without spans (a third of a parse), which only errors
    # need: a text plan the normalizer refuses is compiled again with spans, so
    # the error raised is the located one `normalize(load_plan(source))` raises.
    plan = load_plan(source, catalog=catalog, spans=False, limit=lim)
    try:
        return normalize(plan, catalog, ctx, limit=lim)
    except QdslError:
        if is_json_plan(source):
            raise
    return normalize(load_plan(source, catalog=catalog, limit=lim), catalog, ctx, limit=lim)


def compile_plan_object(
    plan: Plan,
    catalog: Catalog,
    context: PlanContext | None = None,
    *,
    cache: PlanCache = PLANS,
) -> NormalizedPlan:
    """`normalize(plan, catalog, context)` after the same shape limits `load_plan`
    applies to a source (no weaker path for a plan built in Python), compiled
    once per key: the plan's JSON form, as spans are provenance (they only ever
    appear in errors, and errors are never cached)."""
    ctx = _context(context)
    lim = limits()
    key = ("plan", plan.model_dump_json(), catalog.content_key, ctx, lim)

    def build() -> NormalizedPlan:
        check_plan_limits(plan, lim)
        return normalize(plan, catalog, ctx, limit=lim)

    return cache.get(key, build)
