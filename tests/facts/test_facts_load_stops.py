"""A facts load stops on the server when its loader stops (issue 25, R2).

An `UPDATE semantic_facts` was seen running five minutes after its loader was
killed. Each test here makes a real `qdsl facts load` process wait on a lock
the test holds on semantic_facts (deterministic, whatever the machine's
load), then stops the loader and polls pg_stat_activity until the loader's
backend is gone, while the lock is still held: so the backend ended because
its client did, not because its statement could finish. Bounds are generous
and nothing is timed.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import sqlalchemy as sa
from load_support import fact, jsonl, stored_count

from qdsl.facts.db import make_engine, upgrade

WAIT_S = 120.0  # far beyond the 2 s the server takes to notice a dead client


@pytest.fixture
def pg_db(pg_database_factory: Callable[[], str]) -> str:
    url = pg_database_factory()
    upgrade(url)
    return url


@pytest.fixture
def locked(pg_db: str) -> Iterator[sa.Connection]:
    """A transaction holding SHARE on semantic_facts: the loader's writes wait for it."""
    engine = make_engine(pg_db)
    conn = engine.connect()
    conn.begin()
    conn.exec_driver_sql("LOCK TABLE semantic_facts IN SHARE MODE")
    try:
        yield conn
    finally:
        conn.rollback()
        conn.close()
        engine.dispose()


@pytest.fixture
def watcher(pg_db: str) -> Iterator[sa.Connection]:
    """Reads pg_stat_activity afresh each time (a transaction would keep one snapshot)."""
    engine = make_engine(pg_db, isolation_level="AUTOCOMMIT")
    with engine.connect() as conn:
        yield conn
    engine.dispose()


def _loader(url: str, tmp_path: Path, **env: str) -> subprocess.Popen[bytes]:
    path = tmp_path / "facts.jsonl"
    path.write_bytes(jsonl([fact(str(i)) for i in range(3)]))
    return subprocess.Popen(
        [sys.executable, "-m", "qdsl.cli.main", "--json", "--db", url, "facts", "load", str(path)],
        env={**os.environ, "QDSL_STATE_DIR": str(tmp_path / "state"), **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def _waiting_backend(conn: sa.Connection, loader: subprocess.Popen[bytes]) -> int:
    """The pid of the loader's backend once it waits for the test's lock."""
    query = sa.text(
        "SELECT pid FROM pg_stat_activity WHERE datname = current_database() "
        "AND wait_event_type = 'Lock'"
    )
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        pid = conn.execute(query).scalar()
        if pid is not None:
            return int(pid)
        assert loader.poll() is None, loader.communicate()
        time.sleep(0.1)
    loader.kill()
    pytest.fail("the loader never reached the lock")


def _backend_ends(conn: sa.Connection, pid: int) -> bool:
    query = sa.text("SELECT count(*) FROM pg_stat_activity WHERE pid = :pid")
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline:
        if conn.execute(query, {"pid": pid}).scalar() == 0:
            return True
        time.sleep(0.2)
    return False


def test_a_killed_loader_leaves_no_statement_running(
    pg_db: str, locked: sa.Connection, watcher: sa.Connection, tmp_path: Path
) -> None:
    loader = _loader(pg_db, tmp_path)
    pid = _waiting_backend(watcher, loader)
    loader.send_signal(signal.SIGKILL)
    loader.wait(timeout=WAIT_S)
    # the lock is still held: only noticing the dead client ends the backend
    assert _backend_ends(watcher, pid), "the backend outlived its killed loader"
    assert not locked.closed


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_a_signalled_loader_cancels_its_statement(
    pg_db: str, locked: sa.Connection, watcher: sa.Connection, tmp_path: Path, signum: int
) -> None:
    loader = _loader(pg_db, tmp_path)
    pid = _waiting_backend(watcher, loader)
    loader.send_signal(signum)
    _out, err = loader.communicate(timeout=WAIT_S)
    assert loader.returncode == 128 + signum, err[-2000:]
    assert b"nothing was loaded" in err
    assert _backend_ends(watcher, pid)
    assert not locked.closed


def test_a_statement_over_the_load_timeout_is_cancelled(
    pg_db: str, locked: sa.Connection, tmp_path: Path
) -> None:
    loader = _loader(pg_db, tmp_path, QDSL_LOAD_STATEMENT_TIMEOUT_MS="300")
    _out, err = loader.communicate(timeout=WAIT_S)  # it waits on the lock until the timeout
    assert loader.returncode == 8, err[-2000:]
    error = json.loads(err)["error"]
    assert error["code"] == "database/timeout" and error["retryable"] is True
    assert "QDSL_LOAD_STATEMENT_TIMEOUT_MS (300 ms)" in error["message"]
    locked.rollback()
    assert stored_count(pg_db) == 0


@pytest.mark.parametrize("raw", ["0", "-5", "10s", "99999999999"])
def test_a_malformed_load_timeout_is_a_usage_error(pg_db: str, tmp_path: Path, raw: str) -> None:
    loader = _loader(pg_db, tmp_path, QDSL_LOAD_STATEMENT_TIMEOUT_MS=raw)
    _out, err = loader.communicate(timeout=WAIT_S)
    assert loader.returncode == 2, err[-2000:]
    assert json.loads(err)["error"]["code"] == "usage/bad_setting"


def test_the_load_session_is_bounded_and_watched(pg_db: str) -> None:
    from qdsl.facts.load_session import prepare_session

    engine = make_engine(pg_db)
    names = ("statement_timeout", "client_connection_check_interval", "application_name",
             "tcp_keepalives_idle")
    try:
        with engine.begin() as conn:
            prepare_session(conn, 600_000)
            shown = [conn.execute(sa.select(sa.func.current_setting(n))).scalar() for n in names]
    finally:
        engine.dispose()
    # tcp_keepalives_* read as 0 over a Unix socket, where they do not apply
    assert shown[:3] == ["10min", "2s", "qdsl facts load"]
