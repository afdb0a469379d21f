"""The pooler benchmark keeps running: `bench_pooler --quick` end to end against a
real PgBouncer (tiny counts; nothing about time is asserted)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from pg_parts import pg_binaries

from benchmarks import local_servers

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.pg


def test_the_pooler_benchmark_runs_quick(pg_admin_url: str) -> None:
    pg_binaries()
    if local_servers.pgbouncer_binary() is None:
        if os.environ.get("QDSL_REQUIRE_PG") == "1":
            pytest.fail("pgbouncer required (QDSL_REQUIRE_PG=1) but not installed")
        pytest.skip("pgbouncer is not installed (apt-get install pgbouncer; .ci/run does it)")
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.bench_pooler", "--quick", "--admin-url", pg_admin_url],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    assert "skipped" not in done.stdout
    table = done.stdout.split("qdsl vs raw psycopg", 1)[1]
    rows = [line for line in table.splitlines() if line.startswith("| ") and "×" in line]
    assert len(rows) == 3 and all("PgBouncer" in row for row in rows), table
