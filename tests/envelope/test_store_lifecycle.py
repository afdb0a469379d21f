"""Ref ids, expiry, caps, prune, permissions, tenants, and the chain over refs
(on both backends, but for the file store's permissions)."""

from __future__ import annotations

import json
import os
import stat
from collections.abc import Callable
from typing import Any

import pytest
from click.testing import CliRunner

from qdsl.cli.main import cli
from qdsl.dsl.errors import RefError
from qdsl.envelope.ref_api import RefStoreProtocol
from qdsl.envelope.store import REF_ID, RefStore, ref_id_time_ms, system_clock

AnyStore = Callable[..., RefStoreProtocol]


def _cli_store(env: dict[str, str]) -> RefStoreProtocol:
    """The store `qdsl` opens with `env`."""
    from qdsl.envelope.backends import open_selected

    with pytest.MonkeyPatch.context() as mp:
        for name, value in env.items():
            mp.setenv(name, value)
        return open_selected()


def test_ids_are_time_operation_random_and_unique(make_any_store: AnyStore) -> None:
    store = make_any_store()
    ids = {store.put("refs get", b"x").ref_id for _ in range(200)}
    assert len(ids) == 200
    ref_id = next(iter(ids))
    assert REF_ID.match(ref_id) and "-refs_get-" in ref_id
    assert ref_id_time_ms(ref_id) == store.clock()


def test_same_result_for_two_tenants_gives_two_refs(make_any_store: AnyStore) -> None:
    store = make_any_store()
    plan = b'{"data": {"plan": "count project"}}'
    t1 = store.put("run", plan + b" t1")
    t2 = store.put("run", plan + b" t2")
    assert t1.ref_id != t2.ref_id
    assert store.read_bytes(t1.ref_id).endswith(b"t1")
    assert store.read_bytes(t2.ref_id).endswith(b"t2")


def test_private_permissions(make_store: Callable[..., RefStore]) -> None:
    store = make_store()
    rec = store.put("run", b"secret")
    for d in (store.dir, (store.dir / rec.relpath).parent):
        assert stat.S_IMODE(os.stat(d).st_mode) == 0o700
    for f in (store.dir / rec.relpath, store.dir / "index.jsonl"):
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600


def test_expired_before_and_after_gc(make_any_store: AnyStore, clock: Any) -> None:
    store = make_any_store(ttl_ms=1000)
    rec = store.put("run", b"x")
    clock.advance(999)
    assert store.read_bytes(rec.ref_id) == b"x"
    clock.advance(1)
    with pytest.raises(RefError) as info:
        store.read_bytes(rec.ref_id)
    assert info.value.subtype == "ref_expired"
    assert store.gc().expired == 1
    with pytest.raises(RefError) as info:  # collected: still reported as expired
        store.read_bytes(rec.ref_id)
    assert info.value.subtype == "ref_expired" and info.value.exit_code == 7


def test_count_cap_keeps_the_newest(make_any_store: AnyStore, clock: Any) -> None:
    store = make_any_store(max_count=3)
    ids = []
    for _ in range(5):
        ids.append(store.put("run", b"x").ref_id)
        clock.advance(1)
    assert store.gc().evicted == 2
    assert [r.ref_id for r in store.records()] == ids[-3:]
    with pytest.raises(RefError) as info:
        store.read_bytes(ids[0])
    assert info.value.subtype == "ref_not_found"


def test_prune_older_than_and_all(tmp_path: Any, cli_store_env: dict[str, str]) -> None:
    runner = CliRunner()
    env = {"QDSL_STATE_DIR": str(tmp_path / "s"), "QDSL_REF_TTL_MS": str(10**9), **cli_store_env}
    store = _cli_store(env)
    store.clock = lambda: system_clock() - 8 * 86_400_000
    store.put("run", b"{}")  # written 8 days ago
    store.clock = system_clock
    store.put("run", b"{}")
    res = runner.invoke(cli, ["--json", "refs", "prune", "--older-than", "7d"], env=env)
    assert json.loads(res.stdout)["data"] == {"removed": 1, "remaining": 1}
    res = runner.invoke(cli, ["--json", "refs", "prune", "--all"], env=env)
    assert json.loads(res.stdout)["data"] == {"removed": 1, "remaining": 0}
    res = runner.invoke(cli, ["--json", "refs", "prune"], env=env)
    assert res.exit_code == 2


