"""Run a cached statement by the SQL text SQLAlchemy compiled for it.

`Connection.execute(stmt)` walks the statement for its cache key, looks the
compiled form up, expands IN lists and sets up a result with row processors
on every call: most of the executor's cost on a fast database. A statement
set is built once per plan shape and its statements are immutable, so the
work is done once per (statement, dialect, length of each IN list) here: the
text SQLAlchemy rendered (identifiers from the catalog, every value a bound
parameter), where each driver parameter comes from (a name, or an element of
an IN list) with its type's bind processor, and the result columns' keys and
result processors. A call then only orders its values and hands text and
values to the DBAPI cursor as the dialect's `do_execute` would (driver errors
wrapped as SQLAlchemy wraps them). When a listener on the engine watches
statements or transactions, the statement takes SQLAlchemy's whole path
(`Connection.execute`), which fires it.

A statement whose text would depend on a value (a literal rendered at
execution) is not taken: it runs through `Connection.execute`.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC
from typing import Any

from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Select
from sqlalchemy.sql.compiler import SQLCompiler

from qdsl.dsl.errors import InternalError
from qdsl.facts.tables import UtcDateTime

Row = dict[str, Any]
Processor = Callable[[Any], Any]


class _Probe:
    """A stand-in value that says where a driver parameter comes from."""

    __slots__ = ("index", "name")

    def __init__(self, name: str, index: int | None) -> None:
        self.name = name
        self.index = index


@dataclass(frozen=True)
class _Source:
    name: str | None  # the caller's parameter (None: a value fixed in the statement)
    index: int | None  # its element, for an IN list
    constant: Any
    processor: Processor | None


@dataclass
class DriverStatement:
    """One statement's text for one dialect and one length of each IN list."""

    sql: str
    sources: tuple[_Source, ...]
    names: tuple[str, ...] | None  # driver parameter names (None: positional)
    keys: tuple[str, ...]
    types: tuple[Any, ...]
    # result processors by column, worked out from the first cursor description
    readers: list[tuple[int, Processor]] | None = field(default=None)
    # the last parameters (a cached plan's own, sent again on every call) and
    # their values: bind processors run once per plan, not per call
    last: tuple[dict[str, Any], Any] | None = field(default=None)

    def values(self, params: dict[str, Any]) -> Any:
        last = self.last
        if last is not None and last[0] is params:
            return last[1]
        values = self._values(params)
        self.last = (params, values)
        return values

    def _values(self, params: dict[str, Any]) -> Any:
        out = []
        for s in self.sources:
            if s.name is None:
                value = s.constant
            elif s.index is None:
                value = params[s.name]
            else:
                value = params[s.name][s.index]
            out.append(s.processor(value) if s.processor is not None else value)
        if self.names is None:
            return tuple(out)
        return dict(zip(self.names, out, strict=True))

    def rows(self, dialect: Dialect, cursor: Any, raw: Sequence[Any]) -> list[Row]:
        readers = self.readers
        if readers is None:
            # the description only once: psycopg builds a Column per column per read
            readers = self.readers = _readers(self.types, dialect, cursor.description)
        keys = self.keys
        out = [dict(zip(keys, r, strict=True)) for r in raw]
        for i, proc in readers:
            key = keys[i]
            for row in out:
                value = row[key]
                if value is not None:  # every processor maps None to None
                    row[key] = proc(value)
        return out


def _readers(
    types: tuple[Any, ...], dialect: Dialect, description: Sequence[Any]
) -> list[tuple[int, Processor]]:
    """The result processor of each column that has one; qdsl's own UTC datetime
    type read in one step (the type's processor wraps the dialect's in two calls)."""
    out: list[tuple[int, Processor]] = []
    for i, type_ in enumerate(types):
        if isinstance(type_, UtcDateTime):
            # as TypeDecorator.result_processor finds the dialect's processor
            impl = type_.dialect_impl(dialect).impl_instance  # type: ignore[attr-defined]
            proc: Processor | None = _utc_reader(impl.result_processor(dialect, description[i][1]))
        else:
            proc = type_.dialect_impl(dialect).result_processor(dialect, description[i][1])
        if proc is not None:
            out.append((i, proc))
    return out


