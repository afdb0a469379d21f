"""Entry point of the `qdsl` command.

Subcommands load lazily (`COMMANDS` maps a name to `module:attribute`) because
agent hosts call qdsl once per step: start-up time is paid on every call.
"""

from __future__ import annotations

import importlib
import sys
from typing import Any

import click

from qdsl.cli.state import CliState, with_global_options

COMMANDS: dict[str, str] = {
    "parse": "qdsl.cli.plan_cmds:parse_cmd",
    "fmt": "qdsl.cli.plan_cmds:fmt_cmd",
    "schema": "qdsl.cli.plan_cmds:schema_cmd",
    "catalog": "qdsl.cli.catalog_cmds:catalog_cmd",
    "compile": "qdsl.cli.exec_cmds:compile_cmd",
    "run": "qdsl.cli.exec_cmds:run_cmd",
    "db": "qdsl.cli.db_cmds:db_group",
    "demo": "qdsl.cli.db_cmds:demo_group",
    "facts": "qdsl.cli.facts_cmds:facts_group",
    "ask": "qdsl.cli.answer_cmds:ask_cmd",
    "verify": "qdsl.cli.answer_cmds:verify_cmd",
    "refs": "qdsl.cli.refs_cmds:refs_group",
    "chain": "qdsl.cli.chain_cmd:chain_cmd",
    "audit": "qdsl.cli.audit_cmds:audit_group",
    "eval": "qdsl.cli.eval_cmd:eval_cmd",
    "index": "qdsl.cli.index_cmd:index_group",
    "mcp": "qdsl.cli.mcp_cmd:mcp_group",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def resolve_command(
        self, ctx: click.Context, args: list[str]
    ) -> tuple[str | None, click.Command | None, list[str]]:
        try:
            return super().resolve_command(ctx, args)
        except click.NoSuchCommand as exc:
            # click suggests from the commands it holds, and this group loads them
            # only when named: suggest from the names instead ("aks" -> "ask")
            raise click.NoSuchCommand(exc.command_name, possibilities=COMMANDS, ctx=ctx) from None

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        cmd = getattr(importlib.import_module(module_name), attr)
        assert isinstance(cmd, click.Command)
        return with_global_options(cmd)


def _print_version(ctx: click.Context) -> None:
    from qdsl.cli.fast import print_version

    print_version(json_mode=bool(ctx.params.get("json_mode")))
    ctx.exit()


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.option(
    "--json",
    "json_mode",
    is_flag=True,
    is_eager=True,
    help="Print one JSON envelope (docs/envelopes.md).",
)
@click.option("--db", "db_url", envvar="QDSL_DATABASE_URL", help="SQLAlchemy database URL.")
@click.option("--catalog", "catalog_path", envvar="QDSL_CATALOG", help="Catalog TOML file.")
@click.option(
    "--read-db",
    "read_db_url",
    envvar="QDSL_READ_DATABASE_URL",
    help="Where plans read (hot standbys); writes stay on --db.",
)
@click.option(
    "--version",
    is_flag=True,
    expose_value=False,
    # Not eager, unlike --json: click runs eager options first, so --json is known
    # here in either order (`--json --version` and `--version --json`).
    callback=lambda ctx, _p, v: _print_version(ctx) if v else None,
    help="Print the version and exit.",
)
@click.pass_context
def cli(
    ctx: click.Context,
    json_mode: bool,
    db_url: str | None,
    catalog_path: str | None,
    read_db_url: str | None,
) -> None:
    """qdsl: query DSL compiler and answer verifier.

    \b
    Documentation (docs/ in the qdsl repository):
      docs/cli.md            commands, giving a plan, exit codes
      docs/plan-language.md  the plan: query types, text and JSON forms
      docs/catalog.md        the catalog: entities, fields, operators, facts
      docs/envelopes.md      JSON envelopes, the ref store, settings
      docs/python-api.md     plan_and_answer, its options and its answer
    """
    ctx.obj = CliState(
        json_mode=json_mode, db_url=db_url, catalog_path=catalog_path, read_db_url=read_db_url
    )


def _undecodable_argument(args: list[str]) -> int | None:
    """The index of the first argument that was not valid UTF-8 (Python keeps such
    bytes as lone surrogates, which no later step can encode), else None."""
    from qdsl.dsl.settings.limits import has_surrogate

    return next((i for i, arg in enumerate(args) if has_surrogate(arg)), None)


def main(argv: list[str] | None = None) -> None:
    args = sys.argv[1:] if argv is None else argv
    json_mode = "--json" in args
    bad = _undecodable_argument(args)
    if bad is not None:
        from qdsl.cli.outcome import fail
        from qdsl.dsl.errors import UsageError

        err = UsageError(
            "bad_encoding",
            f"command-line argument {bad + 1} is not valid UTF-8 text",
            hint="pass arguments as UTF-8, or send the plan on stdin with --input -",
            retryable=False,
            details={"argument": bad + 1},
        )
        sys.exit(fail("qdsl", err, json_mode=json_mode))
    try:
        rv: Any = cli.main(args=args, prog_name="qdsl", standalone_mode=False)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except click.exceptions.Abort:
        sys.exit(130)
    except click.ClickException as exc:
        from qdsl.cli.runner import usage_failure

        sys.exit(usage_failure(exc, json_mode=json_mode))
    except Exception as exc:
        # Command bodies report their own errors through run_operation; this
        # catches what fails around them (e.g. a command module that will not
        # import) so a user still gets an envelope, never a traceback.
        from qdsl.cli.runner import internal_failure

        sys.exit(internal_failure(exc, json_mode=json_mode))
    sys.exit(rv if isinstance(rv, int) else 0)


if __name__ == "__main__":
    main()
