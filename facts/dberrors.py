"""Database faults named by their cause: one DatabaseError subclass per cause.

A driver error is mapped by what the database says it is (PostgreSQL's
SQLSTATE, SQLite's result text, SQLAlchemy's pool timeout), never shown
verbatim: a driver message may quote bound values. `QDSL_DEBUG=1` adds it to
`details.driver_message` for the operator who asked.

`retryable` is true only where the same call can succeed unchanged once other
load has passed: a statement timeout, an exhausted pool, too many
connections, a serialization failure or deadlock. A closed port, a missing
database, table or grant stays broken until someone fixes it.
"""

from __future__ import annotations

import os
import re
from collections.abc import Collection
from typing import Any, ClassVar

from sqlalchemy import exc as sa_exc

from qdsl.dsl.errors import DatabaseError

__all__ = [
    "OWN_TABLES",
    "CatalogTableMissing",
    "ColumnMissing",
    "ConnectionLost",
    "DatabaseMissing",
    "DatabaseUnreachable",
    "DiskFailed",
    "DiskFull",
    "PoolExhausted",
    "PreparedStatementMissing",
    "PrivilegeMissing",
    "QueryFailed",
    "SchemaPredatesVersion",
    "StatementTimeout",
    "TableMissing",
    "TooManyConnections",
    "TransientFailure",
    "classify",
    "disk_full",
]

# qdsl's own tables (`qdsl db upgrade` creates them); any other missing table
# is the deployer's, named by their catalog.
OWN_TABLES: frozenset[str] = frozenset({"semantic_facts", "text_grams", "qdsl_alembic_version"})
READER_ROLE = "qdsl_reader"


class _Fault(DatabaseError):
    subtype_name: ClassVar[str] = "query_failed"
    default_retryable = False

    def __init__(
        self, message: str, *, hint: str | None = None, details: dict[str, Any] | None = None
    ) -> None:
        super().__init__(self.subtype_name, message, hint=hint, details=details)


class DatabaseUnreachable(_Fault):
    subtype_name = "unreachable"


class ConnectionLost(_Fault):
    """The server went away under an open connection (stopped, failed over, a
    pooler restarted): the same call can succeed on the next connection, which
    a multi-host URL may open on another server."""

    subtype_name = "connection_lost"
    default_retryable = True


class PreparedStatementMissing(_Fault):
    """A statement psycopg prepared is gone from, or already on, the server
    connection: a transaction pooler (PgBouncer before 1.21 in transaction mode)
    handed the client another server connection."""

    subtype_name = "prepared_statement_missing"


class DatabaseMissing(_Fault):
    subtype_name = "database_missing"


class TableMissing(_Fault):
    subtype_name = "table_missing"


class CatalogTableMissing(_Fault):
    subtype_name = "catalog_table_missing"


class ColumnMissing(_Fault):
    subtype_name = "column_missing"


class PrivilegeMissing(_Fault):
    subtype_name = "privilege_missing"


class StatementTimeout(_Fault):
    subtype_name = "timeout"
    default_retryable = True


class PoolExhausted(_Fault):
    subtype_name = "pool_exhausted"
    default_retryable = True


class TooManyConnections(_Fault):
    subtype_name = "too_many_connections"
    default_retryable = True


class TransientFailure(_Fault):
    subtype_name = "transient"
    default_retryable = True


class QueryFailed(_Fault):
    subtype_name = "query_failed"


class DiskFull(_Fault):
    """No space left where the database writes (SQLite's file, a server's disk)."""

    subtype_name = "disk_full"


class DiskFailed(_Fault):
    """The disk under the database failed a read or a write (SQLite's I/O error)."""

    subtype_name = "io_error"


def disk_full(where: str) -> DiskFull:
    return DiskFull(
        f"the disk holding the database {where} is full",
        hint="free space on that disk, then retry (the demo database lives in the state "
        "dir, which `qdsl refs path` shows)",
    )


class SchemaPredatesVersion(_Fault):
    """qdsl's tables exist but its version table does not: an older qdsl made them
    (before `qdsl_alembic_version`), so a migration would collide with them."""

    subtype_name = "schema_predates_version"


# SQLSTATE -> cause (PostgreSQL appendix A).
_QUERY_CANCELED = "57014"
_UNDEFINED_TABLE = "42P01"
_UNDEFINED_COLUMN = "42703"
_INSUFFICIENT_PRIVILEGE = "42501"
_INVALID_CATALOG = "3D000"
_TOO_MANY_CONNECTIONS = "53300"
_DISK_FULL = "53100"
# SQLite's words for a full disk: the file could not grow, or (in WAL mode) the
# `-shm` file could not (SQLite: "usually the file system is full").
_SQLITE_FULL = frozenset({"SQLITE_FULL", "SQLITE_IOERR_SHMSIZE"})
# a prepared statement's name unknown (26000) or taken (42P05) on the server connection
_PREPARED_NAME = frozenset({"26000", "42P05"})
_TRANSIENT = frozenset({"40001", "40P01", "55P03", "57P01", "57P02", "57P03"})

