"""The PostgreSQL ref store beyond the shared suites: refs cross processes,
row-level security keeps tenants apart by itself, a changed byte is
`ref_corrupt`, the CLI selects it by setting, and what a misconfiguration says.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from sqlalchemy import Connection, Engine, text
from sqlalchemy import true as sa_true
from sqlalchemy.exc import DBAPIError
from store_suites import REF_WRITER, empty_refs_table

from qdsl.dsl.errors import DatabaseError, RefError, UsageError
from qdsl.envelope import pg_store
from qdsl.envelope.backends import deployment_database, ref_store_url, set_deployment_database
from qdsl.envelope.pg_store import PgRefStore
from qdsl.envelope.ref_api import StoreWriteError
from qdsl.envelope.settings import IoSettings

pytestmark = pytest.mark.pg

QDSL = str(Path(sys.executable).with_name("qdsl"))


@pytest.fixture
def store(pg_refs_engine: Engine, pg_refs_admin: Engine) -> PgRefStore:
    empty_refs_table(pg_refs_admin)
    return PgRefStore(pg_refs_engine, ttl_ms=600_000, max_count=50, max_bytes=10**9)


def _error(store: PgRefStore, ref_id: str, tenant: str | None) -> RefError:
    with pytest.raises(RefError) as info:
        store.read_bytes(ref_id, tenant=tenant)
    return info.value


# ------------------------------------------------------------ across processes
_WRITER = """
import json, sys
from qdsl.envelope.store import open_store
rec = open_store().put("run", sys.stdin.buffer.read(), tenant="t1")
print(json.dumps({"refId": rec.ref_id, "sha256": rec.sha256}))
"""


def test_a_ref_written_by_one_process_is_read_by_another(
    pg_refs_url: str, store: PgRefStore, tmp_path: Path
) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    env |= {
        "QDSL_STATE_DIR": str(tmp_path / "writer-state"),
        "QDSL_REF_STORE": "postgresql",
        "QDSL_DATABASE_URL": pg_refs_url,  # the deployment's database is the default
    }
    payload = json.dumps({"ok": True, "data": list(range(5000))}).encode()
    proc = subprocess.run(
        [sys.executable, "-c", _WRITER],
        input=payload,
        env=env,
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr.decode()
    made = json.loads(proc.stdout)
    record, body = store.load(made["refId"], tenant="t1")
    assert body == payload and record.sha256 == made["sha256"] and record.tenant == "t1"
    assert not (tmp_path / "writer-state" / "refs").exists()  # nothing went to files


# ------------------------------------------------------------------------ RLS
def _as(conn: Connection, role: str, tenant: str, *, collect: bool = False) -> set[str | None]:
    """Every tenant the role sees in qdsl_refs, by a query without a tenant predicate."""
    conn.execute(text("SELECT set_config('role', :r, true)"), {"r": role})
    conn.execute(text("SELECT set_config('app.tenant_id', :t, true)"), {"t": tenant})
    if collect:
        conn.execute(text("SELECT set_config('app.ref_scope', 'collect', true)"))
    return set(conn.execute(text("SELECT tenant_id FROM qdsl_refs")).scalars())


@pytest.fixture
def three_refs(store: PgRefStore) -> dict[str | None, str]:
    made = {t: store.put("run", f"rows of {t}".encode(), tenant=t) for t in ("t1", "t2", None)}
    return {t: r.ref_id for t, r in made.items()}


def test_row_level_security_alone_keeps_tenants_apart(
    pg_refs_admin: Engine, three_refs: dict[str | None, str]
) -> None:
    seen: dict[tuple[str, str, bool], set[str | None]] = {}
    for role in ("qdsl_reader", REF_WRITER):
        for tenant in ("t1", "t2", ""):
            for collect in (False, True):
                with pg_refs_admin.begin() as conn:
                    seen[role, tenant, collect] = _as(conn, role, tenant, collect=collect)
    for collect in (False, True):  # the reader role never gets the collector's scope
        assert seen["qdsl_reader", "t1", collect] == {"t1", None}
        assert seen["qdsl_reader", "t2", collect] == {"t2", None}
        assert seen["qdsl_reader", "", collect] == {None}
    assert seen[REF_WRITER, "t1", False] == {"t1", None}
    assert seen[REF_WRITER, "", False] == {None}
    assert seen[REF_WRITER, "", True] == {"t1", "t2", None}


@settings(max_examples=40)
@given(
    owners=st.lists(st.sampled_from(["t1", "t2", "t3", None]), max_size=8),
    caller=st.sampled_from(["t1", "t2", "t3", None]),
)
def test_what_each_caller_may_see_is_the_databases_answer_too(
    pg_refs_engine: Engine,
    pg_refs_admin: Engine,
    owners: list[str | None],
    caller: str | None,
) -> None:
    """For any refs and any caller: the store lists exactly the caller's and
    the shared refs, and so does a bare query as the reader role."""
    empty_refs_table(pg_refs_admin)
    store = PgRefStore(pg_refs_engine, ttl_ms=600_000, max_count=50, max_bytes=10**9)
    made = [(store.put("run", b"x", tenant=owner).ref_id, owner) for owner in owners]
    expected = {ref for ref, owner in made if owner in (None, caller)}
    assert {r.ref_id for r in store.live(tenant=caller)} == expected
    with pg_refs_admin.begin() as conn:
        _as(conn, "qdsl_reader", caller or "", collect=True)
        probed = set(conn.execute(text("SELECT ref_id FROM qdsl_refs")).scalars())
    assert probed == expected


def test_the_application_role_may_insert_only_its_tenants_refs(
    pg_refs_admin: Engine, store: PgRefStore
) -> None:
    row = {"id": "r20261201T080000000-run-0123456789", "t": "t2"}
    insert = text(
        "INSERT INTO qdsl_refs (ref_id, tenant_id, operation, created_ms, expires_ms, bytes, "
        "sha256, seal, payload) VALUES (:id, :t, 'run', 0, 1, 0, '', '', '')"
    )
    with pytest.raises(DBAPIError, match="row-level security"), pg_refs_admin.begin() as conn:
        _as(conn, REF_WRITER, "t1", collect=True)
        conn.execute(insert, row)
    with pytest.raises(DBAPIError, match="permission denied"), pg_refs_admin.begin() as conn:
        _as(conn, "qdsl_reader", "t2")
        conn.execute(text("DELETE FROM qdsl_refs"))


def test_the_store_refuses_another_tenant_even_without_its_predicate(
    monkeypatch: pytest.MonkeyPatch, store: PgRefStore, three_refs: dict[str | None, str]
) -> None:
    """With the tenant predicate gone from the store's queries, row-level
    security still returns nothing of t2's to t1, exactly as if it were missing."""
    monkeypatch.setattr(pg_store, "_readable_by", lambda _tenant: sa_true())
    foreign = _error(store, three_refs["t2"], "t1")
    assert foreign.subtype == "ref_not_found"
    assert {r.tenant for r in store.live(tenant="t1")} == {"t1", None}
    assert store.read_bytes(three_refs["t1"], tenant="t1") == b"rows of t1"


