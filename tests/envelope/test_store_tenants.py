"""Refs carry their tenant: readable (refs get/show/list, --input-ref, chain)
only with the same tenant, and another tenant's ref looks exactly like a
missing one; refs made without a tenant are shared. On both ref store backends."""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from qdsl.cli.main import cli
from qdsl.dsl.errors import RefError
from qdsl.envelope.ref_api import RefStoreProtocol
from qdsl.envelope.store import RefStore

PLAN = 'count project where status = "active"'


def _error(store: RefStoreProtocol, ref_id: str, tenant: str | None) -> dict[str, Any]:
    with pytest.raises(RefError) as info:
        store.read_bytes(ref_id, tenant=tenant)
    return info.value.to_dict()


def _twin(ref_id: str) -> str:
    """An id of the same time and operation that was never written."""
    return ref_id[:-10] + ("0123456789" if not ref_id.endswith("0123456789") else "9876543210")


def test_another_tenants_ref_is_exactly_a_missing_one(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    store = make_any_store(ttl_ms=1000)
    ref = store.put("run", b"t2's rows", tenant="t2").ref_id
    assert store.read_bytes(ref, tenant="t2") == b"t2's rows"
    for caller in ("t1", None, "T2", "t2 "):
        foreign = _error(store, ref, caller)
        missing = _error(store, _twin(ref), caller)
        assert foreign["subtype"] == "ref_not_found"
        assert foreign == {**missing, "message": missing["message"].replace(_twin(ref), ref)}
    clock.advance(1000)  # expired: still the same as a missing ref of that age
    assert _error(store, ref, "t1")["subtype"] == "ref_expired"
    assert _error(store, ref, "t1") == {
        **_error(store, _twin(ref), "t1"),
        "message": f"ref {ref} has expired",
    }


def test_refs_without_a_tenant_are_shared(
    make_any_store: Callable[..., RefStoreProtocol],
) -> None:
    store = make_any_store()
    ref = store.put("parse", b"plan").ref_id
    for caller in ("t1", "t2", None):
        assert store.read_bytes(ref, tenant=caller) == b"plan"


def test_listing_shows_the_callers_and_shared_refs(
    make_any_store: Callable[..., RefStoreProtocol], clock: Any
) -> None:
    store = make_any_store()
    made = {}
    for tenant in ("t1", "t2", None, "t1"):
        made.setdefault(tenant, []).append(store.put("run", b"x", tenant=tenant).ref_id)
        clock.advance(1)
    assert [r.ref_id for r in store.live(tenant="t1")] == sorted(made["t1"] + made[None])
    assert [r.ref_id for r in store.live(tenant="t2")] == sorted(made["t2"] + made[None])
    assert [r.ref_id for r in store.live()] == made[None]
    assert sorted(r.tenant or "" for r in store.records()) == ["", "t1", "t1", "t2"]
    if isinstance(store, RefStore):
        index = (store.dir / "index.jsonl").read_text().splitlines()
        assert sorted(json.loads(x)["tenant"] or "" for x in index) == ["", "t1", "t1", "t2"]


# ---------------------------------------------------------------------- CLI
@dataclass(frozen=True)
class State:
    """A state dir and the environment that selects the test's backend."""

    root: Path
    store_env: dict[str, str]

    @property
    def env(self) -> dict[str, str]:
        return {"QDSL_STATE_DIR": str(self.root), **self.store_env}


def _cli(args: list[str], state: State, **env: str) -> Result:
    return CliRunner().invoke(cli, ["--json", *args], env={**state.env, **env})


def _store(state: State) -> RefStoreProtocol:
    from qdsl.envelope.backends import open_selected

    with pytest.MonkeyPatch.context() as mp:
        for name, value in state.env.items():
            mp.setenv(name, value)
        return open_selected()


def _big_ref(state: State, tenant: str | None) -> str:
    items = [{"id": str(i), "title": f"item {i} " + "x" * 30} for i in range(800)]
    env = {"ok": True, "data": {"plan": PLAN, "items": items}}
    return _store(state).put("run", json.dumps(env).encode(), tenant=tenant).ref_id


@pytest.fixture
def state(tmp_path: Path, cli_store_env: dict[str, str]) -> State:
    return State(tmp_path / "state", cli_store_env)


def test_cli_reads_a_tenants_ref_only_with_its_tenant(state: State) -> None:
    ref = _big_ref(state, "t2")
    ok = _cli(["refs", "get", "--tenant", "t2", ref, "data.items[0].id"], state)
    assert ok.exit_code == 0 and json.loads(ok.stdout)["data"]["value"] == "0"
    attempts = [
        ["refs", "get", ref, "data"],
        ["refs", "get", "--tenant", "t1", ref, "data"],
        ["refs", "show", "--tenant", "t1", ref],
        ["parse", "--tenant", "t1", "--input-ref", ref, "--pick", "data.plan"],
        ["parse", "--input-ref", ref, "--pick", "data.plan"],
    ]
    for args in attempts:
        res = _cli(args, state)
        assert res.exit_code == 7, args
        assert json.loads(res.stderr)["error"]["code"] == "ref/ref_not_found"
    via_pick = _cli(["parse", "--tenant", "t2", "--input-ref", ref, "--pick", "data.plan"], state)
    assert via_pick.exit_code == 0, via_pick.stderr


def test_cli_lists_only_the_callers_refs(state: State) -> None:
    t1, t2, shared = _big_ref(state, "t1"), _big_ref(state, "t2"), _big_ref(state, None)

    def listed(*tenant: str) -> set[str]:
        res = _cli(["refs", "list", *tenant], state)
        assert res.exit_code == 0, res.stderr
        return {r["refId"] for r in json.loads(res.stdout)["data"]["refs"]}

    assert listed("--tenant", "t1") == {t1, shared}
    assert listed("--tenant", "t2") == {t2, shared}
    assert listed() == {shared}
    blank = _cli(["refs", "list", "--tenant", " "], state)
    assert blank.exit_code == 2


def test_a_large_result_is_stored_for_the_tenant_that_made_it(state: State) -> None:
    """`refs get --tenant t2` of a large value prints a preview whose ref is t2's."""
    ref = _big_ref(state, "t2")
    res = _cli(["refs", "get", "--tenant", "t2", ref, "data"], state)
    env = json.loads(res.stdout)
    new = env["refId"]
    assert env["resultPersisted"] is True
    assert "--tenant t2" in env["largeOutputNotice"]
    assert all(n["argv"][4:6] == ["--tenant", "t2"] for n in env["meta"]["next"][:2])
    assert _cli(["refs", "get", new, "data"], state).exit_code == 7
    again = _cli(["refs", "get", "--tenant", "t2", new, "data.value.items[1].id"], state)
    assert again.exit_code == 0
    shared = _big_ref(state, None)  # read by t1, what it prints is t1's
    env = json.loads(_cli(["refs", "get", "--tenant", "t1", shared, "data"], state).stdout)
    assert _cli(["refs", "get", "--tenant", "t2", env["refId"], "data"], state).exit_code == 7


def test_chain_reads_with_its_steps_tenant_and_stores_for_it(state: State) -> None:
    ref = _big_ref(state, "t2")
    no_tenant = [{"op": "refs get", "input": {"ref": ref, "expr": "data"}}]
    res = _cli(["chain", "--steps", json.dumps(no_tenant)], state)
    assert res.exit_code == 7
    assert json.loads(res.stderr)["error"]["code"] == "ref/ref_not_found"

    steps = [{"op": "refs get", "input": {"ref": ref, "expr": "data", "tenant": "t2"}}]
    env = json.loads(_cli(["chain", "--steps", json.dumps(steps)], state).stdout)
    assert env["resultPersisted"] is True  # the chain's large result: t2's
    assert _cli(["refs", "get", env["refId"]], state).exit_code == 7
    assert _cli(["refs", "get", "--tenant", "t2", env["refId"]], state).exit_code == 0

    mixed = [
        {"op": "refs get", "input": {"ref": ref, "expr": "data.plan", "tenant": "t2"}},
        {"op": "parse", "input": {"plan": "$.steps[0].data.value", "tenant": "t1"}},
    ]
    res = _cli(["chain", "--steps", json.dumps(mixed)], state)
    assert res.exit_code == 2
    assert json.loads(res.stderr)["error"]["code"] == "usage/chain_mixed_tenants"


def test_run_stores_its_large_result_for_its_tenant(sqlite_url: str, state: State) -> None:
    res = _cli(
        ["--db", sqlite_url, "run", "--tenant", "t1", "--plan", "list project limit 200"],
        state,
        QDSL_REF_THRESHOLD="2048",
    )
    assert res.exit_code == 0, res.stderr
    env = json.loads(res.stdout)
    assert env["resultPersisted"] is True
    assert _store(state).record(env["refId"], tenant="t1").tenant == "t1"
    assert _cli(["refs", "get", "--tenant", "t2", env["refId"]], state).exit_code == 7


def test_another_tenants_ref_is_refused_before_its_bytes_are_read(
    make_store: Callable[..., RefStore], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refusal costs a look at the header, not a read of the result."""
    import os

    store = make_store()
    ref = store.put("run", b"x" * 5_000_000, tenant="t2").ref_id
    real_read = os.read
    read: list[int] = []

    def counting(fd: int, n: int) -> bytes:
        chunk = real_read(fd, n)
        read.append(len(chunk))
        return chunk

    monkeypatch.setattr(os, "read", counting)
    assert _error(store, ref, "t1")["subtype"] == "ref_not_found"
    assert sum(read) <= 1 << 16
    read.clear()
    assert len(store.read_bytes(ref, tenant="t2")) == 5_000_000
    assert sum(read) > 5_000_000
