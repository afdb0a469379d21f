"""`qdsl db secure`: grants and row-level security for qdsl's reader role only.

PostgreSQL only. Without `--print` the statements still needed are applied in
one transaction; with `--print` they are only shown (SQL a DBA can run). Run
it again and nothing is left to do.
"""

from __future__ import annotations

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_catalog, current_url


@click.command("secure")
@click.option(
    "--print",
    "print_only",
    is_flag=True,
    help="Show the SQL that would be applied; change nothing.",
)
@click.option(
    "--reader-role",
    default=None,
    metavar="ROLE",
    help="PostgreSQL role the executor reads as (default: qdsl_reader).",
)
@click.pass_context
def secure_cmd(ctx: click.Context, print_only: bool, reader_role: str | None) -> None:
    """Grant the reader role SELECT on the catalog's tables and views (sensitive
    columns excluded) and row-level security that keeps it to one tenant; every
    other role, the tables' owner included, sees what it saw before (a view is
    granted, never altered; the output says how its tenants are kept apart).

    Idempotent: only statements still needed are shown or applied.
    """

    def body() -> Outcome:
        from qdsl.facts.db import READER_ROLE, display_url, make_engine
        from qdsl.facts.secure import isolation_of, secure

        url = current_url()
        catalog = current_catalog()
        engine = make_engine(url)
        reader = reader_role or READER_ROLE
        try:
            planned = secure(engine, catalog, reader=reader, apply=not print_only)
            isolation = isolation_of(engine, catalog, reader=reader)
        finally:
            engine.dispose()
        statements = [{"why": why, "sql": text} for why, text in planned]
        if print_only:
            human = "\n".join(f"-- {s['why']}\n{s['sql']};" for s in statements)
            human = human or "-- nothing to do: the catalog's tables are already secure"
        else:
            human = (
                f"applied {len(statements)} statement(s) on {display_url(url)}"
                if statements
                else f"nothing to do: {display_url(url)} is already secure"
            )
        views = [i for i in isolation if i["kind"] != "table"]
        if views:
            human += "\n" + "\n".join(
                f"-- {i['kind']} {i['table']}: tenants are kept apart by {i['isolation']}"
                for i in views
            )
        return Outcome(
            data={
                "database": display_url(url),
                "applied": not print_only,
                "statements": statements,
                "isolation": isolation,
            },
            human=human,
            next_ops=[
                {"operation": "catalog check", "argv": ["qdsl", "--json", "catalog", "check"]}
            ],
        )

    ctx.exit(run_operation("db secure", body))
