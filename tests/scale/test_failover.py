"""A standby stopped under load: calls that were on it fail with retryable
`database/*` errors, the next ones answer from the other standby (the read URL
names both), and no call ever returns another answer than the primary's. The
CLI, a process per call, answers from the standby that is left and never exits
1; with no standby left it exits 8.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
from pg_parts import Cluster, free_port, multi_host_url, wait_for

from qdsl.deployment import Deployment, resolve
from qdsl.dsl.errors import DatabaseError
from qdsl.facts.demo import DEMO_NOW
from qdsl.service import AnswerResult, Service

pytestmark = pytest.mark.pg

QUESTION = "Are there any A-share projects?"
TENANTS = ("t1", "t2", "t3")
WORKERS = 6
# calls answered before the stop, and after it (by the standby left), at least
BEFORE, AFTER = 30, 60


def _answer(res: AnswerResult) -> tuple[Any, ...]:
    return (res.status, json.dumps(res.data, sort_keys=True), tuple(e.id for e in res.evidence))


@pytest.fixture
def read_deployment(cluster: Cluster) -> Iterator[Deployment]:
    # both standbys, connections spread over them at random (libpq 16+)
    deployment = resolve(
        None,
        cluster.primary_url(),
        read_url=cluster.standbys_url(load_balance_hosts="random"),
        now=DEMO_NOW,
    )
    yield deployment
    deployment.close()


@pytest.fixture
def expected(cluster: Cluster) -> dict[str, tuple[Any, ...]]:
    on_primary = resolve(None, cluster.primary_url(), now=DEMO_NOW)
    try:
        service = Service(on_primary)
        return {t: _answer(service.ask(QUESTION, t)) for t in TENANTS}
    finally:
        on_primary.close()


class _Load:
    """Workers asking through one deployment until told to stop; every outcome kept."""

    def __init__(self, deployment: Deployment) -> None:
        self.service = Service(deployment)
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.answers: list[tuple[float, str, tuple[Any, ...]]] = []
        self.errors: list[tuple[float, DatabaseError]] = []
        self.faults: list[BaseException] = []
        self.threads = [threading.Thread(target=self._work, args=(i,)) for i in range(WORKERS)]

    def _work(self, i: int) -> None:
        n = 0
        while not self.stop.is_set():
            tenant = TENANTS[(i + n) % len(TENANTS)]
            n += 1
            try:
                res = self.service.ask(QUESTION, tenant)
            except DatabaseError as exc:
                with self.lock:
                    self.errors.append((time.monotonic(), exc))
            except BaseException as exc:  # anything else fails the test, below
                with self.lock:
                    self.faults.append(exc)
                return
            else:
                with self.lock:
                    self.answers.append((time.monotonic(), tenant, _answer(res)))

    def answered_since(self, moment: float) -> int:
        with self.lock:
            return sum(1 for at, _t, _a in self.answers if at > moment)

    def __enter__(self) -> _Load:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *_exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=600)


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "QDSL_NOW": DEMO_NOW.isoformat(), "QDSL_AUDIT": "off"}
    return subprocess.run(
        [sys.executable, "-m", "qdsl.cli.main", "--json", *args],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def test_a_standby_stopped_mid_load_never_gives_a_wrong_answer(
    cluster: Cluster, read_deployment: Deployment, expected: dict[str, tuple[Any, ...]]
) -> None:
    first = cluster.standbys[0]
    try:
        with _Load(read_deployment) as load:
            wait_for("answers before the stop", lambda: load.answered_since(0) >= BEFORE)
            first.stop("immediate")  # a crash: connections die mid-transaction
            stopped = time.monotonic()
            wait_for("answers from the standby left", lambda: load.answered_since(stopped) >= AFTER)
            # the CLI meanwhile: a new process, a new connection, to the standby left
            done = _cli(
                "--db", cluster.primary_url(), "--read-db", cluster.standbys_url(),
                "ask", "--tenant", "t1", QUESTION,
            )
        assert not load.faults, load.faults[:3]
        for _at, tenant, answer in load.answers:
            assert answer == expected[tenant]
        for _at, exc in load.errors:
            assert exc.retryable and exc.code.startswith("database/"), exc.to_dict()
        # the last calls of every worker all answered: the pool left the dead standby
        assert load.answered_since(stopped) >= AFTER
        assert done.returncode == 0, done.stderr[-2000:]
        data = json.loads(done.stdout)["data"]
        assert data["status"] == "answered" and data["answer"]["exists"] is True
    finally:
        if not first.running():
            first.start()
        cluster.wait_replayed()


def test_the_cli_without_any_standby_exits_8_not_1(cluster: Cluster) -> None:
    closed = multi_host_url([free_port(), free_port()], cluster.database)
    done = _cli(
        "--db", cluster.primary_url(), "--read-db", closed, "ask", "--tenant", "t1", QUESTION
    )
    assert done.returncode == 8, done.stderr[-2000:]
    error = json.loads(done.stderr.strip().splitlines()[-1])["error"]
    assert error["type"] == "database", error
