"""One deployment: what every entry point answers from, resolved once.

A `Deployment` is the catalog, the database (its engine made on first use,
once), the clock that judges freshness, where linkable values come from, the
audit sink and the limits. The Python API resolves one per request (its
options may name another catalog or clock each time), the CLI one per
command, the MCP server one per process; all three through `resolve`, so
the default database, the clock and the catalog files are each chosen in one
place. Without a database the deployment is the embedded demo
(`demo_deployment`): the demo's seeded SQLite file and its fixed "now".

A deployment may read from other servers than it writes to: `read_url` (the
CLI's `--read-db`, QDSL_READ_DATABASE_URL) names hot standbys, usually as a
libpq multi-host URL; plans read there (`read_engine`), everything that writes
(ref store, facts load, index refresh, set-up) stays on the primary (`engine`),
and a plan that requires fresh facts reads the primary too (`reader_for`):
a standby may not have replayed the newest facts yet (docs/scaling.md).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from functools import lru_cache
from typing import TYPE_CHECKING

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.catalog.files import resolve_catalog_cached
from qdsl.dsl.errors import UsageError
from qdsl.dsl.linking import TenantValues, ValueSource
from qdsl.dsl.settings.config import getenv
from qdsl.dsl.settings.limits import Limits, check_now

if TYPE_CHECKING:
    from sqlalchemy.engine import Engine
    from sqlalchemy.ext.asyncio import AsyncEngine

    from qdsl.audit import AuditSink

__all__ = [
    "Deployment",
    "EngineSlot",
    "catalog_for",
    "database_url",
    "demo_deployment",
    "parse_now",
    "read_database_url",
    "resolve",
    "wall_clock",
]

Clock = Callable[[], datetime]


def wall_clock() -> datetime:
    """The current time: the clock of every deployment not given a fixed one."""
    return datetime.now(UTC)


def fixed_clock(moment: datetime) -> Clock:
    return lambda: moment


def parse_now(raw: str | None) -> datetime | None:
    """`--now` / QDSL_NOW as an aware instant (naive is UTC), or None when unset."""
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            "bad_now",
            "--now / QDSL_NOW is not an ISO-8601 timestamp",
            hint="write e.g. 2026-11-01T00:00:00Z",
        ) from None
    return check_now(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def database_url(db_url: str | None) -> str:
    """The database a command or server reads: `--db` (QDSL_DATABASE_URL), else
    the embedded demo file in the state dir."""
    if db_url:
        return db_url
    from qdsl.facts.db import default_database_url

    return default_database_url()


def read_database_url(read_url: str | None) -> str | None:
    """The database plans read from when it is not the primary: `--read-db`
    (QDSL_READ_DATABASE_URL), else None (plans read the primary)."""
    return read_url.strip() or None if read_url else None


class EngineSlot:
    """A sync engine made on first use, once (a gated question opens nothing);
    one the caller gave is theirs to dispose."""

    def __init__(
        self,
        make: Callable[[], Engine] | None,
        *,
        given: Engine | None = None,
        owned: bool | None = None,
    ) -> None:
        self._make, self._engine = make, given
        self._owned = given is None if owned is None else owned
        self._lock = threading.Lock()

    def get(self) -> Engine:
        engine = self._engine
        if engine is None:
            with self._lock:
                if self._engine is None:
                    # only the asyncio twin on a caller's engine has none to make
                    assert self._make is not None, "this deployment runs on the caller's engine"
                    self._engine = self._make()
                engine = self._engine
        return engine

    def dispose(self) -> None:
        with self._lock:
            if self._owned and self._engine is not None:
                self._engine.dispose()
                self._engine = None


@dataclass(frozen=True, kw_only=True)
class Deployment:
    """What one entry point answers from (see the module doc). `url` is None when
    the caller handed an engine, or for the demo (see `database`); `values` None
    reads the database's value index."""

    catalog: Catalog
    clock: Clock
    engines: EngineSlot
    url: str | None = None
    # hot standbys plans read from (None: the primary); see the module doc
    read_url: str | None = None
    readers: EngineSlot | None = None
    demo: bool = False
    values: ValueSource | None = None
    audit_sink: AuditSink | None = None
    # None: the environment's, read where each request begins (`held_limits`)
    limits: Limits | None = None
    timeout_ms: int | None = None

    def now(self) -> datetime:
        return self.clock()

    def engine(self) -> Engine:
        """The primary's engine: what writes, and what reads when no read URL is set."""
        return self.engines.get()

    def read_engine(self) -> Engine:
        """The engine plans read through: the read URL's, else the primary's."""
        return self.readers.get() if self.readers is not None else self.engines.get()

    def async_read_engine(self) -> AsyncEngine | None:
        """A new asyncio engine on the read URL, every transaction READ ONLY (the
        caller disposes it), or None when plans read the primary."""
        if self.read_url is None:
            return None
        from qdsl.facts.engines import read_only_async_engine

        return read_only_async_engine(self.read_url)

    def reader_for(self, fresh: bool) -> Engine:
        """The engine a plan runs on: one that requires fresh facts (`fresh`) reads
        the primary, since a standby may lag behind the facts loaded there; any
        other reads the read URL's (a snapshot a little behind is its contract)."""
        return self.engines.get() if fresh else self.read_engine()

    def database(self) -> str:
        """The database's URL (the demo's is found, in the state dir, when asked)."""
        if self.url is not None:
            return self.url
        assert self.demo, "a deployment on a caller's engine has no URL"
        return database_url(None)

    def async_engine(self) -> AsyncEngine:
        """A new asyncio engine on this deployment's database (the caller disposes it)."""
        from qdsl.facts.db import make_async_engine

        url = self.database()
        if self.demo:
            _seeded_engine(url)  # seeds the file on first use
        return make_async_engine(url)

    def value_source(self, engine: Callable[[], Engine | AsyncEngine] | None = None) -> ValueSource:
        """The given value source, else the value index of the database (`engine`,
        default this deployment's), opened on first use."""
        if self.values is not None:
            return self.values
        return DatabaseValues(engine or self.read_engine, self.catalog)

    def close(self) -> None:
        self.engines.dispose()
        if self.readers is not None:
            self.readers.dispose()


