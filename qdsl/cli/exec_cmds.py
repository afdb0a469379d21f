"""`qdsl compile` (plan -> SQL and bound parameters, no database) and `qdsl run`.

`run_plan` is the execution step on its own (database choice, demo seeding,
`now`), so `qdsl ask` / the verifying `run` can call it and add verification.
"""

from __future__ import annotations

import json
import os
from datetime import UTC, datetime
from typing import Any

import click

from qdsl.cli.inputs import plan_input_options, read_plan_input
from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_state
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import QdslError, UsageError
from qdsl.dsl.ir import Plan
from qdsl.dsl.limits import check_now
from qdsl.executor.result import ExecutionResult


def parse_now(raw: str | None) -> datetime | None:
    if not raw:
        return None
    try:
        moment = datetime.fromisoformat(raw.strip().replace("Z", "+00:00"))
    except ValueError:
        raise UsageError(
            "bad_now",
            "--now / QDSL_NOW is not an ISO-8601 timestamp",
            hint="write e.g. 2026-11-01T00:00:00Z",
        ) from None
    return check_now(moment if moment.tzinfo else moment.replace(tzinfo=UTC))


def load_normalized(
    inputs: dict[str, Any], tenant: str | None, catalog: Catalog
) -> tuple[Plan, list[str]]:
    """The plan from the input channels, parsed and normalized for `tenant`."""
    from qdsl.dsl.normalize import PlanContext
    from qdsl.dsl.plan_cache import compile_source

    source, warnings = read_plan_input(**inputs)
    result = compile_source(source, catalog, PlanContext(tenant_id=tenant))
    return result.plan, [*warnings, *result.warnings]


def run_plan(
    plan: Plan,
    catalog: Catalog,
    tenant_id: str,
    *,
    db_url: str | None = None,
    timeout_ms: int | None = None,
    now: datetime | None = None,
) -> tuple[ExecutionResult, datetime]:
    """Execute a normalized plan against `db_url`, or the embedded demo database.

    The demo database is created and seeded on first use. `now` (freshness) is
    the argument, else QDSL_NOW, else the demo's fixed clock on the demo
    database, else the current time. Returns the result and the `now` used.
    """
    from qdsl.executor.run import execute
    from qdsl.facts.db import default_database_url, existing_engine
    from qdsl.facts.demo import DEMO_NOW
    from qdsl.facts.demo.setup import ensure_demo

    url = db_url or default_database_url()
    is_demo = db_url is None
    if is_demo:
        ensure_demo(url)
    moment = now or parse_now(os.environ.get("QDSL_NOW"))
    if moment is None:
        moment = DEMO_NOW if is_demo else datetime.now(UTC)
    engine = existing_engine(url)
    try:
        return execute(plan, catalog, engine, tenant_id, timeout_ms=timeout_ms, now=moment), moment
    finally:
        engine.dispose()


def _catalog() -> Catalog:
    from qdsl.dsl.catalog import resolve_catalog

    return resolve_catalog(current_state().catalog_path)


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
        from qdsl.executor.compile import compile_plan

        catalog = _catalog()
        plan, warnings = load_normalized(inputs, tenant, catalog)
        compiled = compile_plan(plan, catalog, dialect, tenant_id=tenant)
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
    head = f"{result.template}: {len(result.rows)} row(s)"
    if result.count is not None:
        head += f", count {result.count}"
    if result.baseline_total is not None:
        head += f", tenant total {result.baseline_total}"
    if result.truncated:
        head += ", truncated"
    lines = [head + f" [{result.retrieval}]"]
    for row in result.rows:
        lines.append(f"  {row.entity_id}  {row.label or ''}  <- {', '.join(row.evidence_ids)}")
    return "\n".join(lines)


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
        catalog = _catalog()
        try:
            plan, warnings = load_normalized(inputs, tenant, catalog)
            result, moment = run_plan(
                plan,
                catalog,
                tenant,
                db_url=current_state().db_url,
                timeout_ms=timeout_ms,
                now=parse_now(now_text),
            )
        except QdslError as exc:
            # a plan that failed before it was answered (policy, plan, database) is
            # audited under the run's tenant (a chain's own line would have none)
            from qdsl.audit import audited_error

            raise audited_error(exc, operation="run", tenant=tenant) from None
        from qdsl.cli.answer_cmds import verified_run

        # The answer layer renders and verifies the result (docs/cli.md: run is verified).
        answer, exit_code = verified_run(
            plan, result, tenant_id=tenant, catalog=catalog, now=moment
        )
        from qdsl.result_mac import sign_result

        printed = result.model_dump(mode="json")
        # signed for `qdsl verify --result`, which trusts nothing else
        printed["mac"] = sign_result(tenant, printed)
        data = {
            **answer,
            "result": printed,
            "plan": plan.to_json_dict(),
            "now": moment.isoformat(),
        }
        human = _run_human(result) + f"\n[{answer['status']}] {answer['text']}"
        return Outcome(
            data=data,
            warnings=warnings,
            human=human,
            trace_id=answer["trace_id"],
            exit_code=exit_code,
        )

    ctx.exit(run_operation("run", body))
