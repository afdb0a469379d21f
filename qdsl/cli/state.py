"""Options shared by every subcommand, set on the root group."""

from __future__ import annotations

from dataclasses import dataclass

import click


@dataclass(frozen=True)
class CliState:
    json_mode: bool = False
    db_url: str | None = None
    catalog_path: str | None = None


def current_state() -> CliState:
    ctx = click.get_current_context(silent=True)
    obj = ctx.find_object(CliState) if ctx is not None else None
    return obj if obj is not None else CliState()