class DatabaseValues:
    """The asking tenant's linkable values, from the database the question runs on
    (`qdsl.facts.value_index`), opened on first use: a gated question opens nothing."""

    def __init__(self, engine: Callable[[], Engine | AsyncEngine], catalog: Catalog) -> None:
        self.engine, self.catalog = engine, catalog

    def values_for(self, tenant_id: str) -> TenantValues:
        from sqlalchemy.exc import SQLAlchemyError

        from qdsl.executor.run import db_error, timeout_from_env
        from qdsl.facts.value_index import value_source_for

        engine = self.engine()
        try:
            return value_source_for(engine, self.catalog).values_for(tenant_id)
        except SQLAlchemyError as exc:
            # The same typed error the executor gives for this database.
            timeout = timeout_from_env(None)
            raise db_error(
                exc, timeout, interrupted=False, catalog=self.catalog, url=engine.url
            ) from None


@lru_cache(maxsize=8)
def _seeded_engine(url: str) -> Engine:
    """The demo database at `url`, created and seeded on first use; one engine per
    file for the process (never disposed: every request of the process shares it)."""
    from qdsl.facts.db import make_engine
    from qdsl.facts.demo.setup import ensure_demo

    ensure_demo(url)
    return make_engine(url)


def seed_demo() -> None:
    """Migrate and seed the embedded demo database now, leaving no engine open: a
    server forks its workers after this, and none may inherit a connection."""
    from qdsl.facts.demo.setup import ensure_demo

    ensure_demo(database_url(None))


def demo_now() -> datetime:
    from qdsl.facts.demo import DEMO_NOW

    return DEMO_NOW


def demo_deployment(
    catalog: Catalog | str | os.PathLike[str] | None = None, *, now: datetime | None = None
) -> Deployment:
    """The embedded demo: its seeded SQLite file in the state dir, judged by the
    demo's fixed "now" (unless `now` is given)."""
    # the file is looked up (state dir checked) when the database is first needed:
    # a gated question touches nothing
    return Deployment(
        catalog=catalog_for(catalog),
        clock=fixed_clock(now or demo_now()),
        engines=EngineSlot(lambda: _seeded_engine(database_url(None)), owned=False),
        demo=True,
    )