def _utc_reader(impl: Processor | None) -> Processor:
    """`UtcDateTime.process_result_value` after the dialect's own processor."""

    def read(value: Any) -> Any:
        if impl is not None:
            value = impl(value)
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)

    return read


class _Compiled:
    """A statement compiled once for a dialect, and its texts by IN-list lengths."""

    def __init__(self, stmt: Select[Any], dialect: Dialect) -> None:
        self.stmt = stmt  # kept alive: the cache is keyed by its id
        self.dialect = dialect
        self.compiled: SQLCompiler = stmt.compile(dialect=dialect)
        self.expanding = tuple(
            bp.key for bp in self.compiled.binds.values() if bp.expanding
        )
        self.usable = not self.compiled.literal_execute_params and all(
            bp.expanding for bp in self.compiled.post_compile_params
        )
        self.by_lengths: dict[tuple[int, ...], DriverStatement] = {}

    def text_for(self, params: dict[str, Any]) -> DriverStatement:
        lengths = tuple(len(params[n]) for n in self.expanding)
        found = self.by_lengths.get(lengths)
        if found is None:
            found = self._build(params)
            if len(self.by_lengths) >= _LENGTHS_MAX:
                # bounded: IN lists of a text fallback's grams vary with the term
                self.by_lengths.clear()
            self.by_lengths[lengths] = found
        return found

    def _build(self, params: dict[str, Any]) -> DriverStatement:
        compiled = self.compiled
        probe: dict[str, Any] = {}
        for bp in compiled.binds.values():
            if bp.key not in params:
                continue  # a value fixed in the statement (SQLAlchemy takes it from there)
            if bp.expanding:
                probe[bp.key] = [_Probe(bp.key, i) for i in range(len(params[bp.key]))]
            else:
                probe[bp.key] = _Probe(bp.key, None)
        state = compiled.construct_expanded_state(probe)
        order = list(state.positiontup) if state.positiontup is not None else list(state.parameters)
        by_name = {bp.key: bp for bp in compiled.binds.values()}
        sources = []
        for name in order:
            value = state.parameters[name]
            proc: Processor | None = state.processors.get(name)
            if isinstance(value, _Probe):
                if proc is None and value.index is None:
                    proc = _bind_processor(by_name[value.name], self.dialect)
                sources.append(_Source(value.name, value.index, None, proc))
            else:
                fixed = compiled.binds.get(name)
                if proc is None and fixed is not None:
                    proc = _bind_processor(fixed, self.dialect)
                sources.append(_Source(None, None, value, proc))
        columns = self.stmt.selected_columns
        return DriverStatement(
            sql=state.statement,
            sources=tuple(sources),
            names=None if compiled.positional else tuple(order),
            keys=tuple(columns.keys()),
            types=tuple(c.type for c in columns),
        )


def _bind_processor(bp: Any, dialect: Dialect) -> Processor | None:
    proc: Processor | None = bp.type.dialect_impl(dialect).bind_processor(dialect)
    return proc


_COMPILED: dict[tuple[int, int], _Compiled] = {}
_LENGTHS_MAX = 256
_COMPILED_MAX = 4096
_LOCK = threading.Lock()


def driver_statement(
    stmt: Select[Any], dialect: Dialect, params: dict[str, Any]
) -> DriverStatement | None:
    """The driver text and parameter plan of `stmt` (None: run it through SQLAlchemy)."""
    key = (id(stmt), id(dialect))
    entry = _COMPILED.get(key)
    if entry is None or entry.stmt is not stmt or entry.dialect is not dialect:
        entry = _Compiled(stmt, dialect)
        with _LOCK:
            if len(_COMPILED) >= _COMPILED_MAX:
                # statement sets leave their LRU: their texts may go too
                _COMPILED.clear()
            _COMPILED[key] = entry
    if not entry.usable:
        return None
    with _LOCK:
        return entry.text_for(params)


