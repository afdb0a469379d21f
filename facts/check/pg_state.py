"""How PostgreSQL protects the catalog's tables today, read from the system catalogs.

Both the check (`pg_security`) and `qdsl db secure` read this one snapshot, so
what the check asks for is exactly what `db secure` grants and enforces.

An entity may be a view (or a materialized view). A view holds no rows and
takes no row-level security of its own: the reader needs SELECT on it, and its
tenants are kept apart by the executor's tenant predicate in every statement;
the row-level security of the tables under it applies to the reader only with
`security_invoker = true` (PostgreSQL 15), and then the reader also needs
SELECT on those tables (`base_unreadable`). Without it a view reads its tables
with its owner's rights.

Two kinds of table. qdsl's own (`semantic_facts` and the other migrated tables)
are created by its migrations with forced row-level security and a tenant
policy for every role. The deployer's tables are not qdsl's to change for
anyone but the reader: there, `qdsl db secure` wants row-level security
enabled (never forced: the owner keeps bypassing it), a permissive and a
RESTRICTIVE tenant policy `TO` the reader, and, where it enabled row-level
security itself, a permissive `USING (true)` policy for every other role
(`OPEN_POLICY`), so the deployer's other roles see every row as before
(facts.secure says why each is needed).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import sqlalchemy as sa
from sqlalchemy import Connection

from qdsl.dsl.catalog import Catalog
from qdsl.facts.tables import metadata, postgresql_metadata

# The session setting the executor binds the tenant to (facts.db.tenant_transaction).
TENANT_SETTING = "app.tenant_id"
# The policy that keeps a deployer's table open to every other role once RLS is on.
OPEN_POLICY = "qdsl_others_unchanged"


def reader_policy_names(reader: str) -> tuple[str, str]:
    """(permissive, restrictive) policy names for `reader`: one pair per reader role."""
    # PostgreSQL truncates identifiers to 63 bytes; the suffix must survive.
    stem = reader.encode()[:40].decode(errors="ignore")
    return f"qdsl_{stem}_rows", f"qdsl_{stem}_tenant"


@dataclass(frozen=True)
class RoleState:
    name: str
    exists: bool
    superuser: bool = False
    bypass_rls: bool = False
    # the connecting user may SET ROLE to it
    usable_by_current_user: bool = False


@dataclass(frozen=True)
class TableState:
    table: str
    schema: str
    tenant: str
    exists: bool
    owner: str = ""
    reader_is_owner: bool = False
    reader_in_owner_role: bool = False
    rls_enabled: bool = False
    rls_forced: bool = False
    tenant_policy: bool = False
    tenant_is_text: bool = True
    schema_usage: bool = False
    table_select: bool = False
    columns: tuple[str, ...] = ()
    sensitive: tuple[str, ...] = ()
    # columns the reader can select (through a table or a column grant)
    selectable: frozenset[str] = frozenset()
    kind: str = "table"  # "table", "view" or "materialized view"
    security_invoker: bool = False  # a view read with the reader's rights (PG 15)
    # a security_invoker view's tables the reader cannot select
    base_unreadable: tuple[str, ...] = ()
    # one of qdsl's own migrated tables (forced RLS), not the deployer's
    qdsl_owned: bool = False
    # a permissive policy lets the reader see the session tenant's rows
    reader_permitted: bool = False
    # a RESTRICTIVE policy keeps the reader to the session tenant whatever else permits
    reader_restricted: bool = False
    # a permissive `USING (true)` policy for PUBLIC (OPEN_POLICY or the deployer's own)
    open_to_others: bool = False

    @property
    def is_view(self) -> bool:
        return self.kind != "table"

    @property
    def allowed(self) -> tuple[str, ...]:
        return tuple(c for c in self.columns if c not in self.sensitive)


def protected_tables(catalog: Catalog) -> dict[str, tuple[str, frozenset[str]]]:
    """Table -> (tenant column, sensitive columns) for every table the catalog reads."""
    found: dict[str, tuple[str, set[str]]] = {}
    for e in catalog.entities.values():
        sensitive = {f.column for f in e.fields.values() if f.sensitive and f.column}
        _tenant, cols = found.setdefault(e.table, (e.tenant, set()))
        cols.update(sensitive)
    found.setdefault(catalog.facts.table, ("tenant_id", set()))
    return {t: (tenant, frozenset(cols)) for t, (tenant, cols) in found.items()}


_TABLE = sa.text(
    """
    SELECT c.oid, pg_get_userbyid(c.relowner) AS owner,
           c.relrowsecurity, c.relforcerowsecurity, current_schema() AS schema,
           c.relkind, COALESCE(c.reloptions, '{}') AS options
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relname = :table AND n.nspname = current_schema()
      AND c.relkind IN ('r', 'p', 'v', 'm')
    """
)
_KINDS = {"r": "table", "p": "table", "v": "view", "m": "materialized view"}
# The relations a view's query reads (through its rewrite rule), and whether the
# reader may select each.
_BASE = sa.text(
    """
    SELECT DISTINCT d.refobjid::regclass::text AS base,
           CASE WHEN :reader_exists THEN has_table_privilege(:reader, d.refobjid, 'SELECT')
                ELSE false END AS can_select
    FROM pg_rewrite r JOIN pg_depend d
      ON d.classid = 'pg_rewrite'::regclass AND d.objid = r.oid
    WHERE r.ev_class = :oid AND d.refobjid <> :oid
      AND d.refclassid = 'pg_class'::regclass
    """
)
_POLICIES = sa.text(
    """
    SELECT qual, with_check, roles::text[] AS roles, cmd, permissive FROM pg_policies
    WHERE schemaname = current_schema() AND tablename = :table
    """
)
_COLUMNS = sa.text(
    """
    SELECT a.attname, format_type(a.atttypid, a.atttypmod) AS type,
           CASE WHEN :reader_exists THEN has_column_privilege(:reader, c.oid, a.attname, 'SELECT')
                ELSE false END AS can_select
    FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
    WHERE a.attrelid = :oid AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum
    """
)
_PRIVS = sa.text(
    """
    SELECT has_table_privilege(:reader, CAST(:oid AS oid), 'SELECT'),
           has_schema_privilege(:reader, current_schema(), 'USAGE'),
           pg_has_role(:reader, :owner, 'MEMBER')
    """
)


def read_role(conn: Connection, reader: str) -> RoleState:
    row = conn.execute(
        sa.text(
            "SELECT rolsuper, rolbypassrls, pg_has_role(current_user, oid, 'MEMBER') "
            "FROM pg_roles WHERE rolname = :r"
        ),
        {"r": reader},
    ).first()
    if row is None:
        return RoleState(reader, exists=False)
    return RoleState(reader, True, bool(row[0]), bool(row[1]), bool(row[2]))


def _is_tenant_policy(
    qual: str | None, roles: list[str], cmd: str, tenant: str, reader: str
) -> bool:
    text = qual or ""
    applies = "public" in roles or reader in roles
    return applies and cmd in ("ALL", "SELECT") and tenant in text and TENANT_SETTING in text


def _qdsl_tables() -> frozenset[str]:
    return frozenset(metadata.tables) | frozenset(postgresql_metadata.tables)


def _policy_flags(
    policies: list[sa.Row[Any]],
    tenant: str,
    reader: str,
) -> tuple[bool, bool, bool]:
    """(reader_permitted, reader_restricted, open_to_others)."""

    def reads(p: sa.Row[Any]) -> bool:
        return p.cmd in ("ALL", "SELECT")

    def for_reader(p: sa.Row[Any]) -> bool:
        return "public" in p.roles or reader in p.roles

    def bound(p: sa.Row[Any]) -> bool:
        text = p.qual or ""
        return tenant in text and TENANT_SETTING in text

    permissive = [p for p in policies if p.permissive == "PERMISSIVE" and reads(p)]
    restrictive = [p for p in policies if p.permissive == "RESTRICTIVE" and reads(p)]
    return (
        any(for_reader(p) and (bound(p) or p.qual == "true") for p in permissive),
        any(for_reader(p) and bound(p) for p in restrictive),
        any("public" in p.roles and p.cmd == "ALL" and p.qual == "true" for p in permissive),
    )


def read_table(
    conn: Connection, table: str, tenant: str, sensitive: frozenset[str], role: RoleState
) -> TableState:
    row = conn.execute(_TABLE, {"table": table}).first()
    if row is None:
        schema = str(conn.execute(sa.text("SELECT current_schema()")).scalar_one())
        return TableState(table, schema, tenant, exists=False)
    oid, owner, enabled, forced, schema, relkind, options = row
    kind = _KINDS[str(relkind)]
    invoker = kind == "view" and any(
        str(o).lower() in ("security_invoker=true", "security_invoker=on", "security_invoker=1")
        for o in options
    )
    unreadable: tuple[str, ...] = ()
    if invoker:
        bases = conn.execute(
            _BASE, {"oid": oid, "reader": role.name, "reader_exists": role.exists}
        ).all()
        unreadable = tuple(sorted(str(b.base) for b in bases if not b.can_select))
    policies = conn.execute(_POLICIES, {"table": table}).all()
    tenant_policy = any(
        _is_tenant_policy(p.qual, list(p.roles), p.cmd, tenant, role.name) for p in policies
    )
    permitted, restricted, open_to_others = _policy_flags(list(policies), tenant, role.name)
    cols = conn.execute(
        _COLUMNS, {"oid": oid, "reader": role.name, "reader_exists": role.exists}
    ).all()
    table_select = usage = in_owner = False
    if role.exists:
        table_select, usage, in_owner = conn.execute(
            _PRIVS, {"reader": role.name, "oid": oid, "owner": owner}
        ).one()
    types = {str(c.attname): str(c.type) for c in cols}
    return TableState(
        table=table,
        schema=str(schema),
        tenant=tenant,
        exists=True,
        owner=str(owner),
        reader_is_owner=owner == role.name,
        reader_in_owner_role=bool(in_owner) and owner != role.name,
        rls_enabled=bool(enabled),
        rls_forced=bool(forced),
        tenant_policy=tenant_policy,
        tenant_is_text=types.get(tenant, "text").startswith(("text", "character")),
        schema_usage=bool(usage),
        table_select=bool(table_select),
        columns=tuple(types),
        sensitive=tuple(c for c in types if c in sensitive),
        selectable=frozenset(str(c.attname) for c in cols if c.can_select),
        kind=kind,
        security_invoker=invoker,
        base_unreadable=unreadable,
        qdsl_owned=table in _qdsl_tables(),
        reader_permitted=permitted,
        reader_restricted=restricted,
        open_to_others=open_to_others,
    )


def read_all(conn: Connection, catalog: Catalog, reader: str) -> tuple[RoleState, list[TableState]]:
    role = read_role(conn, reader)
    tables = [
        read_table(conn, table, tenant, sensitive, role)
        for table, (tenant, sensitive) in sorted(protected_tables(catalog).items())
    ]
    return role, tables
