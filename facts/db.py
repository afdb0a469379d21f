"""Database URLs, engines, migrations and tenant-bound transactions.

* URLs and engines (`default_database_url`, `make_engine`, `display_url`, ...)
  live in facts.engines and are re-exported here.
* `upgrade(url)`: runs qdsl's Alembic history programmatically. It creates
  only qdsl's own tables (semantic_facts, text_grams; the reader role on
  PostgreSQL) and records its revision in `qdsl_alembic_version`, so it lives
  beside a deployer's own tables and Alembic history. The migration scripts
  ship inside the package as `qdsl/migrations` (the repository's top-level
  `alembic/` folder, mapped by pyproject's package-dir); see
  `migrations_dir()`. No alembic.ini is needed.
* The demo schema and data are not here: `qdsl demo init` (facts.demo.setup).
"""

from __future__ import annotations

import importlib.resources
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import Connection, Engine, func, inspect, select, table, text
from sqlalchemy import column as sa_column
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.errors import DatabaseError, InternalError
from qdsl.dsl.tenant import valid_tenant
from qdsl.facts.dberrors import SchemaPredatesVersion, classify
from qdsl.facts.engines import (
    create_sqlite_file,
    default_database_url,
    display_url,
    existing_engine,
    make_async_engine,
    make_engine,
    normalize_url,
    state_dir,
)

__all__ = [
    "HEAD_REVISION",
    "READER_ROLE",
    "VERSION_TABLE",
    "create_sqlite_file",
    "current_revision",
    "db_error",
    "default_database_url",
    "display_url",
    "existing_engine",
    "make_async_engine",
    "make_engine",
    "migrations_dir",
    "normalize_url",
    "setup_lock",
    "state_dir",
    "tenant_transaction",
    "upgrade",
    "upgrade_engine",
]


def migrations_dir() -> Path:
    """Where Alembic finds env.py and versions/ (it loads them by path).

    An installed wheel holds them at `qdsl/migrations`, read through
    importlib.resources. An editable install maps `qdsl.migrations` onto the
    checkout's `alembic/` folder with a finder that importlib.resources cannot
    see through (the folder has no `__init__.py`, which would shadow the
    Alembic library for anything run from the checkout root), so the checkout
    layout is the second place to look.
    """
    shipped = importlib.resources.files("qdsl").joinpath("migrations")
    if isinstance(shipped, Path) and (shipped / "env.py").is_file():
        return shipped
    checkout = Path(__file__).resolve().parents[1] / "alembic"
    if (checkout / "env.py").is_file():
        return checkout
    raise InternalError(
        "missing_migrations",
        "qdsl's migration scripts are not installed",
        hint="reinstall qdsl; the wheel ships them under qdsl/migrations",
    )

# The newest revision under migrations_dir()/versions (a test keeps this in step).
# facts.demo.setup compares against it to skip loading Alembic when nothing is due.
HEAD_REVISION = "0003"
# Where qdsl's history is recorded (alembic/env.py passes it to Alembic).
VERSION_TABLE = "qdsl_alembic_version"


def db_error(exc: SQLAlchemyError, url: str) -> DatabaseError:
    """The typed error naming the cause of `exc` raised against `url` (facts.dberrors)."""
    return classify(exc, where=display_url(url))


def upgrade_engine(engine: Engine) -> None:
    """Run qdsl's migrations to head on `engine` (the caller holds setup_lock)."""
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    with engine.begin() as conn:
        _refuse_unversioned(conn)
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


# Tables every revision of qdsl has created; found without VERSION_TABLE they
# were made by a qdsl older than that table.
_ALWAYS_OWN = ("semantic_facts", "text_grams")


def _refuse_unversioned(conn: Connection) -> None:
    """Refuse before any DDL (SQLite would keep the DDL of a failed migration)."""
    found = inspect(conn)
    if found.has_table(VERSION_TABLE):
        version = table(VERSION_TABLE, sa_column("version_num"))
        if conn.execute(select(version.c.version_num)).first() is not None:
            return
    present = [t for t in _ALWAYS_OWN if found.has_table(t)]
    if present:
        raise SchemaPredatesVersion(
            f"this database was set up by an older qdsl: it has {', '.join(present)} but no "
            f"revision in {VERSION_TABLE}, so this version cannot tell which migrations are due",
            hint="for the demo database, delete it and run `qdsl demo init`; for another, "
            f"move {', '.join(present)} aside (rename or drop them) and run `qdsl db upgrade`, "
            "then reload the facts",
            details={"tables": present, "version_table": VERSION_TABLE},
        )


# Arbitrary constant key of the PostgreSQL advisory lock serializing set-up.
_PG_SETUP_LOCK = 0x71D5_1A7E


def _has_flock() -> bool:
    try:
        import fcntl  # noqa: F401
    except ImportError:
        return False
    return True


# flock serializes SQLite set-up on POSIX; without it (Windows) SQLite's own lock does.
FLOCK = _has_flock()
# How long a set-up waits for another process's (seconds); a demo seed takes a few.
SETUP_LOCK_WAIT_S = 600.0


