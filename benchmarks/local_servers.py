"""Servers a benchmark or a test starts on this machine: free ports, directories
the server's OS user owns, and PgBouncer in transaction mode.

As root, servers run as the `postgres` OS user (PostgreSQL and PgBouncer both
refuse root). Every wait polls with a generous bound: the machine may be
loaded. `tests/scale/pg_parts.py` builds its fixtures on this module.
"""

from __future__ import annotations

import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

PG_BIN = Path(os.environ.get("QDSL_TEST_PG_BIN", "/usr/lib/postgresql/15/bin"))
PGBOUNCER_PATHS = ("/usr/sbin/pgbouncer", "/usr/bin/pgbouncer")
SERVER_USER = "postgres"
# How long one step may take on a loaded 2-core machine before giving up.
WAIT_S = 180.0


def pgbouncer_binary() -> str | None:
    return shutil.which("pgbouncer") or next(
        (p for p in PGBOUNCER_PATHS if Path(p).is_file()), None
    )


def server_user() -> pwd.struct_passwd | None:
    """The OS user servers run as when we are root (None: not root, or no such user)."""
    if os.geteuid() != 0:
        return None
    try:
        return pwd.getpwnam(SERVER_USER)
    except KeyError:
        return None


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def as_server_user(cmd: Sequence[str]) -> list[str]:
    """`cmd` run as the server's OS user when we are root."""
    if os.geteuid() == 0:
        return ["runuser", "-u", SERVER_USER, "--", *cmd]
    return list(cmd)


def private_root(prefix: str) -> Path:
    """A fresh directory (0700) the server's OS user owns."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    user = server_user()
    if user is not None:
        os.chown(root, user.pw_uid, user.pw_gid)
    return root


def give_to_server_user(*paths: Path) -> None:
    user = server_user()
    if user is not None:
        for path in paths:
            os.chown(path, user.pw_uid, user.pw_gid)


def wait_for(what: str, ready: Callable[[], bool], *, timeout: float = WAIT_S) -> None:
    deadline = time.monotonic() + timeout
    delay = 0.05
    while not ready():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what}: not ready after {timeout:.0f} s")
        time.sleep(delay)
        delay = min(delay * 2, 1.0)


def accepting(port: int) -> bool:
    """pg_isready's answer for a server (or pooler) on 127.0.0.1:`port`."""
    done = subprocess.run(
        [str(PG_BIN / "pg_isready"), "-q", "-h", "127.0.0.1", "-p", str(port),
         "-U", "postgres", "-d", "postgres"],
        check=False,
        timeout=60,
    )
    return done.returncode == 0


def url_at(port: int, database: str, **query: str) -> str:
    extra = "".join(f"&{k}={v}" for k, v in query.items())
    return f"postgresql+psycopg://postgres@127.0.0.1:{port}/{database}?connect_timeout=10{extra}"


@dataclass
class Bouncer:
    """PgBouncer in front of one server, in transaction pool mode."""

    root: Path
    port: int
    process: subprocess.Popen[bytes]

    def url(self, database: str, **query: str) -> str:
        return url_at(self.port, database, **query)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=60)
        shutil.rmtree(self.root, ignore_errors=True)


_BOUNCER_INI = """
[databases]
* = host=127.0.0.1 port={server_port}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = {port}
unix_socket_dir =
auth_type = trust
auth_file = {root}/userlist.txt
pool_mode = transaction
default_pool_size = {pool_size}
max_client_conn = 400
ignore_startup_parameters = extra_float_digits,options
logfile = {root}/pgbouncer.log
pidfile = {root}/pgbouncer.pid
"""


def start_pgbouncer(binary: str, server_port: int, *, pool_size: int = 4) -> Bouncer:
    """PgBouncer (`binary`, with our own configuration: a packaged service is never
    used) on a free port, pooling `pool_size` server connections per database
    and user, per transaction, in front of the server on `server_port`."""
    root = private_root("qdsl-pgbouncer-")
    port = free_port()
    (root / "userlist.txt").write_text('"postgres" ""\n')
    (root / "pgbouncer.ini").write_text(
        _BOUNCER_INI.format(server_port=server_port, port=port, root=root, pool_size=pool_size)
    )
    give_to_server_user(root / "userlist.txt", root / "pgbouncer.ini")
    # `-u` makes pgbouncer switch user itself, so the process held here is its own
    user_flag = ["-u", SERVER_USER] if os.geteuid() == 0 else []
    process = subprocess.Popen(
        [binary, *user_flag, str(root / "pgbouncer.ini")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    bouncer = Bouncer(root=root, port=port, process=process)

    def up() -> bool:
        if process.poll() is not None:
            log = root / "pgbouncer.log"
            tail = log.read_text()[-2000:] if log.exists() else ""
            raise RuntimeError(f"pgbouncer exited {process.returncode}: {tail}")
        return accepting(port)

    try:
        wait_for("pgbouncer accepts connections", up)
    except BaseException:
        bouncer.stop()
        raise
    return bouncer
