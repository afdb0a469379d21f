"""Where the database is and how to connect to it.

* `default_database_url()`: an embedded SQLite file `demo.sqlite3` in the qdsl
  state directory (QDSL_STATE_DIR, else platformdirs' user state dir), so
  `qdsl demo` works without a server.
* `make_engine(url)`: PostgreSQL goes through psycopg 3; a plain
  `postgresql://` or `postgres://` URL is rewritten to `postgresql+psycopg://`.
* `display_url(url)`: the URL as output may show it (SPEC 9).
* `prepare_threshold` in a PostgreSQL URL's query is qdsl's, not libpq's: it is
  taken out of the URL and handed to psycopg (`none` turns server-side prepared
  statements off, for a pooler that keeps none across transactions, such as
  PgBouncer before 1.21 in transaction mode; docs/scaling.md).
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.engine import URL, make_url

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.private_dir import private_root, refuse_unsafe_file
from qdsl.facts.fair_checkout import DEFAULT_MAX_OVERFLOW, record

if TYPE_CHECKING:
    from sqlalchemy.ext.asyncio import AsyncEngine

__all__ = [
    "DEMO_DB_NAME",
    "create_sqlite_file",
    "default_database_url",
    "demo_database_file",
    "display_url",
    "driver_url",
    "existing_engine",
    "make_async_engine",
    "make_engine",
    "normalize_url",
    "read_only_async_engine",
    "read_only_engine",
    "require_database",
    "state_dir",
]

DEMO_DB_NAME = "demo.sqlite3"


def state_dir() -> Path:
    """QDSL_STATE_DIR, else the platform's user state dir; created, with any
    missing parents, mode 0700 (as the ref store creates it), and refused unless
    it is the user's own (`qdsl.dsl.settings.private_dir`).

    Raises UsageError `state_dir_unsafe` / `state_dir_unusable`.
    """
    return private_root()


# The files SQLite keeps beside a database (WAL mode, rollback journal) and the
# set-up lock (facts.db.setup_lock).
SQLITE_BESIDE = ("-wal", "-shm", "-journal", ".lock")


def demo_database_file() -> Path:
    """`<state dir>/demo.sqlite3`, refused (typed) when it or a file kept beside it
    is a symlink, not a regular file or another user's: SQLite follows links."""
    path = state_dir() / DEMO_DB_NAME
    for suffix in ("", *SQLITE_BESIDE):
        name = DEMO_DB_NAME + suffix
        refuse_unsafe_file(path.with_name(name), f"{name} in the state dir")
    return path


def default_database_url() -> str:
    return f"sqlite+pysqlite:///{demo_database_file()}"


def create_sqlite_file(url: str) -> None:
    """Create a SQLite file database that does not exist yet: empty, mode 0600.

    SQLite itself creates a file 0644 whatever the umask, and its `-wal` and
    `-shm` files take the database's mode. A full disk is `database/disk_full`;
    any other fault (a missing or read-only directory) SQLite reports when it
    opens the file. Never through a symlink (O_EXCL refuses any existing name).
    """
    parsed = make_url(normalize_url(url))
    database = parsed.database
    if parsed.get_backend_name() != "sqlite" or database in (None, "", ":memory:"):
        return
    if parsed.query.get("mode") == "memory" or database.startswith("file:"):
        return
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
    try:
        os.close(os.open(database, flags, 0o600))
    except FileExistsError:
        return
    except OSError as exc:
        if exc.errno in (errno.ENOSPC, errno.EDQUOT):
            from qdsl.facts.dberrors import disk_full

            raise disk_full(display_url(url)) from None


def normalize_url(url: str) -> str:
    """Pin PostgreSQL URLs to psycopg 3 and SQLite URLs to the stdlib driver."""
    try:
        parsed = make_url(url)
    except Exception as exc:
        raise UsageError(
            "bad_database_url",
            f"not a database URL: {url!r}",
            hint="use e.g. postgresql://user@host/db or sqlite:///path/to/file.sqlite3",
        ) from exc
    backend = parsed.get_backend_name()
    if backend in ("postgresql", "postgres"):
        parsed = parsed.set(drivername="postgresql+psycopg")
    elif backend == "sqlite" and parsed.get_driver_name() in ("", "pysqlite"):
        parsed = parsed.set(drivername="sqlite+pysqlite")
    else:
        raise UsageError(
            "unsupported_database",
            f"unsupported database backend {backend!r}",
            hint="qdsl supports PostgreSQL (postgresql://...) and SQLite (sqlite:///...)",
        )
    return parsed.render_as_string(hide_password=False)