@contextmanager
def setup_lock(engine: Engine) -> Iterator[None]:
    """Serialize migration and seeding across processes (parallel first calls).

    SQLite: an exclusive flock on `<database file>.lock`, or where there is no
    fcntl an exclusive transaction on that file as a SQLite database (SQLite
    locks it with the platform's own calls, LockFileEx on Windows); either is
    released when its holder closes or dies. PostgreSQL: a session advisory
    lock (scoped to the database) on its own connection. Without it, two
    first-time `qdsl` calls race on CREATE TABLE.
    """
    if engine.dialect.name == "postgresql":
        with engine.connect() as lock_conn:
            lock_conn.execute(select(func.pg_advisory_lock(_PG_SETUP_LOCK)))
            lock_conn.commit()
            try:
                yield
            finally:
                lock_conn.execute(select(func.pg_advisory_unlock(_PG_SETUP_LOCK)))
                lock_conn.commit()
        return
    database = engine.url.database
    if engine.dialect.name != "sqlite" or not database or database == ":memory:":
        yield
        return
    if not FLOCK:
        with _sqlite_lock(f"{database}.lock"):
            yield
        return
    import fcntl

    flags = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0)
    try:
        # 0600 whatever the umask, and never through a symlink
        lock = os.open(f"{database}.lock", flags, 0o600)
    except OSError:
        # No writable directory: SQLite itself will report that precisely.
        yield
        return
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield
    finally:
        os.close(lock)  # releases the flock


@contextmanager
def _sqlite_lock(path: str) -> Iterator[None]:
    """An exclusive transaction on the SQLite database `path`, held across the yield."""
    import sqlite3

    try:
        conn = sqlite3.connect(path, timeout=SETUP_LOCK_WAIT_S, isolation_level=None)
    except sqlite3.Error:
        # No writable directory: SQLite itself will report that precisely.
        yield
        return
    try:
        try:
            conn.execute("BEGIN EXCLUSIVE")
        except sqlite3.OperationalError as exc:
            if "locked" in str(exc) or "busy" in str(exc):
                raise DatabaseError(
                    "setup_lock_timeout",
                    f"another process held the set-up lock for over {SETUP_LOCK_WAIT_S:.0f} s",
                    hint="wait for the other qdsl set-up to finish, then retry",
                    retryable=True,
                ) from None
            yield  # cannot lock (read-only directory): SQLite reports the real fault
            return
        yield
    finally:
        conn.close()  # ends the transaction, and with it the lock


def upgrade(url: str) -> str:
    """Migrate the database at `url` to the newest revision; returns that revision."""
    create_sqlite_file(url)
    engine = make_engine(url)
    try:
        with setup_lock(engine):
            upgrade_engine(engine)
        rev = current_revision(engine)
        assert rev is not None
        return rev
    except SQLAlchemyError as exc:
        raise db_error(exc, url) from exc
    finally:
        engine.dispose()


READER_ROLE = "qdsl_reader"
_OWN_ISOLATION = {"postgresql": "READ COMMITTED", "sqlite": "SERIALIZABLE"}


def _pg_session_setup(conn: Connection, tenant_id: str, read_only: bool, role: str | None) -> None:
    if read_only:
        # Must be the first statement of the transaction.
        conn.execute(text("SET TRANSACTION READ ONLY"))
    if role is not None:
        # SET ROLE takes an identifier, not a parameter; quote it as one.
        quoted = conn.dialect.identifier_preparer.quote(role)
        conn.execute(text(f"SET LOCAL ROLE {quoted}"))
    conn.execute(select(func.set_config("app.tenant_id", tenant_id, True)))


@contextmanager
def tenant_transaction(
    engine: Engine, tenant_id: str, *, read_only: bool = False, role: str | None = None
) -> Iterator[Connection]:
    """A transaction bound to `tenant_id` for PostgreSQL row-level security.

    On PostgreSQL: optionally READ ONLY and `SET LOCAL ROLE role` (e.g.
    READER_ROLE), then `app.tenant_id` set for this transaction only. On SQLite
    there is no RLS: the tenant predicate in every statement is the only
    isolation, so callers must always add it; `read_only` turns on
    `PRAGMA query_only` for the transaction (and off again before the pooled
    connection is reused). The transaction is real on every engine, AUTOCOMMIT
    ones included, and a missing, blank or malformed tenant is a usage error.
    """
    valid_tenant(tenant_id)
    sqlite_ro = read_only and engine.dialect.name == "sqlite"
    with engine.connect() as conn:
        # A transaction of its own whatever the engine says: under AUTOCOMMIT the
        # role and tenant set below would last one statement (the level is
        # restored when the connection returns to the pool).
        conn.execution_options(isolation_level=_OWN_ISOLATION[conn.dialect.name])
        if sqlite_ro:
            conn.exec_driver_sql("PRAGMA query_only = ON")
            conn.commit()
        try:
            with conn.begin():
                if conn.dialect.name == "postgresql":
                    _pg_session_setup(conn, tenant_id, read_only, role)
                yield conn
        finally:
            if sqlite_ro:
                conn.exec_driver_sql("PRAGMA query_only = OFF")
                conn.commit()


def current_revision(engine: Engine) -> str | None:
    """qdsl's schema revision in this database, or None before `qdsl db upgrade`."""
    if not inspect(engine).has_table(VERSION_TABLE):
        return None
    version = table(VERSION_TABLE, sa_column("version_num"))
    with engine.connect() as conn:
        found = conn.execute(select(version.c.version_num)).scalar()
    return None if found is None else str(found)
