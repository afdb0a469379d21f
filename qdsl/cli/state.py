"""Options shared by every subcommand, set on the root group.

`--json`, `--db` and `--catalog` are accepted before or after the subcommand
(`qdsl --json ask ...` and `qdsl ask --json ...`): `with_global_options`
attaches them to every command a group hands out, and an occurrence on a
subcommand overrides the root's value for that command's context.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

import click

if TYPE_CHECKING:
    from qdsl.deployment import Deployment
    from qdsl.dsl.catalog import Catalog


@dataclass(frozen=True)
class CliState:
    json_mode: bool = False
    db_url: str | None = None
    catalog_path: str | None = None
    read_db_url: str | None = None


def current_state() -> CliState:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_object(CliState) if ctx is not None else None
    return obj if obj is not None else CliState()


def _override(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    if value is None or value is False or param.name is None:
        return
    found = ctx.find_object(CliState) or CliState()
    # The subcommand's own context takes the new state; current_state() finds
    # it first because it looks from the innermost context outwards.
    ctx.obj = replace(found, **{param.name: value})


def _global_params() -> list[click.Option]:
    return [
        click.Option(
            ["--json", "json_mode"],
            is_flag=True,
            expose_value=False,
            callback=_override,
            help="Print one JSON envelope (docs/envelopes.md); also accepted before the command.",
        ),
        click.Option(
            ["--db", "db_url"],
            expose_value=False,
            callback=_override,
            metavar="URL",
            help="SQLAlchemy database URL (overrides QDSL_DATABASE_URL).",
        ),
        click.Option(
            ["--read-db", "read_db_url"],
            expose_value=False,
            callback=_override,
            metavar="URL",
            help="Where plans read: hot standbys, e.g. a multi-host URL; writes stay on "
            "--db (overrides QDSL_READ_DATABASE_URL; docs/scaling.md).",
        ),
        click.Option(
            ["--catalog", "catalog_path"],
            expose_value=False,
            callback=_override,
            metavar="PATH",
            help="Catalog TOML file (overrides QDSL_CATALOG).",
        ),
    ]


def with_global_options(cmd: click.Command) -> click.Command:
    """Give `cmd` (and a group's subcommands) the global options; idempotent."""
    taken = {opt for p in cmd.params for opt in getattr(p, "opts", ())}
    for param in _global_params():
        if not taken & set(param.opts):
            cmd.params.append(param)
    if isinstance(cmd, click.Group):
        for sub in cmd.commands.values():
            with_global_options(sub)
    return cmd


def current_deployment(now_text: str | None = None, *, clock: bool = True) -> Deployment:
    """The command's deployment: `--catalog`, `--db` and `--read-db` (else their
    environment, else the demo); with `clock`, `--now` over QDSL_NOW over the demo's fixed
    "now" on the demo database over the wall clock."""
    from qdsl.deployment import parse_now, resolve

    state = current_state()
    now = parse_now(now_text) if clock else None
    return resolve(
        state.catalog_path, state.db_url, now=now, env_now=clock, read_url=state.read_db_url
    )


def current_url() -> str:
    """The command's database URL: `--db`, else the embedded demo file."""
    from qdsl.deployment import database_url

    return database_url(current_state().db_url)


def current_catalog() -> Catalog:
    """The command's catalog: `--catalog`, else QDSL_CATALOG, else the demo catalog."""
    from qdsl.deployment import catalog_for

    return catalog_for(current_state().catalog_path)
