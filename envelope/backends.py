"""Which ref store a process uses: `QDSL_REF_STORE` / `[io] ref_store`.

`file` (the default): the private file store in the state directory, right
for one user's CLI. `postgresql`: the table `qdsl_refs`, shared by every
process of a deployment, so a ref made by one server process is readable by
the next. Its database is `QDSL_REF_STORE_URL` / `[io] ref_store_url`, else
the deployment's own (`--db`, which the CLI and servers hand over through
`deployment_database`, else `QDSL_DATABASE_URL`); it must be PostgreSQL and
migrated (`qdsl db upgrade`).

The PostgreSQL engine is made once per URL and process and kept (a server
reuses its pool); a forked child drops the parent's pool without closing the
parent's connections.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import TYPE_CHECKING

from qdsl.dsl.errors import UsageError
from qdsl.envelope.records import Clock, system_clock
from qdsl.envelope.settings import IoSettings, io_settings, state_dir

if TYPE_CHECKING:
    from sqlalchemy import Engine

    from qdsl.envelope.ref_api import RefStoreProtocol

__all__ = ["deployment_database", "open_selected", "ref_store_url", "set_deployment_database"]

# The deployment's database URL (`--db`): one command's, else the process's.
_DEPLOYMENT_URL: ContextVar[str | None] = ContextVar("qdsl_deployment_url", default=None)
_PROCESS_URL: list[str | None] = [None]
_ENGINES: dict[str, Engine] = {}
CONNECT_TIMEOUT_S = 10


def set_deployment_database(url: str | None) -> None:
    """For a server, once at start: the database it serves is the ref store's
    default in every thread and task of the process."""
    _PROCESS_URL[0] = url


@contextmanager
def deployment_database(url: str | None) -> Iterator[None]:
    """For one command: `url` (its `--db`) is the ref store's default meanwhile."""
    token = _DEPLOYMENT_URL.set(url)
    try:
        yield
    finally:
        _DEPLOYMENT_URL.reset(token)


def ref_store_url(settings: IoSettings, env: Mapping[str, str] | None = None) -> str:
    """The PostgreSQL store's database URL (normalized), or a usage error."""
    from sqlalchemy.engine import make_url

    from qdsl.facts.engines import display_url, normalize_url

    env = os.environ if env is None else env
    url = (
        settings.ref_store_url
        or _DEPLOYMENT_URL.get()
        or _PROCESS_URL[0]
        or env.get("QDSL_DATABASE_URL", "").strip()
        or None
    )
    if url is None:
        raise UsageError(
            "ref_store_needs_database",
            "the postgresql ref store has no database",
            hint="pass --db / set QDSL_DATABASE_URL (or QDSL_REF_STORE_URL) to a PostgreSQL URL, "
            "or set QDSL_REF_STORE=file",
        )
    url = normalize_url(url)
    if make_url(url).get_backend_name() != "postgresql":
        raise UsageError(
            "ref_store_needs_postgresql",
            f"the postgresql ref store needs a PostgreSQL database, not {display_url(url)}",
            hint="set QDSL_REF_STORE_URL to a PostgreSQL URL, or QDSL_REF_STORE=file",
        )
    return url


def open_selected(clock: Clock = system_clock) -> RefStoreProtocol:
    settings = io_settings()
    if settings.ref_store == "file":
        from qdsl.envelope.store import RefStore

        return RefStore(
            state_dir(),
            ttl_ms=settings.ttl_ms,
            max_count=settings.max_count,
            max_bytes=settings.max_bytes,
            grace_ms=settings.grace_ms,
            clock=clock,
            tenant_max_count=settings.tenant_max_count,
            tenant_max_bytes=settings.tenant_max_bytes,
        )
    from qdsl.envelope.pg_store import PgRefStore

    return PgRefStore(
        shared_engine(ref_store_url(settings)),
        ttl_ms=settings.ttl_ms,
        max_count=settings.max_count,
        max_bytes=settings.max_bytes,
        grace_ms=settings.grace_ms,
        clock=clock,
        tenant_max_count=settings.tenant_max_count,
        tenant_max_bytes=settings.tenant_max_bytes,
    )


def shared_engine(url: str) -> Engine:
    """This process's engine for `url`, made on first use."""
    engine = _ENGINES.get(url)
    if engine is None:
        from qdsl.facts.engines import make_engine

        # pre_ping: a server outlives database restarts; a stale pooled
        # connection is replaced instead of failing one ref read. A database
        # that does not answer fails the store's call in seconds, not minutes.
        engine = _ENGINES[url] = make_engine(
            url, pool_pre_ping=True, connect_args={"connect_timeout": CONNECT_TIMEOUT_S}
        )
    return engine


def _forget_engines_in_child() -> None:
    # The parent's sockets are the parent's: close=False leaves them open for it.
    for engine in _ENGINES.values():
        engine.dispose(close=False)
    _ENGINES.clear()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_engines_in_child)
