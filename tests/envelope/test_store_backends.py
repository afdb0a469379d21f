"""The collector's contract, scripted, on both backends: expiry, the count and
byte caps with the grace period, the newest kept alone over the byte cap,
explicit prunes, and the lazy collection at the start of a command."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.errors import RefError
from qdsl.envelope.ref_api import RefStoreProtocol


def _put(store: RefStoreProtocol, clock: Any, size: int, tenant: str | None = None) -> str:
    ref = store.put("run", b"x" * size, tenant=tenant).ref_id
    clock.advance(10)
    return ref


def test_expiry_then_the_oldest_over_the_count_cap(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    store = make_any_store(ttl_ms=1_000, max_count=3, grace_ms=50)
    old = [_put(store, clock, 10, t) for t in ("t1", "t2")]
    clock.advance(1_000)  # both expired
    fresh = [_put(store, clock, 10, t) for t in ("t1", "t2", None, "t1", None)]
    report = store.gc()
    # the two oldest of the five over the cap of 3; the newest 5 are 10..50 ms old,
    # so the grace period (50 ms) protects only the last four
    assert (report.expired, report.evicted) == (2, 1)
    assert [r.ref_id for r in store.records()] == fresh[1:]
    for ref in old:
        with pytest.raises(RefError) as info:
            store.read_bytes(ref, tenant="t1")
        assert info.value.subtype == "ref_expired"
    with pytest.raises(RefError) as info:
        store.read_bytes(fresh[0], tenant="t1")
    assert info.value.subtype == "ref_not_found"
    clock.advance(100)  # out of the grace period: now the cap holds, the largest
    # holder (the shared refs, two of the four) losing its oldest
    assert store.gc().evicted == 1
    assert [r.ref_id for r in store.records()] == [fresh[1], fresh[3], fresh[4]]


def test_the_byte_cap_keeps_the_newest_alone_and_says_so(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    store = make_any_store(max_bytes=100)
    refs = [_put(store, clock, n) for n in (40, 40, 40)]
    assert store.gc().evicted == 1
    assert [r.ref_id for r in store.records()] == refs[1:]
    big = _put(store, clock, 500)
    report = store.gc()
    assert report.evicted == 2 and [r.ref_id for r in store.records()] == [big]
    assert report.warnings and "over the ref store's byte cap" in report.warnings[0]
    assert store.read_bytes(big) == b"x" * 500


def test_prunes_remove_regardless_of_grace(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    store = make_any_store(grace_ms=10**9)
    refs = [_put(store, clock, 5, t) for t in ("t1", None, "t2", "t1")]
    cutoff = store.records()[2].created_ms
    assert store.gc(prune_before_ms=cutoff).evicted == 2
    assert [r.ref_id for r in store.records()] == refs[2:]
    assert store.gc(prune_all=True).evicted == 2
    assert store.records() == [] and store.live(tenant="t1") == []


def test_a_tenants_prune_removes_only_its_own_refs(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    """`refs prune --tenant T` removes T's refs; without a tenant, the shared ones;
    another tenant's refs stay, on either backend."""
    store = make_any_store(grace_ms=10**9)
    t1, shared, t2 = (_put(store, clock, 5, t) for t in ("t1", None, "t2"))
    report = store.gc(prune_all=True, prune_tenant="t1")
    assert report.pruned == 1 and [r.ref_id for r in store.records()] == [shared, t2]
    assert store.gc(prune_all=True, prune_tenant="t3").pruned == 0
    assert store.gc(prune_all=True, prune_tenant=None).pruned == 1
    assert [r.ref_id for r in store.records()] == [t2]
    assert store.read_bytes(t2, tenant="t2") == b"x" * 5
    assert t1 not in {r.ref_id for r in store.records()}


def test_every_command_starts_with_a_collection(
    make_any_store: Callable[..., RefStoreProtocol],
    cli_store_env: dict[str, str],
    tmp_path: Any,
) -> None:
    """`qdsl refs list` (any command) first drops what expired, on either backend."""
    store = make_any_store(ttl_ms=1)  # expired by the time the command runs
    gone = store.put("run", b"old", tenant="t1").ref_id
    env = {"QDSL_STATE_DIR": str(tmp_path / "state"), **cli_store_env}
    res = CliRunner().invoke(cli, ["--json", "refs", "list", "--tenant", "t1"], env=env)
    assert res.exit_code == 0, res.stderr
    assert gone not in {r.ref_id for r in store.records()}