def display_url(url: str) -> str:
    """`url` fit for output: no password, and a SQLite file by name only (SPEC 9)."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "sqlite" and parsed.database not in (None, "", ":memory:"):
        return f"{parsed.drivername}:///…/{Path(parsed.database or '').name}"
    return parsed.render_as_string(hide_password=True)


def _sqlite_pragmas(dbapi_conn: Any, _record: Any) -> None:
    cur = dbapi_conn.cursor()
    try:
        # WAL lets readers (executor) run beside a writer (demo init); the
        # busy timeout waits out short write locks instead of failing.
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA busy_timeout=5000")
        cur.execute("PRAGMA foreign_keys=OFF")
    finally:
        cur.close()


# The URL's query parameter (qdsl's own) that sets psycopg's prepare_threshold.
PREPARE_PARAM = "prepare_threshold"


def driver_url(url: str) -> tuple[URL, dict[str, Any]]:
    """`url` normalized and without `prepare_threshold`, and the psycopg connect
    arguments that parameter names: `none` (or `off`) prepares nothing server-side,
    a whole number N prepares a statement on its Nth run (psycopg's default: 5)."""
    parsed = make_url(normalize_url(url))
    raw = parsed.query.get(PREPARE_PARAM)
    if raw is None:
        return parsed, {}
    if parsed.get_backend_name() != "postgresql" or not isinstance(raw, str):
        raise _bad_prepare(raw)
    word = raw.strip().lower()
    threshold: int | None
    if word in ("none", "off"):
        threshold = None
    elif word.isdigit():
        threshold = int(word)
    else:
        raise _bad_prepare(raw)
    return parsed.difference_update_query([PREPARE_PARAM]), {"prepare_threshold": threshold}


def _bad_prepare(raw: object) -> UsageError:
    return UsageError(
        "bad_database_url",
        f"{PREPARE_PARAM}={raw!r} in the database URL is not a PostgreSQL setting qdsl knows",
        hint=f"write {PREPARE_PARAM}=none (no server-side prepared statements, for a "
        f"transaction pooler) or {PREPARE_PARAM}=N (a whole number), once, on a "
        "postgresql:// URL",
    )


def _with_driver_args(url: str, kwargs: dict[str, Any]) -> tuple[URL, dict[str, Any]]:
    parsed, extra = driver_url(url)
    if extra:
        kwargs = {**kwargs, "connect_args": {**extra, **kwargs.get("connect_args", {})}}
    return parsed, kwargs


def make_engine(url: str, **kwargs: Any) -> Engine:
    parsed, kwargs = _with_driver_args(url, kwargs)
    engine = create_engine(parsed, **kwargs)
    if engine.dialect.name == "sqlite":
        event.listen(engine, "connect", _sqlite_pragmas)
    record(engine, int(kwargs.get("max_overflow", DEFAULT_MAX_OVERFLOW)))
    return engine


def require_database(url: str) -> None:
    """Refuse a SQLite URL whose file does not exist (DatabaseMissing).

    SQLite creates a missing file on first connect, so a mistyped path would
    answer every question from an empty database. Only `qdsl db upgrade` and
    `qdsl demo init` may create one; readers (`ask`, `run`) call this first.
    """
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return
    if parsed.query.get("mode") == "memory" or Path(parsed.database or "").exists():
        return
    from qdsl.facts.dberrors import DatabaseMissing

    raise DatabaseMissing(
        f"the SQLite database {display_url(url)} does not exist",
        hint="check --db / QDSL_DATABASE_URL; `qdsl db upgrade` creates a new database",
        details={"file": Path(parsed.database or "").name},
    )


def existing_engine(url: str, **kwargs: Any) -> Engine:
    """`make_engine` for a database that must already exist (see require_database)."""
    require_database(url)
    return make_engine(url, **kwargs)


def read_only_engine(url: str, **kwargs: Any) -> Engine:
    """`existing_engine` for servers that only serve reads (hot standbys): on
    PostgreSQL every transaction of it is READ ONLY. Without that, SQLAlchemy
    hands a connection back with psycopg's `read_only` reset to False, not to the
    server's default, so the next transaction on it would BEGIN READ WRITE,
    which a standby refuses."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "postgresql":
        options = {"postgresql_readonly": True, **kwargs.pop("execution_options", {})}
        kwargs = {**kwargs, "execution_options": options}
    return existing_engine(url, **kwargs)


def read_only_async_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """The asyncio twin of `read_only_engine`: every PostgreSQL transaction READ ONLY."""
    parsed = make_url(normalize_url(url))
    if parsed.get_backend_name() == "postgresql":
        options = {"postgresql_readonly": True, **kwargs.pop("execution_options", {})}
        kwargs = {**kwargs, "execution_options": options}
    return make_async_engine(url, **kwargs)


def make_async_engine(url: str, **kwargs: Any) -> AsyncEngine:
    """The asyncio twin: aiosqlite for SQLite, psycopg 3 (async mode) for PostgreSQL."""
    from sqlalchemy.ext.asyncio import create_async_engine

    sync_url, kwargs = _with_driver_args(url, kwargs)
    if sync_url.get_backend_name() == "sqlite":
        sync_url = sync_url.set(drivername="sqlite+aiosqlite")
    return create_async_engine(sync_url, **kwargs)
