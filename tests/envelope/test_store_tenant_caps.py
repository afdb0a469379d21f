"""Ref caps per tenant as well as per store (issue 25, R6), on both backends.

The caps were store-wide and evicted the oldest refs first, whoever made
them: one tenant's large results evicted every other tenant's refs. Now each
tenant has caps of its own (`QDSL_REF_TENANT_MAX_COUNT` / `_BYTES`, by default
the store's), and over the store's caps the tenant holding the most loses its
oldest ref first: a tenant within its share keeps its refs whatever another
writes. The grace period and "the newest stays" hold as before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import pytest
from conftest import FakeClock
from hypothesis import given, settings
from hypothesis import strategies as st

from qdsl.envelope.records import RefRecord
from qdsl.envelope.ref_api import RefStoreProtocol, plan_eviction
from qdsl.envelope.settings import io_settings
from qdsl.envelope.store import open_store

MakeStore = Callable[..., RefStoreProtocol]


def _put(store: RefStoreProtocol, clock: FakeClock, tenant: str | None, size: int = 10) -> str:
    clock.advance(1)
    return store.put("run", b"x" * size, tenant=tenant).ref_id


def _held(store: RefStoreProtocol, tenant: str | None) -> list[str]:
    return [r.ref_id for r in store.records() if r.tenant == tenant]


def test_one_tenants_many_refs_do_not_evict_another_tenants(
    make_any_store: MakeStore, clock: FakeClock
) -> None:
    store = make_any_store(max_count=10)
    kept = [_put(store, clock, "t2") for _ in range(2)]
    for _ in range(30):
        _put(store, clock, "t1")
        store.gc()
    assert _held(store, "t2") == kept  # the older refs, of the smaller holder
    assert len(_held(store, "t1")) == 8


def test_one_tenants_large_refs_do_not_evict_another_tenants(
    make_any_store: MakeStore, clock: FakeClock
) -> None:
    store = make_any_store(max_bytes=20_000)
    kept = [_put(store, clock, "t2", 1000) for _ in range(3)]
    shared = _put(store, clock, None, 500)
    for _ in range(12):
        _put(store, clock, "t1", 5000)
        store.gc()
    assert _held(store, "t2") == kept and _held(store, None) == [shared]
    assert sum(r.bytes for r in store.records()) <= 20_000


def test_each_tenant_has_caps_of_its_own(make_any_store: MakeStore, clock: FakeClock) -> None:
    store = make_any_store(tenant_max_count=3, tenant_max_bytes=2_500)
    t2 = [_put(store, clock, "t2") for _ in range(2)]
    t1 = [_put(store, clock, "t1") for _ in range(5)]
    store.gc()
    assert _held(store, "t1") == t1[-3:] and _held(store, "t2") == t2
    big = [_put(store, clock, "t2", 1000) for _ in range(3)]
    store.gc()
    assert _held(store, "t2") == big[-2:]  # 2,000 bytes: within its 2,500
    assert _held(store, "t1") == t1[-3:]


def test_a_tenants_newest_ref_stays_and_young_refs_are_not_evicted(
    make_any_store: MakeStore, clock: FakeClock
) -> None:
    store = make_any_store(tenant_max_bytes=1_000, grace_ms=100)
    old = _put(store, clock, "t1", 800)
    clock.advance(200)
    young = _put(store, clock, "t1", 800)
    store.gc()
    assert _held(store, "t1") == [young]  # the old one went; the newest stays alone over
    huge = _put(store, clock, "t1", 5000)
    store.gc()
    assert _held(store, "t1") == [young, huge]  # within the grace period: kept
    assert old not in _held(store, "t1")


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ({}, (50, 200 * 1024 * 1024)),
        ({"QDSL_REF_TENANT_MAX_COUNT": "7", "QDSL_REF_TENANT_MAX_BYTES": "9000"}, (7, 9000)),
        # never above the store's own caps
        ({"QDSL_REF_MAX_COUNT": "5", "QDSL_REF_TENANT_MAX_COUNT": "99"}, (5, 200 * 1024 * 1024)),
    ],
)
def test_tenant_caps_are_settings(
    env: dict[str, str],
    expected: tuple[int, int],
    cli_store_env: dict[str, str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    for name, value in {**cli_store_env, **env}.items():
        monkeypatch.setenv(name, value)
    settings_ = io_settings()
    assert (settings_.tenant_max_count, settings_.tenant_max_bytes) == expected
    store = open_store()
    assert (store.tenant_max_count, store.tenant_max_bytes) == expected


def test_config_toml_sets_the_tenant_caps(monkeypatch: pytest.MonkeyPatch, tmp_path: Any) -> None:
    root = tmp_path / "state"
    root.mkdir(mode=0o700)
    (root / "config.toml").write_text(
        "[io]\nref_tenant_max_count = 4\nref_tenant_max_bytes = 800\n"
    )
    got = io_settings(env={}, root=root)
    assert (got.tenant_max_count, got.tenant_max_bytes) == (4, 800)


def test_a_value_read_from_a_ref_fits_the_tenants_byte_cap(
    cli_store_env: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """What `refs get` / `get_ref` read may be stored again for the tenant: it
    must fit that tenant's byte cap, not only the store's."""
    for name, value in {**cli_store_env, "QDSL_REF_TENANT_MAX_BYTES": "100000"}.items():
        monkeypatch.setenv(name, value)
    from qdsl.cli.refs_cmds import op_refs_get
    from qdsl.envelope.ref_api import result_room

    store = open_store()
    assert result_room(store) == 100_000 - 64 * 1024
    from qdsl.dsl.errors import UsageError

    payload = json.dumps({"ok": True, "data": {"rows": ["y" * 100] * 500}}).encode()
    ref = store.put("run", payload, tenant="t1")
    with pytest.raises(UsageError) as caught:
        op_refs_get({"ref": ref.ref_id, "expr": "data.rows", "tenant": "t1"})
    assert caught.value.code == "usage/result_over_ref_cap"
    small = op_refs_get({"ref": ref.ref_id, "expr": "length(data.rows)", "tenant": "t1"})
    assert small.data["value"] == 500


_TENANTS = st.sampled_from([None, "t1", "t2", "t3"])


@settings(max_examples=300, deadline=None)
@given(
    refs=st.lists(st.tuples(_TENANTS, st.integers(1, 3000), st.integers(0, 500)), max_size=40),
    max_count=st.integers(1, 12),
    max_bytes=st.integers(1, 20_000),
    tenant_share=st.integers(1, 12),
    grace_ms=st.integers(0, 3000),
)
def test_eviction_holds_every_cap_it_can(
    refs: list[tuple[str | None, int, int]],
    max_count: int,
    max_bytes: int,
    tenant_share: int,
    grace_ms: int,
) -> None:
    """Whatever is stored, after eviction: the newest and every young ref stay;
    each tenant is within its caps unless only refs the caps may not take are
    over; so is the store."""
    now, live = 10_000, []
    for i, (tenant, size, gap) in enumerate(refs):
        now += gap
        live.append(RefRecord(f"r{i:03}", "run", now, now + 10**9, size, "0" * 64, tenant))
    tenant_count, tenant_bytes = min(tenant_share, max_count), max_bytes // 2
    evict = plan_eviction(
        live,
        now=now,
        max_count=max_count,
        max_bytes=max_bytes,
        grace_ms=grace_ms,
        tenant_max_count=tenant_count,
        tenant_max_bytes=tenant_bytes,
    )
    kept = [r for r in live if r.ref_id not in evict]
    if live:
        assert live[-1] in kept
    assert all(now - r.created_ms >= grace_ms for r in live if r.ref_id in evict)

    def takeable(r: RefRecord, among: list[RefRecord]) -> bool:
        return r is not among[-1] and now - r.created_ms >= grace_ms

    for tenant in {r.tenant for r in kept}:
        mine = [r for r in kept if r.tenant == tenant]
        over = len(mine) > tenant_count or sum(r.bytes for r in mine) > tenant_bytes
        assert not over or not any(takeable(r, mine) for r in mine)
    over_store = len(kept) > max_count or sum(r.bytes for r in kept) > max_bytes
    assert not over_store or not any(takeable(r, kept) for r in kept)
