"""`qdsl ask` (the whole pipeline), `qdsl verify` (judge a given answer), and the
verification step `qdsl run` calls after executing (`verified_run`).

Envelope data for ask/run (docs/python-api.md): status, query_type, answer_contract, text,
answer, evidence, plan, verdict, trace_id. A failed verification still prints
its data but exits 5; a question no template covers exits 4.
"""

from __future__ import annotations

import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import click

from qdsl.api import AnswerOptions
from qdsl.cli.inputs import drop_bom, load_json_text, plan_input_options, read_stdin
from qdsl.cli.runner import Outcome, run_operation
from qdsl.cli.state import current_state
from qdsl.dsl.catalog import Catalog
from qdsl.dsl.errors import UsageError
from qdsl.dsl.ir import Plan
from qdsl.executor.result import ExecutionResult
from qdsl.gate import ROUTE_MODES

if TYPE_CHECKING:
    from qdsl.pipeline import AnswerResult

EXIT_NOT_COVERED = 4
EXIT_VERIFICATION = 5
_EXIT_FOR_STATUS = {"not_covered": EXIT_NOT_COVERED, "refused": EXIT_VERIFICATION}


def _catalog() -> Catalog:
    from qdsl.dsl.catalog import resolve_catalog

    return resolve_catalog(current_state().catalog_path)


def _now(raw: str | None, *, demo: bool) -> datetime:
    from qdsl.cli.exec_cmds import parse_now

    moment = parse_now(raw) or parse_now(os.environ.get("QDSL_NOW"))
    if moment is not None:
        return moment
    if demo:
        from qdsl.facts.demo import DEMO_NOW

        return DEMO_NOW
    return datetime.now(UTC)


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

    return render([f"{head}\n{text}".rstrip(), *answer_blocks(data.get("answer"))])


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
        from qdsl.api import plan_and_answer

        url = current_state().db_url
        engine = None
        if url is not None:
            from qdsl.facts.db import existing_engine

            engine = existing_engine(url)
        try:
            res = plan_and_answer(
                question,
                tenant,
                engine=engine,
                options=AnswerOptions(
                    route_mode=route_mode, catalog=_catalog(), now=_now(now_text, demo=url is None)
                ),
            )
        finally:
            if engine is not None:
                engine.dispose()
        return _outcome(answer_data(res), list(res.warnings))

    ctx.exit(run_operation("ask", body))


def verified_run(
    plan: Plan,
    result: ExecutionResult,
    *,
    tenant_id: str,
    catalog: Catalog,
    now: datetime,
    language: str = "en",
) -> tuple[dict[str, Any], int]:
    """Render and verify an executed plan: (envelope data, exit code) for `qdsl run`."""
    import uuid

    from qdsl.audit import Audit
    from qdsl.pipeline import Settings, verified_answer
    from qdsl.planner import RulePlanner

    settings = Settings(catalog=catalog, planner=RulePlanner(), now=now)
    res = verified_answer(
        plan,
        result,
        tenant_id=tenant_id,
        settings=settings,
        audit=Audit(uuid.uuid4().hex),
        language="zh" if language == "zh" else "en",
    )
    return answer_data(res), _EXIT_FOR_STATUS.get(res.status, 0)


def answer_data(res: AnswerResult) -> dict[str, Any]:
    """The `ask` / `run` envelope data: the answer's fields and, when a typed error
    ended it without an answer (the LLM API unavailable), that error; else null."""
    return {**res.to_dict(), "error": res.error.to_dict() if res.error is not None else None}


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
        from qdsl.cli.exec_cmds import load_normalized
        from qdsl.dsl.question import read_question
        from qdsl.verifier import VerifyContext, verify

        if result_json == "-" and answer_json == "-":
            raise UsageError("two_stdin", "only one of --result / --answer can read stdin")
        catalog = _catalog()
        plan, warnings = load_normalized(inputs, tenant, catalog)
        now = _now(now_text, demo=current_state().db_url is None)
        if result_json is None:
            from qdsl.cli.exec_cmds import run_plan

            result, now = run_plan(plan, catalog, tenant, db_url=current_state().db_url, now=now)
        else:
            result = parse_result(result_json, tenant)
        answer = parse_answer(answer_json)
        now = _now(now_text, demo=current_state().db_url is None)
        # The question is read on its own (question_covered), never through the plan.
        reading = read_question(question, catalog, now=now) if question else None
        context = VerifyContext(
            tenant_id=tenant,
            route_mode=route_mode,
            now=now,
            catalog=catalog,
            expected_query_type=reading.query_type if reading and reading.entity else None,
            question=reading,
        )
        verdict = verify(plan, result, answer, context=context)
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
