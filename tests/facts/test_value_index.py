"""The database-backed ValueSource: the asking tenant's values only, bounded, persisted, cached."""

from __future__ import annotations

import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
import sqlalchemy as sa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from shipping import CATALOG_TOML, SHIPMENTS, catalog, create_schema, insert, shipment, wipe
from sqlalchemy import Engine

from qdsl.dsl.catalog import catalog_from_mapping
from qdsl.dsl.errors import DatabaseError
from qdsl.dsl.linking import LinkedValue, TenantValues, ValueSource
from qdsl.dsl.textnorm import normalize_text
from qdsl.facts import value_index as vi
from qdsl.facts.index_refresh import refresh_index
from qdsl.facts.value_index import DatabaseValues, forget, value_source_for

CAT = catalog()


@contextmanager
def statements(engine: Engine) -> Iterator[list[tuple[str, Any]]]:
    seen: list[tuple[str, Any]] = []

    def note(_c: object, _cur: object, statement: str, params: Any, *_a: object) -> None:
        seen.append((statement, params))

    sa.event.listen(engine, "before_cursor_execute", note)
    try:
        yield seen
    finally:
        sa.event.remove(engine, "before_cursor_execute", note)


def fresh(engine: Engine, **kwargs: Any) -> DatabaseValues:
    forget(engine)
    return DatabaseValues(engine, CAT, **kwargs)


def oracle(rows: list[dict[str, Any]], tenant: str) -> TenantValues:
    """Plain Python over the tenant's rows: what the module doc promises."""
    mine = [r for r in rows if r["org"] == tenant]
    found: dict[str, list[LinkedValue]] = {}
    for fname, limit in (("carrier", 2000), ("customer", 2000), ("city", 50)):
        values = {r[fname] for r in mine if r[fname] is not None}
        values = {v for v in values if len(v) <= 64 and normalize_text(v)}
        if len(values) > limit:
            continue
        for v in values:
            found.setdefault(normalize_text(v), []).append(LinkedValue("shipment", fname, v))
    return {k: tuple(sorted(vs, key=lambda x: (x.field, x.value))) for k, vs in found.items()}


def test_values_of_the_asking_tenant(ship: Engine) -> None:
    rows = [
        shipment("acme", "1", carrier="顺丰", city="深圳", customer="Li Wei"),
        shipment("acme", "2", carrier="ＤＨＬ", city="Hamburg", customer="Priya Nair"),
        shipment("acme", "3", carrier="DHL", customer="x" * 65),
        shipment("zeta", "1", carrier="UPS", city="Lyon", customer="Li Wei"),
    ]
    insert(ship, rows)
    source: ValueSource = value_source_for(ship, CAT)
    forget(ship)
    got = source.values_for("acme")
    assert got == oracle(rows, "acme")
    assert got["dhl"] == (
        LinkedValue("shipment", "carrier", "DHL"),
        LinkedValue("shipment", "carrier", "ＤＨＬ"),
    )
    assert got["li wei"] == (LinkedValue("shipment", "customer", "Li Wei"),)
    assert "ups" not in got and "lyon" not in got and "x" * 65 not in got


def test_a_field_over_its_bound_links_nothing(
    ship: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vi, "AUTO_LINK_MAX_VALUES", 2)
    monkeypatch.setattr(vi, "MAX_VALUES_PER_FIELD", 3)
    insert(ship, [shipment("acme", str(i), city=f"c{i}", carrier=f"k{i}") for i in range(3)])
    got = fresh(ship).values_for("acme")
    assert {v.field for vs in got.values() for v in vs} == {"carrier", "customer"}
    insert(ship, [shipment("acme", "9", carrier="k9")])
    report = refresh_index(ship, CAT)
    assert report.entities[0].overflow == ("acme/carrier", "acme/customer")
    got = fresh(ship).values_for("acme")
    assert got == {}


