"""Replication lag: facts loaded on the primary that a standby has not replayed
yet never give a stale answer to a plan that requires fresh facts, which reads
the primary; any other plan reads the standby's snapshot, a little behind.

The lag is made, not waited for: replay is paused on the standby
(`pg_wal_replay_pause()`) while the facts are loaded, and resumed at the end.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from pg_parts import Cluster, wait_for

from qdsl.facts.demo import DEMO_NOW

pytestmark = pytest.mark.pg

FRESH = "retrieval facts_first, require_fresh_fact, freshness_days 30"
ANY_AGE = "retrieval facts_first"


def _cli(*args: str) -> tuple[int, dict[str, Any], str]:
    env = {**os.environ, "QDSL_NOW": DEMO_NOW.isoformat(), "QDSL_AUDIT": "off"}
    done = subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    text = done.stdout if done.returncode == 0 else done.stderr
    return done.returncode, json.loads(text.strip().splitlines()[-1]), done.stderr


def _listed(cluster: Cluster, value: str, retrieval: str) -> list[str]:
    plan = f'list project where market_theme = "{value}" {retrieval}'
    code, env, err = _cli(
        "--db", cluster.primary_url(), "--read-db", cluster.standby_url(0),
        "run", "--tenant", "t1", "--plan", plan,
    )
    assert code == 0, err[-2000:]
    return [item["id"] for item in env["data"]["answer"]["items"]]


def _paused(cluster: Cluster) -> bool:
    state = cluster.standbys[0].scalar("SELECT pg_get_wal_replay_pause_state()")
    return state == "paused"


def test_a_fresh_plan_never_reads_facts_a_standby_has_not_replayed(
    cluster: Cluster, tmp_path: Path
) -> None:
    standby = cluster.standbys[0]
    value = f"lagcheck-{uuid.uuid4().hex[:8]}"
    fact = {
        "tenant_id": "t1",
        "entity_type": "project",
        "entity_id": "61",
        "predicate": "market_theme",
        "value_text": value,
        "source_ref": f"doc:{value}",
        "observed_at": (DEMO_NOW - timedelta(days=1)).isoformat(),
    }
    facts = tmp_path / "facts.jsonl"
    facts.write_text(json.dumps(fact) + "\n")
    standby.command("SELECT pg_wal_replay_pause()")
    try:
        wait_for("replay paused", lambda: _paused(cluster))
        # a write with a read URL set goes to the primary (the standby would refuse it)
        code, loaded, err = _cli(
            "--db", cluster.primary_url(), "--read-db", cluster.standby_url(0),
            "facts", "load", str(facts),
        )
        assert code == 0, err[-2000:]
        assert loaded["ok"] is True
        assert not cluster.caught_up(standby, cluster.primary_lsn())
        # fresh facts required: the primary's, where the fact is
        assert _listed(cluster, value, FRESH) == ["61"]
        # any age: the standby's snapshot, which lags (this is what reading it means)
        assert _listed(cluster, value, ANY_AGE) == []
    finally:
        standby.command("SELECT pg_wal_replay_resume()")
    cluster.wait_replayed([standby])
    assert _listed(cluster, value, ANY_AGE) == ["61"]
