"""`qdsl catalog` (the whitelist), `qdsl catalog check` and `qdsl catalog init`.

Bare `qdsl catalog [--entity E]` prints the whitelist as before; `check`
compares the catalog with the live database (exit 3 on an error finding);
`init` drafts a catalog from the live schema.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_catalog, current_url
from qdsl.dsl.catalog import Catalog

EXIT_CHECK_FAILED = 3


def _catalog() -> Catalog:
    return current_catalog()


def _url() -> str:
    return current_url()


def _catalog_human(data: dict[str, Any]) -> str:
    from qdsl.cli.tables import Block, Table, render

    entities = Table(("entity", "table", "id", "label", "query types", "templates"))
    blocks: list[Block] = [f"catalog {data['source']} (facts: {data['facts_table']})", entities]
    for name, e in data["entities"].items():
        entities.add(name, e["table"], e["id"], e["label"], e["query_types"], e["templates"])
        fields = Table(("field", "source", "type", "operators", "values", "sensitive"), title=name)
        for fname, f in e["fields"].items():
            fields.add(
                fname,
                f["source"],
                f["type"],
                f["operators"],
                f.get("values", ""),
                f.get("sensitive", False),
            )
        blocks += ["", fields]
    return render(blocks)


@click.group("catalog", invoke_without_command=True)
@click.option("--entity", help="Show one entity only.")
@click.pass_context
def catalog_cmd(ctx: click.Context, entity: str | None) -> None:
    """The whitelist: entities, fields, operators and templates.

    Subcommands: `check` (the catalog against the live database) and `init`
    (a draft catalog from the database's schema).
    """
    if ctx.invoked_subcommand is not None:
        return

    def body() -> Outcome:
        from qdsl.catalog_view import describe_catalog

        data = describe_catalog(_catalog(), entity)
        return Outcome(data=data, human=_catalog_human(data))

    ctx.exit(run_operation("catalog", body))


def _check_human(findings: list[dict[str, Any]], errors: int) -> str:
    from qdsl.cli.tables import Table, render

    table = Table(("level", "rule", "where", "finding", "fix"))
    for f in findings:
        where = ".".join(p for p in (f["table"], f["column"]) if p) or (f["entity"] or "")
        table.add(f["level"], f["rule"], where, f["message"], f["fix"])
    if not findings:
        return render(["catalog check: no findings; the catalog matches the database"])
    head = f"catalog check: {errors} error(s), {len(findings) - errors} other finding(s)"
    return render([head, table])


@catalog_cmd.command("check")
@click.option(
    "--reader-role",
    default=None,
    metavar="ROLE",
    help="PostgreSQL role the executor reads as (default: qdsl_reader).",
)
@click.pass_context
def check_cmd(ctx: click.Context, reader_role: str | None) -> None:
    """Check the catalog against the live database (--db): tables, columns, types,
    enum values, ids, facts and, on PostgreSQL, row-level security and grants.

    Exits 3 when any finding is an error; every finding names its fix.
    """

    def body() -> Outcome:
        from qdsl.facts.check import check_catalog
        from qdsl.facts.db import display_url, make_engine

        url = _url()
        engine = make_engine(url)
        try:
            report = check_catalog(engine, _catalog(), reader_role=reader_role)
        finally:
            engine.dispose()
        findings = [f.to_dict() for f in report.findings]
        data = {
            "database": display_url(url),
            "ok": report.ok,
            "errors": len(report.errors),
            "findings": findings,
        }
        return Outcome(
            data=data,
            human=_check_human(findings, len(report.errors)),
            exit_code=0 if report.ok else EXIT_CHECK_FAILED,
        )

    ctx.exit(run_operation("catalog check", body))


@catalog_cmd.command("init")
@click.option(
    "--table", "tables", multiple=True, required=True, help="A table to describe (repeat)."
)
@click.option("--tenant-column", default=None, help="The tenant column (default: guessed).")
@click.option(
    "--out",
    "out_path",
    default=None,
    metavar="PATH",
    help="Write the draft here (refuses to overwrite without --force); else print it.",
)
@click.option("--force", is_flag=True, help="Overwrite --out if it exists.")
@click.pass_context
def init_cmd(
    ctx: click.Context,
    tables: tuple[str, ...],
    tenant_column: str | None,
    out_path: str | None,
    force: bool,
) -> None:
    """Draft a catalog from the live schema (--db): ids, tenants, field types,
    enum candidates with their values, sorts on indexed columns, and
    `sensitive = true` on names like password, token or email. Review it.
    """

    def body() -> Outcome:
        from qdsl.dsl.errors import UsageError
        from qdsl.facts.db import make_engine
        from qdsl.facts.scaffold import draft_catalog

        engine = make_engine(_url())
        try:
            draft = draft_catalog(engine, list(tables), tenant_column=tenant_column)
        finally:
            engine.dispose()
        data: dict[str, Any] = {"entities": draft.summary, "notes": draft.notes}
        if out_path is None:
            data["toml"] = draft.toml
            return Outcome(data=data, warnings=draft.notes, human=draft.toml.rstrip("\n"))
        target = Path(out_path)
        if target.exists() and not force:
            raise UsageError(
                "file_exists",
                f"{target.name} exists; the draft was not written",
                hint="pass --force to overwrite it, or another --out",
            )
        target.write_text(draft.toml, encoding="utf-8")
        data["written"] = target.name
        return Outcome(
            data=data,
            warnings=draft.notes,
            human=f"wrote {target.name}: {', '.join(draft.summary)}; review it, then "
            "`qdsl --catalog " + target.name + " catalog check`",
        )

    ctx.exit(run_operation("catalog init", body))