# --------------------------------------------------------------------- tamper
@pytest.mark.parametrize(
    ("change", "subtype"),
    [
        ("payload = overlay(payload placing '\\x41'::bytea from 3 for 1)", "ref_corrupt"),
        ("sha256 = repeat('0', 64)", "ref_corrupt"),
        ("expires_ms = expires_ms + 3600000", "ref_corrupt"),
        ("bytes = bytes + 1", "ref_corrupt"),
        ("tenant_id = NULL", "ref_corrupt"),
        ("tenant_id = 't2'", "ref_not_found"),
    ],
)
def test_a_changed_row_is_never_read(
    pg_refs_admin: Engine, store: PgRefStore, change: str, subtype: str
) -> None:
    ref = store.put("run", b'{"rows": "of t1"}', tenant="t1").ref_id
    with pg_refs_admin.begin() as conn:
        # `change` is one of the literals above, not input.
        conn.execute(text(f"UPDATE qdsl_refs SET {change} WHERE ref_id = :id"), {"id": ref})
    assert _error(store, ref, "t1").subtype == subtype


# ------------------------------------------------------------- the CLI, e2e
def _qdsl(args: list[str], env: dict[str, str]) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([QDSL, *args], capture_output=True, env=env, timeout=120, check=False)


@pytest.fixture
def pg_cli_env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("QDSL_")}
    return env | {
        "QDSL_STATE_DIR": str(tmp_path / "state"),
        "QDSL_REF_STORE": "postgresql",
        "QDSL_REF_THRESHOLD": "1024",
        "QDSL_STATEMENT_TIMEOUT_MS": "600000",
    }


def test_cli_ask_over_budget_then_refs_get_and_input_ref(
    pg_url: str, pg_cli_env: dict[str, str], tmp_path: Path
) -> None:
    """Three processes: ask stores its answer in the deployment's database (its
    --db), refs get and --input-ref read it back; no ref file is written."""
    db = ["--db", pg_url]
    asked = _qdsl(["--json", *db, "ask", "--tenant", "t1", "list all projects"], pg_cli_env)
    assert asked.returncode == 0, asked.stderr.decode()
    preview = json.loads(asked.stdout)
    ref = preview["refId"]
    assert next(iter(preview)) == "refId" and preview["resultPersisted"] is True

    whole_env = {**pg_cli_env, "QDSL_REF_THRESHOLD": "0"}  # print what is read, whole
    got = _qdsl(["--json", *db, "refs", "get", "--tenant", "t1", ref, "@"], whole_env)
    assert got.returncode == 0, got.stderr.decode()
    full = json.loads(got.stdout)["data"]["value"]
    assert full["operation"] == "ask" and full["ok"] is True
    answer = full["data"]["answer"]
    assert answer and preview["outputBytes"] > 1024

    foreign = _qdsl(["--json", *db, "refs", "get", "--tenant", "t2", ref, "data"], pg_cli_env)
    assert foreign.returncode == 7 and _error_code(foreign) == "ref/ref_not_found"

    rerun = _qdsl(
        ["--json", *db, "run", "--tenant", "t1", "--input-ref", ref, "--pick", "data.plan"],
        whole_env,
    )
    assert rerun.returncode == 0, rerun.stderr.decode()
    assert json.loads(rerun.stdout)["data"]["answer"] == answer

    listed = _qdsl(["--json", *db, "refs", "list", "--tenant", "t1"], pg_cli_env)
    assert ref in {r["refId"] for r in json.loads(listed.stdout)["data"]["refs"]}
    path = json.loads(_qdsl(["--json", *db, "refs", "path"], pg_cli_env).stdout)["data"]
    assert path["backend"] == "postgresql" and path["table"] == "qdsl_refs"
    assert not (tmp_path / "state" / "refs").exists()


