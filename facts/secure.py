"""`qdsl db secure`: the grants and row-level security `catalog check` wants.

It changes what qdsl's reader role may see and nothing else (SPEC 7): every
other role, the tables' owner included, sees what it saw before. On a
deployer's table that means, in PostgreSQL's terms:

* ENABLE ROW LEVEL SECURITY, never FORCE: the owner bypasses unforced RLS, so
  the deployer's application connecting as the owner keeps every row without
  setting `app.tenant_id` (forcing it made that application see 0 rows).
* With RLS on, a role no permissive policy names sees no rows. So when
  `db secure` is the one that turns RLS on, it adds `OPEN_POLICY`, permissive
  `TO PUBLIC USING (true) WITH CHECK (true)`: the deployer's other roles read
  and write as before. Where the deployer had RLS on already, their policies
  stand and none is added.
* For the reader: a RESTRICTIVE policy `TO reader USING (tenant = setting)`,
  ANDed with every permissive policy, `OPEN_POLICY` included, so no policy
  widens the reader beyond the session's tenant; without a tenant set it sees
  0 rows. A restrictive policy admits nothing alone, so where no permissive
  policy admits the reader (the deployer's RLS names other roles only) a
  permissive `FOR SELECT TO reader` with the same condition is added too.

qdsl's own tables (its migrations': forced RLS and a tenant policy) keep that
shape: qdsl is their owner and their only writer.

Views the catalog names are granted to the reader like tables; they take no
row-level security of their own and are never altered (see `_table_statements`);
`isolation_of` says how tenants are kept apart in each.

`plan_security` reads the current state (facts.check.pg_state) and returns
only the statements still needed, so applying them twice changes nothing and
an empty plan means the catalog's tables are already secure. Identifiers come
from the catalog and the system catalogs and are composed with psycopg.sql,
never pasted into strings. Sensitive columns (from the catalog) are left out of
the reader's column privileges.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import psycopg
from psycopg import sql
from sqlalchemy import Connection, Engine
from sqlalchemy.exc import SQLAlchemyError

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import DatabaseError, UsageError
from qdsl.facts.check.pg_state import (
    OPEN_POLICY,
    TENANT_SETTING,
    RoleState,
    TableState,
    read_all,
    reader_policy_names,
)

POLICY_NAME = "tenant_isolation"


@dataclass(frozen=True)
class SecurityStatement:
    why: str
    statement: sql.Composed


def _role_statements(role: RoleState) -> list[SecurityStatement]:
    reader = sql.Identifier(role.name)
    out = []
    if not role.exists:
        out.append(
            SecurityStatement(
                "the reader role is missing", sql.SQL("CREATE ROLE {} NOLOGIN").format(reader)
            )
        )
    if role.superuser:
        out.append(
            SecurityStatement(
                "readers are not superusers", sql.SQL("ALTER ROLE {} NOSUPERUSER").format(reader)
            )
        )
    if role.bypass_rls:
        out.append(
            SecurityStatement(
                "readers obey RLS", sql.SQL("ALTER ROLE {} NOBYPASSRLS").format(reader)
            )
        )
    if not role.usable_by_current_user:
        out.append(
            SecurityStatement(
                "the executor switches to the reader role",
                sql.SQL("GRANT {} TO CURRENT_USER").format(reader),
            )
        )
    return out


def _tenant_expr(t: TableState) -> sql.Composed:
    tenant: sql.Composable = sql.Identifier(t.tenant)
    if not t.tenant_is_text:
        tenant = sql.SQL("CAST({} AS text)").format(tenant)
    return sql.SQL("{} = NULLIF(current_setting({}, true), '')").format(
        tenant, sql.Literal(TENANT_SETTING)
    )


def _policy(t: TableState) -> sql.Composed:
    expr = _tenant_expr(t)
    return sql.SQL("CREATE POLICY {} ON {} USING ({}) WITH CHECK ({})").format(
        sql.Identifier(POLICY_NAME), _name(t), expr, expr
    )


def _own_table_rls(t: TableState) -> list[SecurityStatement]:
    """qdsl's own tables, as its migrations made them: the owner is qdsl, so FORCE."""
    table = _name(t)
    out = []
    if not t.rls_enabled:
        out.append(
            SecurityStatement(
                "rows are filtered by tenant",
                sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(table),
            )
        )
    if not t.rls_forced:
        out.append(
            SecurityStatement(
                "qdsl's own table: its owner obeys RLS too",
                sql.SQL("ALTER TABLE {} FORCE ROW LEVEL SECURITY").format(table),
            )
        )
    if not t.tenant_policy:
        out.append(SecurityStatement("only the session's tenant's rows", _policy(t)))
    return out