_RELATION = re.compile(r'relation "(?:[^"]+\.)?([^"]+)" does not exist')
_NO_SUCH_TABLE = re.compile(r"no such table: (?:\w+\.)?(\S+)")
_NO_SUCH_COLUMN = re.compile(r"no such column: (\S+)")
_PG_COLUMN = re.compile(r'column (\S+) does not exist')
_PERMISSION = re.compile(r"permission denied for (?:table|relation|view|sequence) (\S+)")
_PG_DATABASE = re.compile(r'database "([^"]+)" does not exist')


def _driver_message(exc: BaseException) -> str:
    orig = getattr(exc, "orig", None)
    return str(orig if orig is not None else exc).strip()


def _debug(details: dict[str, Any], message: str) -> dict[str, Any]:
    if os.environ.get("QDSL_DEBUG"):
        details["driver_message"] = message[:2000]
    return details


def _sqlstate(exc: BaseException) -> str | None:
    orig = getattr(exc, "orig", None)
    found = getattr(orig, "sqlstate", None)
    return found if isinstance(found, str) else None


def _missing_table(name: str, catalog_tables: Collection[str]) -> DatabaseError:
    name = name.strip('"')
    if name in OWN_TABLES or (name not in catalog_tables and name.startswith("qdsl_")):
        return TableMissing(
            f"the table {name}, one of qdsl's own, does not exist",
            hint="run `qdsl db upgrade` against this database",
            details={"table": name},
        )
    return CatalogTableMissing(
        f"the table {name}, which the catalog names, does not exist",
        hint="run `qdsl catalog check` to compare the catalog with the database",
        details={"table": name},
    )


def _privilege(name: str | None) -> DatabaseError:
    if name is None:
        return PrivilegeMissing(
            f"the role {READER_ROLE} lacks a privilege this query needs",
            hint="run `qdsl db secure` to grant the catalog's tables to the reader role",
        )
    return PrivilegeMissing(
        f"the role {READER_ROLE} may not read the table {name}",
        hint=f"GRANT SELECT ON {name} TO {READER_ROLE}, or run `qdsl db secure`",
        details={"table": name, "grant": f"SELECT ON {name} TO {READER_ROLE}"},
    )


def _connect_fault(message: str, where: str) -> DatabaseError | None:
    """A failure to open a connection, told apart by the server's or library's words."""
    lower = message.lower()
    found = _PG_DATABASE.search(message)
    if found:
        return DatabaseMissing(
            f"the database {found.group(1)} does not exist on {where}",
            hint="create it (createdb) or correct --db / QDSL_DATABASE_URL",
            details={"database": found.group(1)},
        )
    if "too many clients" in lower or "too many connections" in lower:
        return TooManyConnections(
            f"the server at {where} accepts no more connections",
            hint="retry later, or lower the pool size of the processes sharing the server",
        )
    if "unable to open database file" in lower:
        return DatabaseMissing(
            f"cannot open the SQLite database {where}",
            hint="check the path; only `qdsl db upgrade` and `qdsl demo init` create a file",
        )
    connect_words = ("connection refused", "could not translate host", "connection failed",
                     "timeout expired", "no route to host", "could not connect", "name or service")
    if any(w in lower for w in connect_words):
        return DatabaseUnreachable(
            f"cannot connect to the database server at {where}",
            hint="check that the server is running and --db / QDSL_DATABASE_URL names its "
            "host and port",
        )
    return None


def _connection_fault(
    exc: BaseException, message: str, state: str | None, where: str
) -> DatabaseError | None:
    """No connection could be opened, the one in use was lost, or a pooler in
    between changed the server connection under it."""
    if isinstance(exc, sa_exc.OperationalError) and state is None:
        fault = _connect_fault(message, where)
        if fault is not None:
            return fault
    if isinstance(exc, sa_exc.DBAPIError) and exc.connection_invalidated:
        # SQLAlchemy saw a disconnect (and drops the pool's connections)
        return ConnectionLost(
            f"the connection to the database server at {where} was lost",
            hint="retry the same call: it opens a new connection",
        )
    if state in _PREPARED_NAME:
        return PreparedStatementMissing(
            f"a prepared statement is not on the server connection at {where}, as if a "
            "transaction pooler were in between",
            hint="behind PgBouncer (transaction mode, before 1.21) add prepare_threshold=none "
            "to the database URL (docs/scaling.md)",
            details={"sqlstate": state},
        )
    return None


