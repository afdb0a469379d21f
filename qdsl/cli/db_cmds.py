"""`qdsl db upgrade`, `qdsl demo init` and bare `qdsl demo`.

Both commands are idempotent: upgrading an up-to-date database and
initializing an already-seeded demo change nothing. The database is `--db` /
QDSL_DATABASE_URL, else the embedded SQLite demo file in the state directory.
"""

from __future__ import annotations

import click

from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_state, current_url


def _url() -> str:
    return current_url()


def _shown(url: str) -> str:
    from qdsl.facts.db import display_url

    return display_url(url)


@click.group("db")
def db_group() -> None:
    """Database schema management."""


@db_group.command("upgrade")
@click.pass_context
def upgrade_cmd(ctx: click.Context) -> None:
    """Migrate the database to the newest schema revision (idempotent)."""

    def body() -> Outcome:
        from qdsl.facts.db import upgrade

        url = _url()
        revision = upgrade(url)
        return Outcome(
            data={"database": _shown(url), "revision": revision},
            human=f"database {_shown(url)} is at revision {revision}",
            next_ops=[{"operation": "demo init", "argv": ["qdsl", "--json", "demo", "init"]}],
        )

    ctx.exit(run_operation("db upgrade", body))


@click.group("demo", invoke_without_command=True)
@click.pass_context
def demo_group(ctx: click.Context) -> None:
    """Run the demo (no subcommand), or manage the demo database."""
    if ctx.invoked_subcommand is not None:
        return
    # Seeding first keeps the demo's own output free of set-up noise.
    code = _quiet_init()
    if code:
        ctx.exit(code)
    from qdsl import demo_show

    url = current_state().db_url
    engine = None
    if url is not None:
        from qdsl.facts.db import make_engine

        engine = make_engine(url)  # the database just seeded, not the embedded file
    try:
        if current_state().json_mode:
            # With --json, stdout holds the one envelope (docs/envelopes.md), not the walkthrough.
            code = run_operation(
                "demo", lambda: Outcome(data={"answers": demo_show.answers(engine)})
            )
        else:
            code = int(demo_show.main(engine) or 0)
    finally:
        if engine is not None:
            engine.dispose()
    ctx.exit(code)


def _quiet_init() -> int:
    from qdsl.dsl.errors import QdslError
    from qdsl.envelope import emit_error
    from qdsl.facts.demo.setup import ensure_demo

    try:
        ensure_demo(_url())
    except QdslError as exc:
        return emit_error("demo", exc, json_mode=current_state().json_mode)
    return 0


@demo_group.command("init")
@click.pass_context
def init_cmd(ctx: click.Context) -> None:
    """Create (migrate) and seed the demo database; does nothing if already seeded."""

    def body() -> Outcome:
        from qdsl.facts.demo.setup import ensure_demo

        url = _url()
        status = ensure_demo(url, count_rows=True)
        seeded = ", ".join(status.seeded_tenants) or "none (already present)"
        return Outcome(
            data={
                "database": _shown(status.url),
                "revision": status.revision,
                "seededTenants": list(status.seeded_tenants),
                "rows": status.rows,
                "seconds": round(status.seconds, 3),
            },
            human=(
                f"demo database {_shown(status.url)} at revision {status.revision}; "
                f"seeded tenants: {seeded}; {sum(status.rows.values())} rows"
            ),
            next_ops=[{"operation": "demo", "argv": ["qdsl", "demo"]}],
        )

    ctx.exit(run_operation("demo init", body))


def _register_secure() -> None:
    from qdsl.cli.secure_cmd import secure_cmd

    db_group.add_command(secure_cmd)


_register_secure()
