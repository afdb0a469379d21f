"""Database URLs, engines, migrations and the demo database.

* URLs and engines (`default_database_url`, `make_engine`, `display_url`, ...)
  live in facts.engines and are re-exported here.
* `upgrade(url)`: runs the Alembic history programmatically. The migration
  scripts ship inside the package as `qdsl/migrations` (the repository's
  top-level `alembic/` folder, mapped by pyproject's package-dir); see
  `migrations_dir()`. No alembic.ini is needed.
* `ensure_demo(url)`: upgrade, then insert the demo data for every tenant that
  does not have it yet. Safe to run any number of times.
"""

from __future__ import annotations

import importlib.resources
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from sqlalchemy import (
    Connection,
    Engine,
    exists,
    func,
    inspect,
    select,
    text,
)
from sqlalchemy.engine import make_url
from sqlalchemy.exc import IntegrityError, OperationalError, SQLAlchemyError

from qdsl.dsl.errors import DatabaseError, InternalError
from qdsl.facts.demo_constants import DEMO_NOW, DEMO_TENANTS
from qdsl.facts.engines import (
    default_database_url,
    display_url,
    make_async_engine,
    make_engine,
    normalize_url,
    state_dir,
)
from qdsl.facts.tables import TABLES_BY_NAME, TENANT_TABLES, projects