def _deployer_table_rls(t: TableState, reader_name: str) -> list[SecurityStatement]:
    """A deployer's table: RLS that binds the reader alone (the module's docstring)."""
    table = _name(t)
    reader = sql.Identifier(reader_name)
    rows, tenant = reader_policy_names(reader_name)
    out = []
    # the open policy, once added, already lets the reader through to the restrictive one
    permitted = t.reader_permitted
    if not t.rls_enabled:
        out.append(
            SecurityStatement(
                "the reader's rows are filtered by tenant (not forced: the owner bypasses it)",
                sql.SQL("ALTER TABLE {} ENABLE ROW LEVEL SECURITY").format(table),
            )
        )
        if not t.open_to_others:
            out.append(
                SecurityStatement(
                    "every other role keeps reading and writing every row",
                    sql.SQL(
                        "CREATE POLICY {} ON {} AS PERMISSIVE FOR ALL TO PUBLIC "
                        "USING (true) WITH CHECK (true)"
                    ).format(sql.Identifier(OPEN_POLICY), table),
                )
            )
            permitted = True
    expr = _tenant_expr(t)
    if not permitted:
        out.append(
            SecurityStatement(
                "the reader sees the session's tenant's rows",
                sql.SQL("CREATE POLICY {} ON {} AS PERMISSIVE FOR SELECT TO {} USING ({})").format(
                    sql.Identifier(rows), table, reader, expr
                ),
            )
        )
    if not t.reader_restricted:
        out.append(
            SecurityStatement(
                "no other policy widens the reader beyond the session's tenant",
                sql.SQL(
                    "CREATE POLICY {} ON {} AS RESTRICTIVE FOR ALL TO {} USING ({}) WITH CHECK ({})"
                ).format(sql.Identifier(tenant), table, reader, expr, expr),
            )
        )
    return out


def _name(t: TableState) -> sql.Identifier:
    return sql.Identifier(t.schema, t.table)


def _columns(names: Sequence[str]) -> sql.Composed:
    return sql.SQL(", ").join(sql.Identifier(c) for c in names)


def _grant_statements(t: TableState, reader: sql.Identifier) -> list[SecurityStatement]:
    table = _name(t)
    out = []
    if not t.schema_usage:
        out.append(
            SecurityStatement(
                "the reader resolves names in the schema",
                sql.SQL("GRANT USAGE ON SCHEMA {} TO {}").format(sql.Identifier(t.schema), reader),
            )
        )
    exposed = [c for c in t.sensitive if c in t.selectable]
    if exposed and t.table_select:
        # A table grant covers every column; column grants replace it below.
        out.append(
            SecurityStatement(
                "sensitive columns stay unreadable",
                sql.SQL("REVOKE SELECT ON {} FROM {}").format(table, reader),
            )
        )
    if exposed:
        out.append(
            SecurityStatement(
                "sensitive columns stay unreadable",
                sql.SQL("REVOKE SELECT ({}) ON {} FROM {}").format(
                    _columns(exposed), table, reader
                ),
            )
        )
    revoked = bool(exposed and t.table_select)
    missing = list(t.allowed) if revoked else [c for c in t.allowed if c not in t.selectable]
    if missing and not t.sensitive:
        out.append(
            SecurityStatement(
                "the reader selects the table",
                sql.SQL("GRANT SELECT ON {} TO {}").format(table, reader),
            )
        )
    elif missing:
        out.append(
            SecurityStatement(
                "the reader selects every column but the sensitive ones",
                sql.SQL("GRANT SELECT ({}) ON {} TO {}").format(_columns(missing), table, reader),
            )
        )
    return out


_ALTER = {
    "table": sql.SQL("ALTER TABLE"),
    "view": sql.SQL("ALTER VIEW"),
    "materialized view": sql.SQL("ALTER MATERIALIZED VIEW"),
}