def _error_code(proc: subprocess.CompletedProcess[bytes]) -> str:
    """The error envelope's code: the last line of stderr (warnings come first)."""
    return str(json.loads(proc.stderr.splitlines()[-1])["error"]["code"])


def test_cli_settings_are_checked(pg_cli_env: dict[str, str], tmp_path: Path) -> None:
    bad = _qdsl(["--json", "refs", "list"], {**pg_cli_env, "QDSL_REF_STORE": "redis"})
    assert bad.returncode == 2 and _error_code(bad) == "usage/bad_setting"
    assert b"cleanup skipped (QDSL_REF_STORE must be file or postgresql" in bad.stderr
    sqlite = f"sqlite:///{tmp_path / 'x.sqlite3'}"
    wrong = _qdsl(["--json", "--db", sqlite, "refs", "list"], pg_cli_env)
    assert wrong.returncode == 2 and _error_code(wrong) == "usage/ref_store_needs_postgresql"


# ------------------------------------------------------------ configuration
def test_the_database_is_the_setting_then_the_deployments_then_the_env() -> None:
    pg = "postgresql+psycopg://qdsl@db.internal:5432/"
    env = {"QDSL_DATABASE_URL": pg + "env"}
    assert ref_store_url(IoSettings(ref_store_url=pg + "own"), env).endswith("/own")
    with deployment_database(pg + "db"):
        assert ref_store_url(IoSettings(), env).endswith("/db")
        assert ref_store_url(IoSettings(ref_store_url=pg + "own"), env).endswith("/own")
    assert ref_store_url(IoSettings(), env).endswith("/env")
    set_deployment_database(pg + "server")  # a server's, seen from every thread
    try:
        seen: list[str] = []
        worker = threading.Thread(target=lambda: seen.append(ref_store_url(IoSettings(), env)))
        worker.start()
        worker.join()
        assert seen[0].endswith("/server")
        with deployment_database(pg + "db"):
            assert ref_store_url(IoSettings(), env).endswith("/db")
    finally:
        set_deployment_database(None)
    with pytest.raises(UsageError) as info:
        ref_store_url(IoSettings(), {})
    assert info.value.subtype == "ref_store_needs_database"


def test_an_unmigrated_database_says_so(pg_database_factory: Callable[[], str]) -> None:
    from qdsl.facts.db import make_engine

    engine = make_engine(pg_database_factory())
    try:
        bare = PgRefStore(engine, ttl_ms=1000, max_count=5, max_bytes=10**6)
        with pytest.raises(StoreWriteError, match="qdsl_refs"):
            bare.put("run", b"x")
        with pytest.raises(DatabaseError) as info:
            bare.read_bytes("r20991201T080000000-run-0123456789")
        assert info.value.subtype == "table_missing"
        assert "qdsl db upgrade" in (info.value.hint or "")
        assert "qdsl_refs" in bare.gc().warnings[0]
    finally:
        engine.dispose()


def test_an_unreachable_store_degrades_and_never_fails_the_command(
    pg_cli_env: dict[str, str],
) -> None:
    """Collection warns, a large result prints `resultPersisted: false`, and
    reading a ref is a typed database error (exit 8)."""
    env = {**pg_cli_env, "QDSL_REF_STORE_URL": "postgresql://qdsl@127.0.0.1:1/nowhere"}
    plan = ["--plan", 'count project where status = "active"']
    small = _qdsl(["--json", "parse", *plan], {**env, "QDSL_REF_THRESHOLD": "0"})
    assert small.returncode == 0 and b"ref store cleanup skipped" in small.stderr
    large = _qdsl(["--json", "catalog"], {**env, "QDSL_REF_THRESHOLD": "1024"})  # ~7 KB
    assert large.returncode == 0
    printed = json.loads(large.stdout)
    assert printed["resultPersisted"] is False and printed["refId"] is None
    assert printed["degraded"] is True and b"could not persist" in large.stderr
    read = _qdsl(["--json", "refs", "get", "r20991201T080000000-run-0123456789"], env)
    assert read.returncode == 8 and _error_code(read) == "database/unreachable"