def test_sensitive_and_non_text_fields_never_link() -> None:
    raw = tomllib.loads(CATALOG_TOML)
    raw["entities"]["shipment"]["fields"]["city"]["sensitive"] = True
    cat = catalog_from_mapping(raw)
    # a label links whatever its operators (the depot's "name", undeclared): it
    # names the objects
    assert {lf.field for lf in vi.link_fields(cat)} == {"carrier", "customer", "name"}
    assert {lf.field for lf in vi.link_fields(CAT)} == {"carrier", "customer", "city", "name"}
    raw["entities"]["depot"]["fields"] = {
        "name": {"column": "name", "type": "text", "operators": ["contains"], "sensitive": True}
    }
    hidden = catalog_from_mapping(raw)
    assert "name" not in {lf.field for lf in vi.link_fields(hidden)}  # a sensitive label never


def test_first_use_persists_so_the_next_process_does_not_scan(ship: Engine) -> None:
    insert(ship, [shipment("acme", "1", carrier="顺丰")])
    with statements(ship) as first:
        fresh(ship).values_for("acme")
    assert any("shipments" in s for s, _ in first)
    with statements(ship) as second:
        got = fresh(ship).values_for("acme")
    assert not any("shipments" in s for s, _ in second)
    assert got["顺丰"] == (LinkedValue("shipment", "carrier", "顺丰"),)
    with statements(ship) as cached:
        DatabaseValues(ship, CAT).values_for("acme")
    assert cached == []


def test_stale_or_changed_catalog_rebuilds(ship: Engine) -> None:
    insert(ship, [shipment("acme", "1", carrier="顺丰")])
    fresh(ship).values_for("acme")
    insert(ship, [shipment("acme", "2", carrier="EMS")])
    assert "ems" not in fresh(ship).values_for("acme")  # the persisted index, an hour fresh
    later = datetime.now(UTC) + timedelta(hours=2)
    assert "ems" in fresh(ship, wall_clock=lambda: later).values_for("acme")
    insert(ship, [shipment("acme", "3", carrier="YTO")])
    raw = tomllib.loads(CATALOG_TOML)
    raw["entities"]["shipment"]["fields"]["carrier"]["link_values"] = False
    other = catalog_from_mapping(raw)
    forget(ship)
    assert "yto" in DatabaseValues(ship, other).values_for("acme")


def test_cache_lives_for_its_ttl(ship: Engine) -> None:
    insert(ship, [shipment("acme", "1", carrier="顺丰")])
    now = [0.0]
    source = fresh(ship, clock=lambda: now[0], max_age=timedelta(0))
    source.values_for("acme")
    insert(ship, [shipment("acme", "2", carrier="EMS")])
    now[0] = vi.CACHE_TTL_S / 2
    assert "ems" not in source.values_for("acme")
    now[0] = vi.CACHE_TTL_S * 2
    assert "ems" in source.values_for("acme")
    insert(ship, [shipment("acme", "3", carrier="YTO")])
    source.refresh("acme")
    assert "yto" in source.values_for("acme")