def classify(
    exc: BaseException,
    *,
    where: str = "the configured database",
    catalog_tables: Collection[str] = (),
    timeout_ms: int | None = None,
    interrupted: bool = False,
) -> DatabaseError:
    """The DatabaseError that names the cause of driver error `exc`.

    `where` is how the database may be shown (host and port, or a file's name,
    never a path); `catalog_tables` the tables the catalog names.
    """
    if isinstance(exc, DatabaseError):
        return exc
    message = _driver_message(exc)
    details = _debug({}, message)
    err = _classify(
        exc,
        message,
        where=where,
        catalog_tables=catalog_tables,
        timeout_ms=timeout_ms,
        interrupted=interrupted,
    )
    err.details = {**err.details, **details}
    return err


def _disk_fault(
    exc: BaseException, message: str, state: str | None, where: str
) -> DatabaseError | None:
    """A full disk, or the disk failing a read or write, under the database."""
    sqlite_name = getattr(getattr(exc, "orig", None), "sqlite_errorname", None)
    if state == _DISK_FULL or sqlite_name in _SQLITE_FULL or "database or disk is full" in message:
        return disk_full(where)
    if state is None and (
        (isinstance(sqlite_name, str) and sqlite_name.startswith("SQLITE_IOERR"))
        or "disk i/o error" in message.lower()
    ):
        return DiskFailed(
            f"the database {where} could not be read or written (a disk I/O error)",
            hint="check the disk holding it: free space, permissions, errors (the demo "
            "database lives in the state dir, which `qdsl refs path` shows)",
            details={"sqlite_error": sqlite_name},
        )
    return None


def _classify(
    exc: BaseException,
    message: str,
    *,
    where: str,
    catalog_tables: Collection[str],
    timeout_ms: int | None,
    interrupted: bool,
) -> DatabaseError:
    state = _sqlstate(exc)
    if isinstance(exc, sa_exc.TimeoutError):
        # SQLAlchemy's QueuePool: every pooled connection is checked out.
        return PoolExhausted(
            "every connection of the pool is in use",
            hint="retry; or raise the engine's pool_size / max_overflow",
        )
    if state == _QUERY_CANCELED or interrupted:
        shown = f" ({timeout_ms} ms)" if timeout_ms is not None else ""
        return StatementTimeout(
            f"the query was cancelled after the statement timeout{shown}",
            hint="narrow the plan (filters, limit) or raise QDSL_STATEMENT_TIMEOUT_MS",
            details={"timeout_ms": timeout_ms} if timeout_ms is not None else {},
        )
    if state == _UNDEFINED_TABLE or (state is None and "no such table" in message):
        found = _RELATION.search(message) or _NO_SUCH_TABLE.search(message)
        return _missing_table(found.group(1) if found else "?", catalog_tables)
    if state == _UNDEFINED_COLUMN or (state is None and "no such column" in message):
        found = _PG_COLUMN.search(message) or _NO_SUCH_COLUMN.search(message)
        column = found.group(1) if found else "?"
        return ColumnMissing(
            f"the column {column}, which the catalog names, does not exist",
            hint="run `qdsl catalog check` to compare the catalog with the database",
            details={"column": column},
        )
    if state == _INSUFFICIENT_PRIVILEGE:
        found = _PERMISSION.search(message)
        return _privilege(found.group(1) if found else None)
    if state == _INVALID_CATALOG:
        found = _PG_DATABASE.search(message)
        return DatabaseMissing(
            f"the database {found.group(1) if found else ''} does not exist on {where}",
            hint="create it (createdb) or correct --db / QDSL_DATABASE_URL",
        )
    disk = _disk_fault(exc, message, state, where)
    if disk is not None:
        return disk
    if state == _TOO_MANY_CONNECTIONS:
        return TooManyConnections(
            f"the server at {where} accepts no more connections",
            hint="retry later, or lower the pool size of the processes sharing the server",
        )
    if state in _TRANSIENT or "database is locked" in message:
        return TransientFailure(
            "the database gave up on the transaction because of concurrent work",
            hint="retry the same call",
            details={"sqlstate": state},
        )
    fault = _connection_fault(exc, message, state, where)
    if fault is not None:
        return fault
    orig = getattr(exc, "orig", None)
    return QueryFailed(
        f"the database refused the query ({type(orig or exc).__name__})",
        hint="rerun with QDSL_DEBUG=1 to see the database's own message",
        details={"sqlstate": state, "error_class": type(orig or exc).__name__},
    )
