"""Alembic environment for qdsl.

Migrations normally run programmatically through `facts.db.upgrade(url)`,
which passes an open connection in `config.attributes["connection"]`. Run
from the command line (`alembic -x url=... upgrade head` with a config whose
script_location is this directory), the URL comes from `-x url=`, then from
QDSL_DATABASE_URL.
"""

from __future__ import annotations

import os

from alembic import context
from sqlalchemy import Connection

from qdsl.facts.tables import metadata

config = context.config

# qdsl's history is kept in its own version table, so a deployer's own Alembic
# history (`alembic_version`) in the same database is never read or touched.
VERSION_TABLE = "qdsl_alembic_version"


def _owned(name: str | None, type_: str, _parent: object) -> bool:
    return type_ != "table" or name in metadata.tables


def _run(connection: Connection) -> None:
    context.configure(
        connection=connection,
        target_metadata=metadata,
        # SQLite cannot ALTER most things in place; batch mode copies tables.
        render_as_batch=connection.dialect.name == "sqlite",
        compare_type=True,
        version_table=VERSION_TABLE,
        # autogenerate compares only qdsl's own tables, never the deployer's
        include_name=_owned,
    )
    with context.begin_transaction():
        context.run_migrations()


def run_migrations_online() -> None:
    connection = config.attributes.get("connection")
    if connection is not None:
        _run(connection)
        return
    from qdsl.facts.db import make_engine

    url = context.get_x_argument(as_dictionary=True).get("url") or os.environ.get(
        "QDSL_DATABASE_URL"
    )
    if not url:
        raise SystemExit("pass -x url=<database url> or set QDSL_DATABASE_URL")
    engine = make_engine(url)
    try:
        with engine.connect() as conn:
            _run(conn)
            conn.commit()
    finally:
        engine.dispose()


if context.is_offline_mode():
    raise SystemExit("offline (--sql) mode is not supported; run against a database")
run_migrations_online()
