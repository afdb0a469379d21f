"""On PostgreSQL: row-level security that keeps the reader to the session's
tenant, and a reader that can read the catalog's columns, not its sensitive
ones, and cannot bypass RLS.

qdsl's own tables want forced RLS and a tenant policy (as migrated); a
deployer's table wants RLS enabled and the reader's permissive and
RESTRICTIVE tenant policies, and is never asked to force RLS: forcing it would
hide the rows from the deployer's own application (facts.secure).

Every finding's fix is `qdsl db secure`, which grants and enforces exactly this
(qdsl.facts.secure builds its statements from the same `pg_state` snapshot).
"""

from __future__ import annotations

from collections.abc import Callable

from qdsl.facts.check.findings import CheckContext, Finding, Level
from qdsl.facts.check.pg_state import RoleState, TableState, read_all

_FIX = "run `qdsl db secure` (or `qdsl db secure --print` for the SQL to hand to a DBA)"


def _role_findings(role: RoleState) -> list[Finding]:
    if not role.exists:
        return [
            Finding(
                "pg_security",
                Level.ERROR,
                f"the reader role {role.name!r} does not exist; the executor refuses to run",
                fix=f"run `qdsl db upgrade`, then {_FIX}",
            )
        ]
    out = []
    if role.superuser or role.bypass_rls:
        what = "a superuser" if role.superuser else "BYPASSRLS"
        out.append(
            Finding(
                "pg_security",
                Level.ERROR,
                f"the reader role {role.name!r} is {what}: row-level security does not apply",
                fix=_FIX,
            )
        )
    if not role.usable_by_current_user:
        out.append(
            Finding(
                "pg_security",
                Level.ERROR,
                f"the connecting user cannot SET ROLE {role.name!r}",
                fix=_FIX,
            )
        )
    return out


def _table_findings(t: TableState, reader: str) -> list[Finding]:
    def finding(message: str, column: str | None = None) -> Finding:
        return Finding("pg_security", Level.ERROR, message, _FIX, table=t.table, column=column)

    if not t.exists:
        return []  # columns_exist / fact_rows name the missing table
    out = []
    if t.is_view:
        out.extend(_view_findings(t, reader))
    elif t.qdsl_owned:
        out.extend(_rls_findings(t, finding))
    else:
        out.extend(_deployer_rls_findings(t, reader, finding))
    out.extend(_reader_findings(t, reader, finding))
    return out


def isolation(t: TableState, reader: str) -> str:
    """How the tenants of a table or view are kept apart for `reader` (docs/deploying.md)."""
    always = "the executor's tenant predicate in every statement"
    if not t.is_view:
        return f"{always}, and the table's row-level security keyed on {t.tenant}"
    if t.kind == "materialized view":
        return f"{always} only (a materialized view has no row-level security)"
    if t.security_invoker:
        return (
            f"{always}, and the row-level security of its tables, applied as {reader!r} "
            "(security_invoker = true)"
        )
    return (
        f"{always}; the view reads its tables with its owner's rights, so their "
        "row-level security applies only where it binds the owner (FORCE)"
    )


def _view_findings(t: TableState, reader: str) -> list[Finding]:
    out = []
    if not t.security_invoker:
        out.append(
            Finding(
                "pg_security",
                Level.WARNING,
                f"{t.table} is a {t.kind}: tenant isolation for it rests on "
                + isolation(t, reader),
                fix="for row-level security as the reader too, create the view with "
                "`WITH (security_invoker = true)` (PostgreSQL 15) over tables with "
                "tenant policies, and grant the reader SELECT on them; `qdsl db secure` "
                "does not change a view, which would change it for every role",
                table=t.table,
                details={"kind": t.kind, "isolation": isolation(t, reader)},
            )
        )
    if t.base_unreadable:
        out.append(
            Finding(
                "pg_security",
                Level.ERROR,
                f"{t.table} is read with the reader's rights (security_invoker), and "
                f"{reader!r} cannot select {', '.join(t.base_unreadable)}",
                fix=f"grant {reader!r} SELECT on {', '.join(t.base_unreadable)} (row-level "
                "security on them keeps it to the session's tenant)",
                table=t.table,
                details={"tables": list(t.base_unreadable)},
            )
        )
    return out


def _rls_findings(t: TableState, finding: Callable[..., Finding]) -> list[Finding]:
    out = []
    if not t.rls_enabled:
        out.append(finding(f"{t.table}: row-level security is not enabled"))
    if not t.rls_forced:
        out.append(finding(f"{t.table}: row-level security is not forced (the owner bypasses it)"))
    if not t.tenant_policy:
        out.append(
            finding(f"{t.table}: no policy limits rows to the session's tenant ({t.tenant})")
        )
    return out


def _deployer_rls_findings(
    t: TableState, reader: str, finding: Callable[..., Finding]
) -> list[Finding]:
    out = []
    if not t.rls_enabled:
        out.append(finding(f"{t.table}: row-level security is not enabled"))
    if not t.reader_permitted:
        out.append(finding(f"{t.table}: no policy lets {reader!r} see the session tenant's rows"))
    if not t.reader_restricted:
        out.append(
            finding(
                f"{t.table}: no RESTRICTIVE policy keeps {reader!r} to the session's "
                f"tenant ({t.tenant})"
            )
        )
    return out


def _reader_findings(t: TableState, reader: str, finding: Callable[..., Finding]) -> list[Finding]:
    out = []
    if t.reader_is_owner:
        out.append(finding(f"{t.table} is owned by the reader role {reader!r}"))
    elif t.reader_in_owner_role:
        out.append(finding(f"the reader role {reader!r} is a member of {t.table}'s owner"))
    if not t.schema_usage:
        out.append(finding(f"{reader!r} has no USAGE on schema {t.schema!r}"))
    missing = [c for c in t.allowed if c not in t.selectable]
    if missing:
        out.append(
            finding(f"{reader!r} cannot select {t.table} ({', '.join(missing)})", column=missing[0])
        )
    for column in t.sensitive:
        if column in t.selectable:
            out.append(
                finding(
                    f"{reader!r} can read {t.table}.{column}, which the catalog marks sensitive",
                    column=column,
                )
            )
    return out


def pg_security(ctx: CheckContext) -> list[Finding]:
    if ctx.dialect != "postgresql":
        return []
    with ctx.engine.connect() as conn:
        role, tables = read_all(conn, ctx.catalog, ctx.reader_role)
    out = _role_findings(role)
    if role.exists:
        for t in tables:
            out.extend(_table_findings(t, role.name))
    return out