__all__ = [
    "DEMO_NOW",
    "DEMO_TENANTS",
    "HEAD_REVISION",
    "READER_ROLE",
    "DemoStatus",
    "default_database_url",
    "display_url",
    "ensure_demo",
    "make_async_engine",
    "make_engine",
    "migrations_dir",
    "normalize_url",
    "row_counts",
    "setup_lock",
    "state_dir",
    "tenant_transaction",
    "upgrade",
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
# ensure_demo compares against it to skip loading Alembic when nothing is due.
HEAD_REVISION = "0002"
_UNREACHABLE_HINTS = ("connect", "unable to open", "could not translate host", "timeout expired")


def _db_error(exc: SQLAlchemyError, url: str) -> DatabaseError:
    shown = display_url(url)
    detail = str(getattr(exc, "orig", None) or exc)
    if isinstance(exc, OperationalError) and any(h in detail.lower() for h in _UNREACHABLE_HINTS):
        return DatabaseError(
            "unreachable",
            f"cannot connect to the database {shown}",
            hint="check that the database is running and --db / QDSL_DATABASE_URL is right",
            details={"error": detail[:500]},
        )
    return DatabaseError(
        "setup_failed",
        f"migrating or seeding {shown} failed: {type(exc).__name__}",
        hint="check the database user's privileges; `qdsl db upgrade` shows the failing step",
        retryable=False,
        details={"error": detail[:500]},
    )


def _upgrade_engine(engine: Engine) -> None:
    from alembic import command
    from alembic.config import Config

    cfg = Config()
    cfg.set_main_option("script_location", str(migrations_dir()))
    with engine.begin() as conn:
        cfg.attributes["connection"] = conn
        command.upgrade(cfg, "head")


# Arbitrary constant key of the PostgreSQL advisory lock serializing set-up.
_PG_SETUP_LOCK = 0x71D5_1A7E


@contextmanager
def setup_lock(engine: Engine) -> Iterator[None]:
    """Serialize migration and seeding across processes (parallel first calls).

    SQLite: an exclusive flock on `<database file>.lock`; PostgreSQL: a
    session advisory lock (scoped to the database) on its own connection.
    Without it, two first-time `qdsl` calls race on CREATE TABLE.
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
    try:
        import fcntl
    except ImportError:  # not POSIX: no cross-process lock, IntegrityError still caught
        yield
        return
    try:
        handle = open(f"{database}.lock", "a+b")  # noqa: SIM115 - held across the yield
    except OSError:
        # No writable directory: SQLite itself will report that precisely.
        yield
        return
    with handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def upgrade(url: str) -> str:
    """Migrate the database at `url` to the newest revision; returns that revision."""
    engine = make_engine(url)
    try:
        with setup_lock(engine):
            _upgrade_engine(engine)
        with engine.connect() as conn:
            rev = conn.execute(text("SELECT version_num FROM alembic_version")).scalar_one()
        return str(rev)
    except SQLAlchemyError as exc:
        raise _db_error(exc, url) from exc
    finally:
        engine.dispose()


READER_ROLE = "qdsl_reader"


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
    connection is reused).
    """
    sqlite_ro = read_only and engine.dialect.name == "sqlite"
    with engine.connect() as conn:
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


@dataclass(frozen=True)
class DemoStatus:
    url: str
    revision: str
    seeded_tenants: tuple[str, ...]
    rows: dict[str, int] = field(default_factory=dict)
    seconds: float = 0.0


def _seed_tenant(conn: Connection, tenant_id: str, rows: dict[str, list[dict[str, Any]]]) -> None:
    from qdsl.facts.bulk import bulk_insert

    for table_name, table_rows in rows.items():
        bulk_insert(conn, TABLES_BY_NAME[table_name], table_rows)


def _revision(engine: Engine) -> str | None:
    if not inspect(engine).has_table("alembic_version"):
        return None
    with engine.connect() as conn:
        found = conn.execute(text("SELECT version_num FROM alembic_version")).scalar()
    return None if found is None else str(found)


def _tenant_seeded(conn: Connection, tenant_id: str) -> bool:
    return bool(
        conn.execute(select(exists().where(projects.c.tenant_id == tenant_id))).scalar_one()
    )


def _demo_ready(engine: Engine) -> bool:
    if _revision(engine) != HEAD_REVISION:
        return False
    for tenant_id in DEMO_TENANTS:
        with tenant_transaction(engine, tenant_id) as conn:
            if not _tenant_seeded(conn, tenant_id):
                return False
    return True


def _migrate_and_seed(engine: Engine) -> list[str]:
    """Under setup_lock: upgrade if due, seed each missing tenant; the tenants seeded."""
    if _revision(engine) != HEAD_REVISION:
        _upgrade_engine(engine)
    data: Any = None
    seeded = []
    for tenant_id in DEMO_TENANTS:
        # One transaction per tenant with the RLS tenant set, so a
        # non-superuser owner passes the policies' WITH CHECK too.
        try:
            with tenant_transaction(engine, tenant_id) as conn:
                if _tenant_seeded(conn, tenant_id):
                    continue
                if data is None:
                    from qdsl.facts.demo_data import build_demo

                    data = build_demo()
                _seed_tenant(conn, tenant_id, data.rows_for(tenant_id))
            seeded.append(tenant_id)
        except IntegrityError:
            # Seeded concurrently by a process that does not take setup_lock.
            continue
    return seeded


def ensure_demo(url: str, *, count_rows: bool = False) -> DemoStatus:
    """Upgrade if needed, then seed each demo tenant that has no rows yet (idempotent).

    On an up-to-date, seeded database this is two cheap queries per tenant and
    no Alembic at all: every CLI call of the demo goes through here.
    `count_rows` fills DemoStatus.rows (one COUNT per table and tenant).
    """
    started = time.perf_counter()
    engine = make_engine(url)
    seeded: list[str] = []
    try:
        if not _demo_ready(engine):
            with setup_lock(engine):
                seeded = _migrate_and_seed(engine)
        counts = row_counts(engine) if count_rows else {}
        revision = _revision(engine) or HEAD_REVISION
    except SQLAlchemyError as exc:
        raise _db_error(exc, url) from exc
    finally:
        engine.dispose()
    return DemoStatus(
        url=make_url(normalize_url(url)).render_as_string(hide_password=True),
        revision=revision,
        seeded_tenants=tuple(seeded),
        rows=counts,
        seconds=time.perf_counter() - started,
    )


def row_counts(engine: Engine) -> dict[str, int]:
    """Rows per tenant table over the demo tenants (tenant set per tenant for RLS)."""
    counts = {t.name: 0 for t in TENANT_TABLES}
    for tenant_id in DEMO_TENANTS:
        with tenant_transaction(engine, tenant_id) as conn:
            for table in TENANT_TABLES:
                n = conn.execute(
                    select(func.count()).select_from(table).where(table.c.tenant_id == tenant_id)
                ).scalar_one()
                counts[table.name] += int(n)
    return counts