def _table_statements(t: TableState, role: RoleState) -> list[SecurityStatement]:
    """The grants a table or view still needs and, for a table, its row-level security.

    A view gets its grants only: it takes no row-level security, and setting
    `security_invoker` would change how it reads for every role, not just the
    reader's (its isolation: `qdsl.facts.check.pg_security.isolation`)."""
    if not t.exists:
        return []
    reader = sql.Identifier(role.name)
    table = _name(t)
    out = []
    if t.reader_is_owner:
        out.append(
            SecurityStatement(
                "the reader must not own what it reads",
                sql.SQL("{} {} OWNER TO CURRENT_USER").format(_ALTER[t.kind], table),
            )
        )
    elif t.reader_in_owner_role:
        out.append(
            SecurityStatement(
                "the reader must not act as the owner",
                sql.SQL("REVOKE {} FROM {}").format(sql.Identifier(t.owner), reader),
            )
        )
    out.extend(_grant_statements(t, reader))
    if t.is_view:
        return out
    if t.qdsl_owned:
        return out + _own_table_rls(t)
    return out + _deployer_table_rls(t, role.name)


def _require_postgresql(engine: Engine) -> None:
    if engine.dialect.name != "postgresql":
        raise UsageError(
            "not_postgresql",
            f"`db secure` applies to PostgreSQL; this database is {engine.dialect.name}",
            hint="SQLite has no roles or row-level security: qdsl's tenant predicate is its guard",
        )


def plan_security(conn: Connection, catalog: Catalog, reader: str) -> list[SecurityStatement]:
    role, tables = read_all(conn, catalog, reader)
    out = _role_statements(role)
    # A role created by this plan has no privileges yet: plan its grants as if absent.
    role = role if role.exists else RoleState(reader, exists=True, usable_by_current_user=True)
    for t in tables:
        out.extend(_table_statements(t, role))
    # GRANT USAGE ON SCHEMA once per schema.
    seen: set[str] = set()
    unique = []
    for s in out:
        key = repr(s.statement)
        if key not in seen:
            seen.add(key)
            unique.append(s)
    return unique


def secure(engine: Engine, catalog: Catalog, *, reader: str, apply: bool) -> list[tuple[str, str]]:
    """(reason, SQL) of every statement needed; executed in one transaction when `apply`."""
    _require_postgresql(engine)
    try:
        with engine.begin() as conn:
            planned = plan_security(conn, catalog, reader)
            driver = conn.connection.driver_connection
            shown = [(s.why, s.statement.as_string(driver)) for s in planned]
            if apply:
                with driver.cursor() as cur:  # type: ignore[union-attr]
                    for s in planned:
                        cur.execute(s.statement)
    except (SQLAlchemyError, psycopg.Error) as exc:
        raise _secure_error(exc, reader) from None
    return shown


def isolation_of(engine: Engine, catalog: Catalog, *, reader: str) -> list[dict[str, str]]:
    """How tenants are kept apart in each table and view the catalog reads, for `reader`."""
    from qdsl.facts.check.pg_security import isolation

    _require_postgresql(engine)
    try:
        with engine.connect() as conn:
            _role, tables = read_all(conn, catalog, reader)
    except SQLAlchemyError as exc:
        raise _secure_error(exc) from None
    return [
        {"table": t.table, "kind": t.kind, "isolation": isolation(t, reader)}
        for t in tables
        if t.exists
    ]


def _secure_error(exc: Exception, reader: str | None = None) -> DatabaseError:
    detail = str(getattr(exc, "orig", None) or exc)
    hint = (
        "run as the tables' owner (or a superuser), or hand `qdsl db secure --print` to your DBA"
    )
    if reader is not None and f'role "{reader}"' in detail:
        # The tables' owner may grant on its tables but not membership in a role it
        # did not create (the reader is cluster-wide: another database's `db upgrade`
        # may have made it), and qdsl reads as the reader only through that membership.
        hint = (
            f"this user must be a member of {reader}: a superuser runs "
            f"`GRANT {reader} TO <this user>`, then run `qdsl db secure` again"
        )
    return DatabaseError(
        "secure_failed",
        f"applying the security statements failed: {detail.splitlines()[0][:300]}",
        hint=hint,
        retryable=False,
        details={"error": detail[:500]},
    )
