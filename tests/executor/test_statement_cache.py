"""The statement cache is keyed by everything the statements depend on.

Property: for any plan, on both dialects, the statements `prepare` takes from
a cache shared with every earlier plan equal the statements built afresh for
this plan alone (same SQL text, same bound names, same result shape), and
what SQLAlchemy sends the driver for them with the plan's parameters (IN
lists expanded) is the same text and the same values. A shape
key that missed something the SQL depends on would serve one plan another
plan's statements, and this would find it.
"""

from __future__ import annotations

import re

from exec_support import CATALOG, NOW, Snapshot, snapshot
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from plan_strategies import ALL_TYPES, plans
from sqlalchemy import Engine

from qdsl.dsl.errors import QdslError
from qdsl.executor.compile import Prepared, dialect_for, prepare, render
from qdsl.executor.statements import StatementCache

SHARED = StatementCache(maxsize=4096)
_DATA: list[Snapshot] = []


def _data(engine: Engine) -> Snapshot:
    if not _DATA:
        _DATA.append(snapshot(engine))
    return _DATA[0]


# SQLAlchemy names an anonymous parameter (a literal OFFSET, say) by object id.
_ANON = re.compile(r"^%\(\d+ (\w+)\)s$")


def _text(prep: Prepared, dialect: str) -> list[tuple[str, str, tuple[str, ...]]]:
    out = []
    for role, stmt in prep.statements.named():
        sql, names, _fingerprint = render(stmt, dialect)
        out.append((role, sql, tuple(_ANON.sub(r"anon \1", n) for n in names)))
    return out


def _sent(prep: Prepared, dialect: str) -> list[tuple[str, str, object]]:
    """What SQLAlchemy sends the driver for each statement with the plan's
    parameters: the SQL text with every IN list expanded, and the values in the
    driver's order (its compiled cache serves a statement built the same way)."""
    out = []
    for role, stmt in prep.statements.named():
        compiled = stmt.compile(dialect=dialect_for(dialect))
        used = {k: v for k, v in prep.params.items() if k in compiled.binds}
        for bind in compiled.binds.values():
            if bind.key not in used and bind.value is None:
                # a value a later request adds (the ids read, a fallback's terms):
                # the same stand-in for both
                used[bind.key] = ["v-1", "v-2"] if bind.expanding else "v"
        state = compiled.construct_expanded_state(used)
        if state.positiontup is not None:
            values: object = [state.parameters[n] for n in state.positiontup]
        else:
            values = sorted((k, repr(v)) for k, v in state.parameters.items())
        out.append((role, state.statement, values))
    return out


def _result_shape(prep: Prepared) -> tuple[object, ...]:
    s = prep.statements
    return (s.selected, s.fact_fields, s.counts, s.main_facts, s.uses_entity_facts)


@settings(
    max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st_data=st.data())
def test_a_cached_statement_equals_a_freshly_built_one(
    sqlite_engine: Engine, st_data: st.DataObject
) -> None:
    data = _data(sqlite_engine)
    plan = st_data.draw(plans(data, query_types=ALL_TYPES, fallback=st_data.draw(st.booleans())))
    for dialect in ("sqlite", "postgresql"):
        try:
            cached = prepare(plan, CATALOG, dialect, "t1", now=NOW, cache=SHARED)
        except QdslError:
            return  # a plan the binder refuses has no statements to compare
        fresh = prepare(plan, CATALOG, dialect, "t1", now=NOW, cache=StatementCache())
        assert cached.statements is not fresh.statements
        assert _text(cached, dialect) == _text(fresh, dialect), plan
        assert _result_shape(cached) == _result_shape(fresh), plan
        assert cached.params == fresh.params
        assert _sent(cached, dialect) == _sent(fresh, dialect), plan


def test_the_shared_cache_was_exercised() -> None:
    """The property above means something only if plans did share statements."""
    assert SHARED.hits > 0 or SHARED.misses == 0