def test_cache_is_bounded(ship: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(vi.CACHE, "size", 3)
    source = fresh(ship)
    for i in range(6):
        source.values_for(f"t{i}")
    assert len(vi.CACHE) == 3


def test_reads_are_bound_to_the_tenant(ship: Engine) -> None:
    insert(ship, [shipment("acme", "1", carrier="顺丰"), shipment("zeta", "1", carrier="UPS")])
    refresh_index(ship, CAT)
    forget(ship)
    for max_age in (timedelta(hours=1), timedelta(0)):  # from the index, then a rescan
        with statements(ship) as seen:
            fresh(ship, max_age=max_age).values_for("acme")
        reads = [(s, p) for s, p in seen if s.lstrip().upper().startswith("SELECT")]
        for statement, params in reads:
            if any(t in statement for t in ("value_index", "index_state", "shipments")):
                assert "acme" in str(params) and "zeta" not in str(params), statement
        if ship.dialect.name == "postgresql":
            assert any("SET LOCAL ROLE" in s for s, _ in seen)


def test_the_reader_without_a_grant_fails_closed(
    pg_database_factory: Callable[[], str],
) -> None:
    """On PostgreSQL the scan runs as qdsl_reader: without its grant it fails, typed."""
    engine = create_schema(pg_database_factory())
    try:
        insert(engine, [shipment("acme", "1", carrier="顺丰")])
        with engine.begin() as conn:
            conn.execute(sa.text("REVOKE SELECT ON shipments FROM qdsl_reader"))
        with pytest.raises(DatabaseError) as err:
            fresh(engine).values_for("acme")
        assert err.value.subtype == "privilege_missing" and not err.value.retryable
    finally:
        engine.dispose()


def test_an_async_engine_gets_the_same_values(ship_db: tuple[str, Engine]) -> None:
    from qdsl.facts.engines import make_async_engine

    url, engine = ship_db
    wipe(engine)
    insert(engine, [shipment("acme", "1", carrier="顺丰")])
    sync = fresh(engine).values_for("acme")
    forget(engine)
    assert value_source_for(make_async_engine(url), CAT).values_for("acme") == sync


# -- the isolation property -------------------------------------------------------------

NAMES = ["Li Wei", "li  wei", "Priya Nair", "顺丰", "DHL", "ＤＨＬ", "深圳", "UPS", "z" * 70]
ROW = st.fixed_dictionaries(
    {
        "carrier": st.none() | st.sampled_from(NAMES),
        "city": st.none() | st.sampled_from(NAMES),
        "customer": st.sampled_from(NAMES),
    }
)


def _rows(org: str, drawn: list[dict[str, Any]], start: int = 0) -> list[dict[str, Any]]:
    return [shipment(org, str(start + i), **r) for i, r in enumerate(drawn)]


@settings(
    max_examples=40,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(
    mine=st.lists(ROW, max_size=6),
    theirs=st.lists(ROW, max_size=6),
    changed=st.lists(ROW, max_size=6),
    how=st.sampled_from(["refresh", "first_use", "rescan"]),
)
def test_another_tenants_values_never_change_mine(
    ship_db: tuple[str, Engine],
    mine: list[dict[str, Any]],
    theirs: list[dict[str, Any]],
    changed: list[dict[str, Any]],
    how: str,
) -> None:
    """Adding or removing values in another tenant never changes values_for(t)."""
    _, engine = ship_db
    wipe(engine)
    acme = _rows("acme", mine)
    insert(engine, [*acme, *_rows("zeta", theirs)])
    if how == "refresh":
        refresh_index(engine, CAT)
    before = fresh(engine).values_for("acme")
    assert before == oracle(acme, "acme")
    # the other tenant gains and loses values, and its index is rebuilt
    with engine.begin() as conn:
        conn.execute(SHIPMENTS.delete().where(SHIPMENTS.c.org == "zeta"))
    insert(engine, _rows("zeta", changed, start=100))
    if how == "refresh":
        refresh_index(engine, CAT)
    else:
        fresh(engine, max_age=timedelta(0)).values_for("zeta")
    max_age = timedelta(0) if how == "rescan" else vi.STATE_MAX_AGE
    assert fresh(engine, max_age=max_age).values_for("acme") == before
    assert fresh(engine).values_for("zeta") == oracle(_rows("zeta", changed, 100), "zeta")


def test_a_missing_catalog_table_is_named(ship: Engine) -> None:
    raw = tomllib.loads(CATALOG_TOML)
    raw["entities"]["shipment"]["table"] = "shipmentz"
    forget(ship)
    with pytest.raises(DatabaseError) as err:
        DatabaseValues(ship, catalog_from_mapping(raw)).values_for("acme")
    assert err.value.subtype == "catalog_table_missing" and "shipmentz" in err.value.message
