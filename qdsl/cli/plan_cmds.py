"""`qdsl parse`, `qdsl fmt`, `qdsl schema`: the plan language, no database.

`qdsl catalog` and its subcommands live in qdsl.cli.catalog_cmds.
"""

from __future__ import annotations

from typing import Any

import click

from qdsl.cli.inputs import plan_input_options, read_plan_input
from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_deployment


def _normalized(tenant: str | None, inputs: dict[str, Any]) -> tuple[Any, list[str]]:
    from qdsl.service import Service

    source, warnings = read_plan_input(**inputs)
    result = Service(current_deployment(clock=False)).normalized(source, tenant)
    return result.plan, [*warnings, *result.warnings]


def _next_for_plan(plan_text: str, tenant: str | None) -> list[dict[str, Any]]:
    tenant_arg = ["--tenant", tenant] if tenant else ["--tenant", "<tenant>"]
    return [
        {"operation": "compile", "argv": ["qdsl", "--json", "compile", "--plan", plan_text]},
        {"operation": "run", "argv": ["qdsl", "--json", "run", *tenant_arg, "--plan", plan_text]},
    ]


@click.command("parse")
@plan_input_options
@click.option("--tenant", help="The caller's tenant, bound into the plan's scope.")
@click.pass_context
def parse_cmd(ctx: click.Context, /, tenant: str | None, **inputs: Any) -> None:
    """Parse and normalize a plan; print the typed IR."""

    def body() -> Outcome:
        from qdsl.dsl.plan.printer import to_text

        plan, warnings = _normalized(tenant, inputs)
        text = to_text(plan)
        return Outcome(
            data=plan.to_json_dict(),
            warnings=warnings,
            next_ops=_next_for_plan(text, tenant),
            human=text,
        )

    ctx.exit(run_operation("parse", body))


@click.command("fmt")
@plan_input_options
@click.option("--tenant", help="The caller's tenant, bound into the plan's scope.")
@click.option("--raw", is_flag=True, help="Print the parsed plan without catalog binding.")
@click.pass_context
def fmt_cmd(ctx: click.Context, /, tenant: str | None, raw: bool, **inputs: Any) -> None:
    """Print a plan in canonical text form."""

    def body() -> Outcome:
        from qdsl.dsl.plan.load import load_plan
        from qdsl.dsl.plan.printer import to_text

        if raw:
            source, warnings = read_plan_input(**inputs)
            plan = load_plan(source)
        else:
            plan, warnings = _normalized(tenant, inputs)
        text = to_text(plan)
        return Outcome(data={"text": text}, warnings=warnings, human=text)

    ctx.exit(run_operation("fmt", body))


@click.command("schema")
@click.pass_context
def schema_cmd(ctx: click.Context) -> None:
    """JSON Schema of the plan's JSON form, for LLM structured output.

    With `--catalog` (or QDSL_CATALOG): the catalog's own schema, its entity,
    field and operator names as enums, the one the LLM planner gives the model."""

    def body() -> Outcome:
        from qdsl.cli.state import current_catalog, current_state

        if current_state().catalog_path:
            from qdsl.planner.schema import catalog_plan_schema

            return Outcome(data=catalog_plan_schema(current_catalog()))
        from qdsl.dsl.plan.schema import plan_json_schema

        return Outcome(data=plan_json_schema())

    ctx.exit(run_operation("schema", body))
