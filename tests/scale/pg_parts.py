"""Real PostgreSQL parts started by the tests: a primary with streaming hot
standbys, and PgBouncer in transaction mode.

Everything runs on free local ports under a fresh temporary directory, as the
`postgres` OS user when the tests run as root (the server refuses root), and is
stopped by the fixture that started it, whatever the test did. The machine is
shared and loaded: every wait polls (pg_isready, a query) with a generous bound,
and no step assumes a timing.

Without the binaries the tests skip with the reason, or fail under
QDSL_REQUIRE_PG=1 (as the PostgreSQL fixtures of tests/conftest.py do).
Ports, directories and the PgBouncer launcher are `benchmarks.local_servers`'s,
which the pooler benchmark shares.
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import Engine, create_engine, text

from benchmarks import local_servers
from benchmarks.local_servers import (
    PG_BIN,
    WAIT_S,
    Bouncer,
    as_server_user,
    free_port,
    private_root,
    server_user,
    url_at,
    wait_for,
)

__all__ = [
    "Bouncer",
    "Cluster",
    "Node",
    "free_port",
    "multi_host_url",
    "start_cluster",
    "start_pgbouncer",
    "wait_for",
]


def unavailable(reason: str) -> None:
    if os.environ.get("QDSL_REQUIRE_PG") == "1":
        pytest.fail(f"required (QDSL_REQUIRE_PG=1) but unavailable: {reason}")
    pytest.skip(reason)


def pg_binaries() -> Path:
    for tool in ("initdb", "pg_ctl", "pg_basebackup", "pg_isready"):
        if not (PG_BIN / tool).is_file():
            unavailable(f"PostgreSQL server binaries not found ({PG_BIN / tool})")
    if os.geteuid() == 0 and server_user() is None:
        unavailable("running as root and there is no 'postgres' OS user to run servers as")
    return PG_BIN


def start_pgbouncer(server_port: int, *, pool_size: int = 4) -> Bouncer:
    """PgBouncer in transaction mode in front of the server on `server_port`."""
    pg_binaries()  # pg_isready tells when it is up
    binary = local_servers.pgbouncer_binary()
    if binary is None:
        unavailable("pgbouncer is not installed (apt-get install pgbouncer; .ci/run does it)")
    assert binary is not None
    return local_servers.start_pgbouncer(binary, server_port, pool_size=pool_size)


def run(cmd: Sequence[str], *, timeout: float = WAIT_S) -> str:
    done = subprocess.run(
        as_server_user(cmd), capture_output=True, text=True, timeout=timeout, check=False
    )
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} exited {done.returncode}: {done.stderr[-2000:]}")
    return done.stdout


def multi_host_url(ports: Sequence[int], database: str, **query: str) -> str:
    """A libpq multi-host URL: one `host=` per server, tried as `query` says
    (target_session_attrs, load_balance_hosts)."""
    hosts = "&".join(f"host=127.0.0.1:{p}" for p in ports)
    extra = "".join(f"&{k}={v}" for k, v in query.items())
    return f"postgresql+psycopg://postgres@/{database}?{hosts}&connect_timeout=10{extra}"


@dataclass
class Node:
    """One PostgreSQL server of the cluster."""

    name: str
    data: Path
    port: int

    @property
    def log(self) -> Path:
        return self.data.parent / f"{self.name}.log"

    def start(self) -> None:
        run(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-l", str(self.log), "-w", "-t",
             str(int(WAIT_S)), "start"],
            timeout=WAIT_S + 30,
        )
        wait_for(f"{self.name} accepts connections", self.ready)

    def stop(self, mode: str = "fast") -> None:
        run(
            [str(PG_BIN / "pg_ctl"), "-D", str(self.data), "-m", mode, "-w", "-t",
             str(int(WAIT_S)), "stop"],
            timeout=WAIT_S + 30,
        )

    def running(self) -> bool:
        return (self.data / "postmaster.pid").exists()

    def ready(self) -> bool:
        return local_servers.accepting(self.port)

    def url(self, database: str = "postgres", **query: str) -> str:
        return url_at(self.port, database, **query)

    def admin(self, database: str = "postgres") -> Engine:
        return create_engine(self.url(database), isolation_level="AUTOCOMMIT")

    def scalar(self, sql: str, database: str = "postgres") -> object:
        engine = self.admin(database)
        try:
            with engine.connect() as conn:
                return conn.execute(text(sql)).scalar()
        finally:
            engine.dispose()

    def command(self, sql: str, database: str = "postgres") -> None:
        engine = self.admin(database)
        try:
            with engine.connect() as conn:
                conn.execute(text(sql))
        finally:
            engine.dispose()


_SERVER_SETTINGS = """
listen_addresses = '127.0.0.1'
unix_socket_directories = '{sockets}'
max_connections = 60
shared_buffers = 32MB
fsync = off
full_page_writes = off
wal_level = replica
max_wal_senders = 8
hot_standby = on
wal_keep_size = 128MB
log_min_messages = warning
"""


@dataclass
class Cluster:
    """A primary and its streaming hot standbys, one database in common."""

    root: Path
    primary: Node
    standbys: list[Node] = field(default_factory=list)
    database: str = "qdsl_replicas"

    def nodes(self) -> list[Node]:
        return [self.primary, *self.standbys]

    def primary_url(self) -> str:
        return self.primary.url(self.database)

    def standby_url(self, i: int, **query: str) -> str:
        return self.standbys[i].url(self.database, **query)

    def standbys_url(self, **query: str) -> str:
        """Every standby in one multi-host URL that connects to standbys only."""
        attrs = {"target_session_attrs": "standby", **query}
        return multi_host_url([n.port for n in self.standbys], self.database, **attrs)

    def primary_lsn(self) -> str:
        return str(self.primary.scalar("SELECT pg_current_wal_lsn()"))

    def caught_up(self, node: Node, lsn: str) -> bool:
        replayed = node.scalar(
            f"SELECT pg_last_wal_replay_lsn() >= '{lsn}'::pg_lsn"  # an LSN we read ourselves
        )
        return bool(replayed)

    def wait_replayed(self, nodes: Sequence[Node] | None = None) -> None:
        """Until every standby (or `nodes`) has replayed all the primary wrote."""
        lsn = self.primary_lsn()
        for node in nodes if nodes is not None else self.standbys:
            wait_for(f"{node.name} replays {lsn}", lambda n=node: self.caught_up(n, lsn))

    def stop(self) -> None:
        for node in reversed(self.nodes()):
            if node.running():
                try:
                    node.stop("immediate")
                except (RuntimeError, subprocess.TimeoutExpired):
                    _kill_postmaster(node)
        shutil.rmtree(self.root, ignore_errors=True)


def _kill_postmaster(node: Node) -> None:
    pid_file = node.data / "postmaster.pid"
    try:
        pid = int(pid_file.read_text().splitlines()[0])
        os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError, IndexError):
        pass


def start_cluster(standbys: int, seed: Callable[[str], None]) -> Cluster:
    """A primary seeded by `seed(url)`, then `standbys` hot standbys streaming from it
    (`pg_basebackup -R`), each caught up before this returns."""
    pg_binaries()
    root = private_root("qdsl-cluster-")
    cluster = Cluster(root=root, primary=Node("primary", root / "primary", free_port()))
    try:
        primary = cluster.primary
        run([str(PG_BIN / "initdb"), "-D", str(primary.data), "-A", "trust", "-U", "postgres",
             "-E", "UTF8", "--locale=C.UTF-8", "--no-sync"])
        with open(primary.data / "postgresql.conf", "a") as conf:
            conf.write(_SERVER_SETTINGS.format(sockets=root))
            conf.write(f"port = {primary.port}\n")
        primary.start()
        primary.command(f'CREATE DATABASE "{cluster.database}"')
        seed(cluster.primary_url())
        for i in range(standbys):
            node = Node(f"standby{i + 1}", root / f"standby{i + 1}", free_port())
            run([str(PG_BIN / "pg_basebackup"), "-h", "127.0.0.1", "-p", str(primary.port),
                 "-U", "postgres", "-D", str(node.data), "-R", "-X", "stream", "-c", "fast",
                 "--no-sync"])
            # -R wrote primary_conninfo there; the port is the standby's own
            with open(node.data / "postgresql.auto.conf", "a") as conf:
                conf.write(f"port = {node.port}\n")
            cluster.standbys.append(node)
            node.start()
        cluster.wait_replayed()
    except BaseException:
        cluster.stop()
        raise
    return cluster
