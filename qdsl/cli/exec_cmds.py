"""`qdsl compile` (plan -> SQL and bound parameters, no database) and `qdsl run`
(execute, then render and verify): the CLI's adapters of `Service.compile` and
`Service.run`.
"""

from __future__ import annotations

import json
from typing import Any

import click

from qdsl.cli.inputs import plan_input_options, read_plan_input
from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_deployment
from qdsl.dsl.errors import QdslError
from qdsl.executor.result import ExecutionResult


def _compile_human(data: dict[str, Any]) -> str:
    lines = [f"template {data['template']} ({data['dialect']})"]
    for st in data["statements"]:
        lines.append(f"\n-- {st['role']} [{st['fingerprint']}]")
        lines.append(st["sql"].rstrip())
        lines.append("-- params: " + json.dumps(st["params"], ensure_ascii=False, default=str))
    return "\n".join(lines)


@click.command("compile")
@plan_input_options
@click.option(
    "--dialect",
    type=click.Choice(["postgresql", "sqlite"]),
    default="postgresql",
    show_default=True,
    help="SQL dialect to render.",
)
@click.option("--tenant", help="Tenant shown as the :tenant_id parameter.")
@click.option(
    "--literal",
    is_flag=True,
    help="Also print each statement with its values inlined, to paste into psql or "
    "sqlite3 (display only: qdsl always binds values as parameters).",
)
@click.pass_context
def compile_cmd(
    ctx: click.Context, /, dialect: str, tenant: str | None, literal: bool, **inputs: Any
) -> None:
    """Compile a plan to SQL and bound parameters, without a database."""

    def body() -> Outcome:
        from qdsl.service import Service

        service = Service(current_deployment(clock=False))
        source, warnings = read_plan_input(**inputs)
        plan, compiled, more = service.compile(source, tenant, dialect)
        warnings += more
        catalog = service.deployment.catalog
        data = compiled.to_dict()
        if not literal:
            return Outcome(data=data, warnings=warnings, human=_compile_human(data))
        from qdsl.executor.literal import literal_statements

        inlined = literal_statements(plan, catalog, dialect, tenant_id=tenant)
        for statement, (_role, text) in zip(data["statements"], inlined, strict=True):
            statement["literal_sql"] = text
        if tenant is None:
            warnings.append("no --tenant: the tenant is NULL in the literal SQL")
        human = "\n\n".join(f"-- {role}\n{text.rstrip()};" for role, text in inlined)
        return Outcome(data=data, warnings=warnings, human=human)

    ctx.exit(run_operation("compile", body))


def _run_human(result: ExecutionResult) -> str:
    """The result as a person reads it: a head line, then each row with the columns
    the plan selected (and its label when no selected column holds it)."""
    from qdsl.cli.answer_tables import MAX_ROWS
    from qdsl.cli.tables import Table, render

    head = f"{result.template}: {len(result.rows)} row(s)"
    if result.count is not None:
        head += f", count {result.count}"
    if result.baseline_total is not None:
        head += f", tenant total {result.baseline_total}"
    if result.truncated:
        head += ", truncated"
    head += f" [{result.retrieval}]"
    if not result.rows:
        return head
    rows = result.rows[:MAX_ROWS]
    keys = [
        k
        for k in dict.fromkeys(k for row in rows for k in row.values)
        # the id column is the row's id, shown first already
        if any(str(row.values.get(k)) != row.entity_id for row in rows)
    ]
    labelled = any(row.label and row.label not in row.values.values() for row in rows)
    table = Table(("id", *(("label",) if labelled else ()), *keys, "evidence"))
    for row in rows:
        label = (row.label,) if labelled else ()
        values = (row.values.get(k) for k in keys)
        table.add(row.entity_id, *label, *values, ", ".join(row.evidence_ids))
    more = [f"… {len(result.rows) - MAX_ROWS} more rows"] if len(result.rows) > MAX_ROWS else []
    return render([head, table, *more])


@click.command("run")
@plan_input_options
@click.option(
    "--tenant", required=True, help="The caller's tenant; every statement is bound to it."
)
@click.option("--timeout-ms", type=int, default=None, help="Statement timeout (default 5000).")
@click.option("--now", "now_text", default=None, help="Clock for fact freshness (ISO-8601).")
@click.pass_context
def run_cmd(
    ctx: click.Context,
    /,
    tenant: str,
    timeout_ms: int | None,
    now_text: str | None,
    **inputs: Any,
) -> None:
    """Execute a plan for a tenant and print the execution result."""

    def body() -> Outcome:
        from qdsl.cli.answer_cmds import exit_code_for
        from qdsl.service import Service

        service = Service(current_deployment(now_text))
        try:
            source, warnings = read_plan_input(**inputs)
        except QdslError as exc:
            # audited under the run's tenant (a chain's own line would have none)
            from qdsl.audit import audited_error

            raise audited_error(exc, operation="run", tenant=tenant) from None
        try:
            ran = service.run(source, tenant, timeout_ms=timeout_ms)
        finally:
            service.deployment.close()
        warnings += ran.warnings
        # The answer layer renders and verifies the result (docs/cli.md: run is verified).
        data = ran.data()
        human = _run_human(ran.result) + f"\n[{data['status']}] {data['text']}"
        return Outcome(
            data=data,
            warnings=warnings,
            human=human,
            trace_id=data["trace_id"],
            exit_code=exit_code_for(ran.answer),
        )

    ctx.exit(run_operation("run", body))
