"""`qdsl ask` (the whole pipeline) and `qdsl verify` (judge a given answer): the
CLI's adapters of `Service.ask` and `Service.verify`.

Envelope data for ask/run (docs/python-api.md): status, query_type, answer_contract, text,
answer, evidence, plan, verdict, trace_id. A failed verification still prints
its data but exits 5; a question no template covers exits 4.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from qdsl.cli.inputs import (
    drop_bom,
    load_json_text,
    plan_input_options,
    read_plan_input,
    read_stdin,
)
from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_deployment
from qdsl.dsl.errors import UsageError
from qdsl.executor.result import ExecutionResult
from qdsl.gate import ROUTE_MODES

if TYPE_CHECKING:
    from qdsl.pipeline import AnswerResult

EXIT_NOT_COVERED = 4
EXIT_VERIFICATION = 5
_EXIT_FOR_STATUS = {"not_covered": EXIT_NOT_COVERED, "refused": EXIT_VERIFICATION}


def exit_code_for(res: AnswerResult) -> int:
    return _EXIT_FOR_STATUS.get(res.status, 0)


def _human(data: dict[str, Any]) -> str:
    head = f"[{data['status']}]"
    if data.get("answer_contract"):
        head += f" {data['answer_contract']}"
    verdict = data.get("verdict")
    if verdict and verdict.get("failed"):
        head += f" (failed: {', '.join(verdict['failed'])})"
    if data.get("gate_kind"):
        head += f" {data['gate_kind']}"
    text = data.get("text") or ""
    from qdsl.cli.answer_tables import answer_blocks
    from qdsl.cli.tables import render

    blocks = answer_blocks(data.get("answer"), data.get("plan"))
    return render([f"{head}\n{text}".rstrip(), *blocks])


def _next_ops(data: dict[str, Any]) -> list[dict[str, Any]]:
    """After a list, the status plan of its first item (docs/envelopes.md `meta.next`)."""
    from qdsl.envelope.next_ops import status_of_first_item

    answer, plan = data.get("answer"), data.get("plan")
    if data.get("answer_contract") != "entity_list" or not isinstance(answer, dict):
        return []
    if not isinstance(plan, dict):
        return []
    scope = plan.get("scope") if isinstance(plan.get("scope"), dict) else {}
    tenant = scope.get("tenant_id") if isinstance(scope, dict) else None
    items = answer.get("items")
    return status_of_first_item(
        list(items) if isinstance(items, list) else [], str(plan.get("entity_type")), tenant
    )


def _outcome(data: dict[str, Any], warnings: list[str] | None = None) -> Outcome:
    return Outcome(
        data=data,
        warnings=list(warnings or []),
        next_ops=_next_ops(data),
        human=_human(data),
        trace_id=data.get("trace_id"),
        exit_code=_EXIT_FOR_STATUS.get(str(data.get("status")), 0),
    )


@click.command("ask")
@click.argument("question")
@click.option("--tenant", required=True, help="The caller's tenant.")
@click.option(
    "--route-mode",
    type=click.Choice(ROUTE_MODES),
    default="internal",
    show_default=True,
    help="The router's decision; only internal questions are answered.",
)
@click.option("--now", "now_text", default=None, help="Clock for fact freshness (ISO-8601).")
@click.pass_context
def ask_cmd(
    ctx: click.Context, /, question: str, tenant: str, route_mode: str, now_text: str | None
) -> None:
    """Answer QUESTION for a tenant: gate, plan, execute, verify."""

    def body() -> Outcome:
        from qdsl.service import AskRequest, Service, answer_data

        deployment = current_deployment(now_text)
        try:
            if deployment.url is not None:
                deployment.engine()  # a database named by --db must exist, asked or not
            res = Service(deployment).ask(question, tenant, AskRequest(route_mode=route_mode))
        finally:
            deployment.close()
        return _outcome(answer_data(res), list(res.warnings))

    ctx.exit(run_operation("ask", body))


def _json_arg(raw: str, what: str) -> Any:
    text = read_stdin() if raw == "-" else drop_bom(raw)
    return load_json_text(text, f"--{what}", f"bad_{what}_json")


def _is_envelope(value: Any) -> bool:
    return (
        isinstance(value, dict) and "schemaVersion" in value and isinstance(value.get("data"), dict)
    )


def _unwrap(value: Any, key: str) -> Any:
    """Accept the bare object or a qdsl envelope / envelope data that holds it."""
    if _is_envelope(value):
        value = value["data"]
    if isinstance(value, dict) and key in value and isinstance(value[key], dict):
        return value[key]
    return value


def parse_result(raw: str, tenant_id: str) -> ExecutionResult:
    """The result `qdsl run` printed for `tenant_id`, its MAC checked first."""
    from pydantic import ValidationError

    from qdsl.result_mac import check_result

    value = _unwrap(_json_arg(raw, "result"), "result")
    check_result(tenant_id, value)
    try:
        return ExecutionResult.model_validate({k: v for k, v in value.items() if k != "mac"})
    except ValidationError as exc:
        raise UsageError(
            "bad_result",
            f"--result is not an execution result: {exc.error_count()} problem(s)",
            hint="pass the `result` of `qdsl --json run` (or its whole envelope)",
            details={"problems": [str(e["loc"]) + ": " + e["msg"] for e in exc.errors()][:10]},
        ) from None


def parse_answer(raw: str) -> Any:
    from pydantic import ValidationError

    from qdsl.verifier import Answer

    value = _json_arg(raw, "answer")
    if _is_envelope(value):
        value = value["data"]
    if isinstance(value, dict) and "answer_contract" in value:  # `ask` / `run` envelope data
        evidence = value.get("evidence") or []
        value = {
            "contract": value["answer_contract"],
            "text": value.get("text", ""),
            "data": value.get("answer") or {},
            "cited_evidence": [e["id"] if isinstance(e, dict) else e for e in evidence],
            "language": value.get("language") or "en",
        }
    try:
        return Answer.model_validate(value)
    except ValidationError as exc:
        raise UsageError(
            "bad_answer",
            f"--answer is not an answer: {exc.error_count()} problem(s)",
            hint='pass {"contract", "text", "data", "cited_evidence", "language"}',
            details={"problems": [str(e["loc"]) + ": " + e["msg"] for e in exc.errors()][:10]},
        ) from None


@click.command("verify")
@plan_input_options
@click.option("--tenant", required=True, help="The caller's tenant.")
@click.option(
    "--result",
    "result_json",
    default=None,
    help="The result `qdsl run` printed (JSON or -; its MAC is checked). "
    "Without it the plan is executed again.",
)
@click.option("--answer", "answer_json", required=True, help="The answer JSON (or -).")
@click.option("--question", default=None, help="The question, to check the plan answers it.")
@click.option("--route-mode", type=click.Choice(ROUTE_MODES), default="internal", show_default=True)
@click.option("--now", "now_text", default=None, help="Clock for fact freshness (ISO-8601).")
@click.pass_context
def verify_cmd(  # noqa: PLR0917 - click passes every option
    ctx: click.Context,
    /,
    tenant: str,
    result_json: str | None,
    answer_json: str,
    question: str | None,
    route_mode: str,
    now_text: str | None,
    **inputs: Any,
) -> None:
    """Check an answer (ours or one written elsewhere) against a plan and its result."""

    def body() -> Outcome:
        from qdsl.service import Service

        if result_json == "-" and answer_json == "-":
            raise UsageError("two_stdin", "only one of --result / --answer can read stdin")
        service = Service(current_deployment(now_text))
        source, warnings = read_plan_input(**inputs)
        norm = service.normalized(source, tenant)
        warnings += norm.warnings
        now = service.deployment.now()
        try:
            if result_json is None:
                _, result, now = service.execute(source, tenant)
            else:
                result = parse_result(result_json, tenant)
        finally:
            service.deployment.close()
        answer = parse_answer(answer_json)
        verdict = service.verify(
            norm.plan,
            result,
            answer,
            tenant_id=tenant,
            question=question,
            route_mode=route_mode,
            now=now,
        )
        data = verdict.model_dump(mode="json")
        human = f"{verdict.outcome.value}: " + (
            "all checks passed"
            if verdict.ok
            else "; ".join(f"{i.check}: {i.message}" for i in verdict.errors())
        )
        return Outcome(
            data=data,
            warnings=warnings,
            human=human,
            exit_code=0 if verdict.ok else EXIT_VERIFICATION,
        )

    ctx.exit(run_operation("verify", body))