def test_prune_acts_on_the_callers_refs_only(tmp_path: Any) -> None:
    """`refs prune` once removed every tenant's refs; now the caller's alone:
    `--tenant T` prunes T's, no `--tenant` prunes the shared ones."""
    runner = CliRunner()
    store = RefStore(tmp_path / "s", ttl_ms=10**9, max_count=50, max_bytes=10**9)
    env = {"QDSL_STATE_DIR": str(tmp_path / "s"), "QDSL_REF_TTL_MS": str(10**9)}
    t1 = [store.put("run", b"{}", tenant="t1").ref_id for _ in range(2)]
    t2 = store.put("run", b"{}", tenant="t2").ref_id
    shared = store.put("parse", b"{}").ref_id

    def prune(*args: str) -> dict[str, Any]:
        res = runner.invoke(cli, ["--json", "refs", "prune", "--all", *args], env=env)
        assert res.exit_code == 0, res.output
        data: dict[str, Any] = json.loads(res.stdout)["data"]
        return data

    def left() -> set[str]:
        return {r.ref_id for r in store.records()}

    assert prune("--tenant", "t1") == {"removed": 2, "remaining": 0}
    assert left() == {t2, shared}
    assert prune("--tenant", "t3") == {"removed": 0, "remaining": 0}
    assert prune() == {"removed": 1, "remaining": 0}
    assert left() == {t2}
    assert prune("--tenant", "t2") == {"removed": 1, "remaining": 0}
    assert left() == set() and not set(t1) & left()
    res = runner.invoke(cli, ["--json", "refs", "prune", "--all", "--tenant", " "], env=env)
    assert res.exit_code == 2  # a blank tenant is a usage error here as everywhere


def test_chain_reads_refs_by_step_path(tmp_path: Any, cli_store_env: dict[str, str]) -> None:
    env = {"QDSL_STATE_DIR": str(tmp_path / "s"), **cli_store_env}
    stored = json.dumps({"data": {"items": [{"id": "64"}]}}).encode()
    ref = _cli_store(env).put("run", stored).ref_id
    steps = [
        {"op": "refs list"},
        {"op": "refs.get", "input": {"ref": "$.steps[0].data.refs[0].refId", "expr": "data"}},
        {"op": "refs get", "input": {"ref": ref, "expr": "$.steps[1].data.expr"}},
    ]
    res = CliRunner().invoke(cli, ["--json", "chain", "--steps", json.dumps(steps)], env=env)
    assert res.exit_code == 0, res.output
    env = json.loads(res.stdout)
    assert env["operation"] == "chain"
    assert env["data"]["value"] == {"items": [{"id": "64"}]}


@pytest.mark.parametrize(
    ("steps", "code"),
    [
        ("[]", "usage/bad_steps"),
        ('[{"op": "nope"}]', "usage/unknown_op"),
        ('[{"op": "chain", "input": {}}]', "usage/nested_chain"),
        ('[{"op": "refs list", "input": {"bogus": 1}}]', "usage/unknown_input"),
        (
            '[{"op": "refs list"}, {"op": "refs get", "input": {"ref": "$.steps[5].x"}}]',
            "usage/chain_ref_empty",
        ),
    ],
)
def test_chain_errors_name_the_step(steps: str, code: str) -> None:
    res = CliRunner().invoke(cli, ["--json", "chain", "--steps", steps])
    assert res.exit_code == 2
    assert json.loads(res.stderr)["error"]["code"] == code