def catalog_for(catalog: Catalog | str | os.PathLike[str] | None) -> Catalog:
    """`catalog`, or the one its path names (else QDSL_CATALOG, else the demo's)."""
    # A file is parsed again only when it changed: the catalog object, and every
    # cache keyed on it, stays the same across requests and entry points.
    return catalog if isinstance(catalog, Catalog) else resolve_catalog_cached(catalog)


def resolve(
    catalog: Catalog | str | os.PathLike[str] | None = None,
    db_url: str | None = None,
    *,
    engine: Engine | None = None,
    external: bool = False,
    now: datetime | None = None,
    env_now: bool = False,
    demo_clock: bool = True,
    values: ValueSource | None = None,
    audit_sink: AuditSink | None = None,
    limits: Limits | None = None,
    timeout_ms: int | None = None,
    read_url: str | None = None,
    read_engine: Engine | None = None,
) -> Deployment:
    """The deployment of `catalog` (a Catalog, a TOML path, else QDSL_CATALOG, else
    the demo catalog) on `engine`, else `db_url`, else the embedded demo;
    `external`: its statements run on an asyncio engine the caller holds.

    The clock: `now`, else QDSL_NOW when `env_now` (the CLI and the server read
    it; the Python API does not), else the demo's fixed "now" on the demo
    database (unless `demo_clock` is off), else the wall clock. A database
    named by URL must exist (SQLite creates a mistyped file on first connect).
    `read_url`: where plans read (see the module doc); it needs `db_url`, the
    primary everything else writes to. `read_engine`: the same for a caller's
    engines (it needs `engine`, and stays the caller's to dispose).
    """
    moment = now or (parse_now(getenv("QDSL_NOW")) if env_now else None)
    read_url = read_database_url(read_url)
    if read_url is not None and (db_url is None or engine is not None or external):
        raise UsageError(
            "read_db_without_primary",
            "--read-db / QDSL_READ_DATABASE_URL names where plans read, but no --db names "
            "the primary that everything else writes to",
            hint="pass --db (QDSL_DATABASE_URL) with the primary's URL as well",
        )
    if read_engine is not None and engine is None:
        raise read_engine_without_primary()
    if engine is None and db_url is None and not external:
        demo = demo_deployment(catalog, now=moment)
        if moment is None and not demo_clock:
            demo = _replace_clock(demo, wall_clock)
        return _with(demo, values, audit_sink, limits, timeout_ms)
    url: str | None = None
    if engine is not None or external:
        slot = EngineSlot(None, given=engine)
    else:
        url = database_url(db_url)
        slot = EngineSlot(_existing(url))
    readers = EngineSlot(_read_only(read_url)) if read_url is not None else None
    if read_engine is not None:
        readers = EngineSlot(None, given=read_engine)
    return Deployment(
        catalog=catalog_for(catalog),
        clock=fixed_clock(moment) if moment is not None else wall_clock,
        engines=slot,
        url=url,
        read_url=read_url,
        readers=readers,
        values=values,
        audit_sink=audit_sink,
        limits=limits,
        timeout_ms=timeout_ms,
    )


def read_engine_without_primary() -> UsageError:
    return UsageError(
        "read_engine_without_primary",
        "a read engine names where plans read, but no engine names the primary that "
        "everything else writes to",
        hint="pass engine= (the primary) with read_engine= (the standbys)",
    )


def _existing(url: str) -> Callable[[], Engine]:
    def make() -> Engine:
        from qdsl.facts.db import existing_engine

        return existing_engine(url)

    return make


def _read_only(url: str) -> Callable[[], Engine]:
    def make() -> Engine:
        from qdsl.facts.engines import read_only_engine

        return read_only_engine(url)

    return make


def _replace_clock(d: Deployment, clock: Clock) -> Deployment:
    from dataclasses import replace

    return replace(d, clock=clock)


def _with(
    d: Deployment,
    values: ValueSource | None,
    audit_sink: AuditSink | None,
    limits: Limits | None,
    timeout_ms: int | None,
) -> Deployment:
    from dataclasses import replace

    return replace(d, values=values, audit_sink=audit_sink, limits=limits, timeout_ms=timeout_ms)
