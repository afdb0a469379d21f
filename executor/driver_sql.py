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
from datetime import UTC, datetime
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy.engine import Connection, Dialect, Engine
from sqlalchemy.exc import DBAPIError
from sqlalchemy.sql import Select
from sqlalchemy.sql.compiler import SQLCompiler

from qdsl.dsl.errors import InternalError
from qdsl.facts.tables import UtcDateTime

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


class Layout:
    """Where each result column of a statement is, and its result processor (None:
    the driver's value is the value). Rows are handed on as the driver returned
    them and a column is converted where it is read: one never read (a sort key
    riding along) is never converted, and no row is copied to be converted."""

    __slots__ = ("index", "keys", "memo", "procs")

    def __init__(self, keys: tuple[str, ...], procs: tuple[Processor | None, ...]) -> None:
        self.keys = keys
        self.index = {k: i for i, k in enumerate(keys)}
        self.procs = procs
        # what readers of these rows work out once per layout (`executor.flow`)
        self.memo: dict[str, object] = {}

    def getter(self, key: str) -> Callable[[Sequence[Any]], Any]:
        """Reads column `key` of a row, its processor applied (NULL stays None)."""
        i = self.index[key]
        proc = self.procs[i]
        if proc is None:
            return itemgetter(i)

        def get(row: Sequence[Any]) -> Any:
            value = row[i]
            return None if value is None else proc(value)  # every processor maps None to None

        return get


class Rows(NamedTuple):
    """A statement's rows: driver rows (tuples) and where to read what in them."""

    layout: Layout
    data: Sequence[Sequence[Any]]


@dataclass
class DriverStatement:
    """One statement's text for one dialect and one length of each IN list."""

    sql: str
    sources: tuple[_Source, ...]
    names: tuple[str, ...] | None  # driver parameter names (None: positional)
    keys: tuple[str, ...]
    types: tuple[Any, ...]
    # result processors by column, worked out from the first cursor description
    layout: Layout | None = field(default=None)
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

    def rows(self, dialect: Dialect, cursor: Any, raw: Sequence[Any]) -> Rows:
        layout = self.layout
        if layout is None:
            # the description only once: psycopg builds a Column per column per read
            layout = self.layout = Layout(
                self.keys, _processors(self.types, dialect, cursor.description)
            )
        return Rows(layout, raw)


def _processors(
    types: tuple[Any, ...], dialect: Dialect, description: Sequence[Any]
) -> tuple[Processor | None, ...]:
    """The result processor of each column (None: none); qdsl's own UTC datetime
    type read in one step (the type's processor wraps the dialect's in two calls)."""
    out: list[Processor | None] = []
    for i, type_ in enumerate(types):
        if isinstance(type_, UtcDateTime):
            # as TypeDecorator.result_processor finds the dialect's processor
            impl = type_.dialect_impl(dialect).impl_instance  # type: ignore[attr-defined]
            proc: Processor | None = _utc_reader(impl.result_processor(dialect, description[i][1]))
        else:
            proc = type_.dialect_impl(dialect).result_processor(dialect, description[i][1])
        out.append(proc)
    return tuple(out)


def _utc_reader(impl: Processor | None) -> Processor:
    """`UtcDateTime.process_result_value` after the dialect's own processor.

    A datetime stored as text (SQLite) is parsed once per distinct text: facts
    loaded together share their timestamps, and a datetime is immutable, so the
    one parsed is handed out again (bounded: forgotten in bulk when full)."""
    parsed: dict[str, datetime] = {}

    def read(value: Any) -> Any:
        if type(value) is str:
            found = parsed.get(value)
            if found is not None:
                return found
            text = value
        else:
            text = None
        if impl is not None:
            value = impl(value)
        if value is None:
            return None
        value = value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)
        if text is not None:
            if len(parsed) >= _PARSED_MAX:
                parsed.clear()
            parsed[text] = value
        return value

    return read


_PARSED_MAX = 512


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
        # the last parameters and their text: a cached plan sends the same
        # parameters (the same, never changed, object) on every call
        self.last: tuple[dict[str, Any], DriverStatement] | None = None

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
    last = entry.last
    if last is not None and last[0] is params:
        return last[1]
    with _LOCK:
        found = entry.text_for(params)
    entry.last = (params, found)
    return found


def read_rows(
    conn: Connection, stmt: Select[Any], params: dict[str, Any], *, direct: bool | None = None
) -> Rows:
    """Rows of `stmt`, read as SQLAlchemy would read them (result processors
    applied where a column is read: `Layout`). With a listener on the engine
    (`direct` False; None: look), the statement goes through `Connection.execute`,
    which fires every statement event (`exec_driver_sql` skips before_execute
    and after_execute)."""
    if direct if direct is not None else not watched(conn):
        found = driver_statement(stmt, conn.dialect, params)
        if found is not None:
            return _on_cursor(conn, found, found.values(params))
    result = conn.execute(stmt, params)
    keys = tuple(result.keys())
    # SQLAlchemy's rows are processed already
    return Rows(Layout(keys, (None,) * len(keys)), result.all())


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


def _on_cursor(conn: Connection, found: DriverStatement, values: Any) -> Rows:
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
) -> Rows:
    """`read_rows` on a bare DBAPI connection (one nobody listens on); a statement
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
) -> Rows:
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
