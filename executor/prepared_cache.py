"""The executor's preparation of a bound plan, done once per plan and caller.

The compile cache (`qdsl.dsl.plan.plan_cache`) serves the same immutable BoundPlan
object for the same plan, catalog and tenant. Everything `prepare` and the
plan checks work out from it depends only on that object, the dialect, the
caller's tenant, the limits in force, `now` and the columns' storage: the plan's bounds, the
template, the shape key and its statements, the parameters. So a second call
with all of those the same takes the `Prepared` of the first.

Not cached: a raw Plan (bound through the normalizer on every call), and a
plan that reads fresh facts without a given `now` (its parameters carry the
clock). A plan that fails a check is never stored, so it fails every time.
The entry keeps its plan, catalog and limits alive, so an id in a key is
never reused while it is cached. Prepared values are only read (each request
copies the parameters it sends).
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from qdsl.dsl.bound import BoundPlan
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Plan
from qdsl.dsl.settings.limits import Limits
from qdsl.executor.compile import Prepared
from qdsl.facts.storage import Storage

_Key = tuple[int, int, int, str, str, datetime | None, Storage | None]
_ENTRIES: dict[_Key, tuple[BoundPlan, Catalog, Limits, Prepared]] = {}
_MAX = 1024


def cacheable(plan: Plan | BoundPlan, now: datetime | None) -> bool:
    if not isinstance(plan, BoundPlan):
        return False
    return now is not None or not plan.plan.retrieval_policy.require_fresh_fact


def prepared(
    plan: BoundPlan,
    catalog: Catalog,
    build: Callable[[], Prepared],
    *,
    dialect: str,
    tenant: str,
    now: datetime | None,
    lim: Limits,
    storage: Storage | None = None,
) -> Prepared:
    """The Prepared `build` made for these inputs before, else `build()` kept."""
    key = (id(plan), id(catalog), id(lim), dialect, tenant, now, storage)
    found = _ENTRIES.get(key)
    if found is not None and found[0] is plan and found[1] is catalog and found[2] is lim:
        return found[3]
    prep = build()
    if len(_ENTRIES) >= _MAX:
        _ENTRIES.clear()
    _ENTRIES[key] = (plan, catalog, lim, prep)
    return prep


def clear() -> None:
    _ENTRIES.clear()