def run_rows(
    conn: Connection, stmt: Select[Any], params: dict[str, Any], *, direct: bool | None = None
) -> list[Row]:
    """Rows of `stmt` as dicts keyed by its result columns, values as SQLAlchemy
    would hand them (result processors applied). With a listener on the engine
    (`direct` False; None: look), the statement goes through `Connection.execute`,
    which fires every statement event (`exec_driver_sql` skips before_execute
    and after_execute)."""
    if direct if direct is not None else not watched(conn):
        found = driver_statement(stmt, conn.dialect, params)
        if found is not None:
            return _on_cursor(conn, found, found.values(params))
    result = conn.execute(stmt, params)
    keys = tuple(result.keys())
    return [dict(zip(keys, r, strict=True)) for r in result.all()]


# Events a call on a bare DBAPI connection (no Connection, statements on its
# cursor, the transaction the driver's own) would skip: with any listener,
# the call goes through a Connection and SQLAlchemy's whole path, which fires them.
_STATEMENT_EVENTS = (
    "engine_connect",
    "before_execute",
    "after_execute",
    "before_cursor_execute",
    "after_cursor_execute",
    "begin",
    "commit",
    "rollback",
)


def watched(conn: Connection) -> bool:
    # the engine's dispatch (its own listeners and Engine-wide ones): the
    # connection's is made afresh per connection, and the executor's
    # connections are its own, so none listens on them
    return engine_watched(conn.engine)


def engine_watched(engine: Engine) -> bool:
    """Whether a listener on `engine` (or every Engine) would see a statement or
    transaction, or handle a driver error: then the executor's statements go
    through SQLAlchemy."""
    d = engine.dispatch
    # spelled out (not a loop over _STATEMENT_EVENTS): this runs on every call
    return bool(
        d.engine_connect
        or d.before_execute
        or d.after_execute
        or d.before_cursor_execute
        or d.after_cursor_execute
        or d.begin
        or d.commit
        or d.rollback
        or engine.dialect.dispatch.handle_error
    )


def _on_cursor(conn: Connection, found: DriverStatement, values: Any) -> list[Row]:
    """Without listeners: the text on the DBAPI cursor itself, as the dialect's
    `do_execute` runs it (a result built from the description on every call was
    the largest cost left); a lost connection is invalidated."""
    dbapi_connection = conn.connection.dbapi_connection
    assert dbapi_connection is not None
    return cursor_rows(dbapi_connection, conn.dialect, found, values, lost=conn.invalidate)


def raw_rows(
    dbapi_connection: Any,
    dialect: Dialect,
    stmt: Select[Any],
    params: dict[str, Any],
    *,
    lost: Callable[[BaseException], None] | None = None,
) -> list[Row]:
    """`run_rows` on a bare DBAPI connection (one nobody listens on); a statement
    whose text depends on its values is refused (`driver_statement` is None),
    as the executor only sends it here after checking."""
    found = driver_statement(stmt, dialect, params)
    if found is None:
        raise InternalError(
            "statement_needs_connection",
            "a statement whose text depends on its values reached a bare connection",
            hint="report this: the executor's statements bind every value",
        )
    return cursor_rows(dbapi_connection, dialect, found, found.values(params), lost=lost)


def cursor_rows(
    dbapi_connection: Any,
    dialect: Dialect,
    found: DriverStatement,
    values: Any,
    *,
    lost: Callable[[BaseException], None] | None = None,
) -> list[Row]:
    """`found` run on a cursor of `dbapi_connection`; a driver error is wrapped as
    SQLAlchemy wraps it (and `lost` told when it means the connection is gone)."""
    cursor = dbapi_connection.cursor()
    try:
        cursor.execute(found.sql, values)
        raw = cursor.fetchall()
        rows = found.rows(dialect, cursor, raw)
    except dialect.loaded_dbapi.Error as exc:
        gone = dialect.is_disconnect(exc, dbapi_connection, cursor)
        if gone and lost is not None:
            lost(exc)
        raise DBAPIError.instance(
            found.sql,
            values,
            exc,
            dialect.loaded_dbapi.Error,
            connection_invalidated=gone,
            dialect=dialect,
        ) from exc
    finally:
        cursor.close()
    return rows
