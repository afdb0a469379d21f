"""Fast bulk loading of many rows into one table (demo seed, facts load staging, benchmarks).

Core `executemany` spends most of its time per row in Python; for the gram
index (over 100k rows in the demo, millions in a benchmark) that dominates
seeding. Here the column types' own bind processors convert the values once
(so UtcDateTime etc. behave exactly as with Core), then:

* PostgreSQL: `COPY table (columns) FROM STDIN` through psycopg 3, when the
  current user bypasses row-level security (superuser or BYPASSRLS): COPY FROM
  is refused on a table whose RLS applies to the user, so an ordinary owner
  (FORCE ROW LEVEL SECURITY) gets Core's batched multi-row INSERTs instead;
* SQLite: the Core-compiled INSERT, executed with plain tuples via the DBAPI.

Identifiers come from the Table object (composed with psycopg.sql on the COPY
path, quoted by the dialect otherwise); values never enter SQL text. Runs
inside the caller's transaction.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any

from sqlalchemy import Boolean, Connection, String, Table, column, func, or_, select
from sqlalchemy import table as table_clause

# The one catalog view read here; lightweight, so facts.tables stays portable.
pg_roles = table_clause(
    "pg_roles",
    column("rolname", String()),
    column("rolsuper", Boolean()),
    column("rolbypassrls", Boolean()),
)


def _processors(conn: Connection, table: Table) -> list[Callable[[Any], Any] | None]:
    # dialect_impl: the generic DateTime has no processor of its own; SQLite's
    # does (it writes the same text format as a Core insert would). Without it
    # bulk-loaded instants were spelled differently from Core-inserted ones.
    dialect = conn.dialect
    return [col.type.dialect_impl(dialect).bind_processor(dialect) for col in table.columns]


def _tuples(
    conn: Connection, table: Table, rows: Iterable[Mapping[str, Any]]
) -> list[tuple[Any, ...]]:
    names = [col.name for col in table.columns]
    procs = _processors(conn, table)
    if all(p is None for p in procs):
        # Plain text columns (the gram index): nothing to convert per value.
        return [tuple(row.get(n) for n in names) for row in rows]
    out = []
    for row in rows:
        values = []
        for name, proc in zip(names, procs, strict=True):
            value = row.get(name)
            values.append(proc(value) if proc is not None and value is not None else value)
        out.append(tuple(values))
    return out


def bypasses_rls(conn: Connection) -> bool:
    """Whether the current PostgreSQL user is a superuser or has BYPASSRLS."""
    found = conn.execute(
        select(or_(pg_roles.c.rolsuper, pg_roles.c.rolbypassrls)).where(
            pg_roles.c.rolname == func.current_user()
        )
    ).scalar()
    return bool(found)


def bulk_insert(
    conn: Connection, table: Table, rows: Iterable[Mapping[str, Any]], *, rls_free: bool = False
) -> int:
    """Insert `rows` (missing keys become NULL; autoincrement keys must be absent).

    `rls_free`: the table has no row-level security (a temporary staging
    table), so COPY is used whoever the user is. Returns the number of rows written.
    """
    cols = [c for c in table.columns if not (c.primary_key and c.autoincrement is True)]
    is_pg = conn.dialect.name == "postgresql"
    if len(cols) != len(table.columns) or (is_pg and not rls_free and not bypasses_rls(conn)):
        # Autoincrement ids (semantic_facts) keep the ordinary Core path, which
        # lets the database assign them in insertion order; so does COPY-less RLS.
        materialized = [dict(r) for r in rows]
        if materialized:
            conn.execute(table.insert(), materialized)
        return len(materialized)
    data = _tuples(conn, table, rows)
    if not data:
        return 0
    if is_pg:
        from psycopg import sql

        copy_sql = sql.SQL("COPY {} ({}) FROM STDIN").format(
            sql.Identifier(*([table.schema] if table.schema else []), table.name),
            sql.SQL(", ").join(sql.Identifier(c.name) for c in table.columns),
        )
        raw = conn.connection.driver_connection
        assert raw is not None
        with raw.cursor() as cur, cur.copy(copy_sql) as copy:
            for record in data:
                copy.write_row(record)
    else:
        compiled = table.insert().compile(dialect=conn.dialect)
        conn.exec_driver_sql(str(compiled), data)
    return len(data)
