"""The OpenAI and Anthropic adapters through the official SDK clients, offline:
a loopback server speaks both APIs with scripted replies."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import anthropic
import openai
import pytest
from sqlalchemy import Engine

from qdsl.api import AnswerOptions, AnswerResult, aplan_and_answer, plan_and_answer
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.errors import PolicyError
from qdsl.dsl.plan.load import load_plan
from qdsl.facts.db import make_async_engine, make_engine
from qdsl.facts.demo import DEMO_NOW
from qdsl.planner import LLMPlanner, RulePlanner
from qdsl.planner.adapters.anthropic_messages import AnthropicMessages, AsyncAnthropicMessages
from qdsl.planner.adapters.openai_chat import AsyncOpenAIChat, OpenAIChat
from tests.facade.llm_loopback import Action, Loopback, Plan, Stall, Status, loopback

TICKETS_NOW = datetime(2026, 6, 15, 12, tzinfo=UTC)
Case = tuple[Catalog, str, datetime, str, str]  # catalog, question, now, db url, tenant


@pytest.fixture(autouse=True)
def _no_proxy(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("NO_PROXY", "127.0.0.1,localhost")


@pytest.fixture(params=["demo", "tickets"])
def case(
    request: pytest.FixtureRequest,
    sqlite_url: str,
    tickets_catalog: Catalog,
    tickets_sqlite_url: str,
) -> Case:
    if request.param == "demo":
        return demo_catalog(), "现在有多少个进行中的项目", DEMO_NOW, sqlite_url, "t1"
    return (
        tickets_catalog,
        "How many urgent tickets are there?",
        TICKETS_NOW,
        tickets_sqlite_url,
        "acme",
    )


def _good(case: Case) -> dict[str, Any]:
    text = RulePlanner().plan(case[1], catalog=case[0]).text
    return load_plan(text).to_json_dict()


def _plans(case: Case) -> dict[str, str]:
    good = _good(case)
    wrong = json.loads(json.dumps(good))
    wrong["filters"][0]["field"] += "x"
    dropped = {**good, "filters": []}
    tenant = json.loads(json.dumps(good))
    tenant.setdefault("scope", {})["tenant_id"] = "someone_else"
    return {
        k: json.dumps(v)
        for k, v in {"good": good, "wrong": wrong, "dropped": dropped, "tenant": tenant}.items()
    }


Adapter = Callable[[Loopback, float, int], Any]


def _openai(box: Loopback, timeout: float, retries: int) -> Any:
    client = openai.OpenAI(
        base_url=f"http://127.0.0.1:{box.port}/v1",
        api_key="k",
        timeout=timeout,
        max_retries=retries,
    )
    return OpenAIChat(client, "test-model")


def _anthropic(box: Loopback, timeout: float, retries: int) -> Any:
    client = anthropic.Anthropic(
        base_url=f"http://127.0.0.1:{box.port}", api_key="k", timeout=timeout, max_retries=retries
    )
    return AnthropicMessages(client, "test-model")


ADAPTERS = {"openai": _openai, "anthropic": _anthropic}


def _ask(case: Case, planner: LLMPlanner) -> AnswerResult:
    catalog, question, now, url, tenant = case
    eng: Engine = make_engine(url)
    try:
        return plan_and_answer(
            question,
            tenant,
            engine=eng,
            options=AnswerOptions(planner=planner, catalog=catalog, now=now),
        )
    finally:
        eng.dispose()


def _run(
    case: Case, api: str, script: list[Action], *, timeout: float = 30, retries: int = 2, **kw: Any
) -> tuple[AnswerResult, Loopback]:
    with loopback(script) as box:
        planner = LLMPlanner(ADAPTERS[api](box, timeout, retries), **kw)
        return _ask(case, planner), box


def _schema_of(api: str, body: dict[str, Any]) -> dict[str, Any]:
    if api == "openai":
        fmt = body["response_format"]
        assert fmt["type"] == "json_schema"
        return fmt["json_schema"]["schema"]  # type: ignore[no-any-return]
    assert body["tool_choice"] == {"type": "tool", "name": "write_plan"}
    return body["tools"][0]["input_schema"]  # type: ignore[no-any-return]


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_valid_plan_through_structured_output(case: Case, api: str) -> None:
    res, box = _run(case, api, [Plan(_plans(case)["good"])])
    assert res.status == "answered" and res.verdict is not None and res.verdict.ok
    assert res.planner == "llm"
    (attempt,) = res.attempts
    assert attempt.ok and attempt.input_tokens == 321 and attempt.output_tokens == 45
    assert attempt.elapsed_ms is not None and attempt.elapsed_ms >= 0
    schema = _schema_of(api, box.requests[0][1])
    # Catalog-specific: this catalog's entities, and no sensitive field.
    assert schema["properties"]["entity_type"]["enum"] == sorted(case[0].entities)
    fields = schema["$defs"]["Filter"]["properties"]["field"]["enum"]
    sensitive = {f for e in case[0].entities.values() for f, s in e.fields.items() if s.sensitive}
    assert not sensitive & set(fields)


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_wrong_field_is_repaired(case: Case, api: str) -> None:
    plans = _plans(case)
    res, box = _run(case, api, [Plan(plans["wrong"]), Plan(plans["good"])])
    assert res.status == "answered"
    first, second = res.attempts
    assert first.error_code is not None and second.ok
    assert first.error_code in box.prompts[1]


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_dropped_condition_is_replanned_with_the_verifier_sentence(case: Case, api: str) -> None:
    plans = _plans(case)
    res, box = _run(case, api, [Plan(plans["dropped"]), Plan(plans["good"])])
    assert res.status == "answered" and res.verdict is not None and res.verdict.ok
    assert "question_covered" in box.prompts[1]


@pytest.mark.parametrize("api", ADAPTERS)
def test_another_tenant_is_the_policy_error(case: Case, api: str) -> None:
    with pytest.raises(PolicyError) as info:
        _run(case, api, [Plan(_plans(case)["tenant"]), Plan(_plans(case)["good"])])
    assert info.value.code == "policy/tenant_scope_mismatch" and info.value.exit_code == 6


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_rate_limit_is_retried_by_the_sdk(case: Case, api: str) -> None:
    res, box = _run(case, api, [Status(429), Plan(_plans(case)["good"])])
    assert res.status == "answered"
    assert len(box.requests) == 2 and len(res.attempts) == 1


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_server_error_past_the_retries_is_insufficient_and_retryable(
    case: Case, api: str
) -> None:
    res, box = _run(case, api, [Status(503)], retries=1)
    assert res.status == "insufficient_evidence" and res.plan is None and res.data == {}
    assert res.error is not None and res.error.retryable
    assert res.error.code == "validation/llm_unavailable"
    assert len(box.requests) == 2  # one try and the SDK's one retry


@pytest.mark.parametrize("api", ADAPTERS)
def test_a_timeout_is_insufficient_never_a_guess(case: Case, api: str) -> None:
    res, _ = _run(case, api, [Stall(3.0)], timeout=0.3, retries=0)
    assert res.status == "insufficient_evidence" and res.planner is None
    assert res.error is not None and res.error.retryable


@pytest.mark.parametrize("api", ADAPTERS)
def test_the_rule_planner_fallback_is_explicit(case: Case, api: str) -> None:
    res, _ = _run(case, api, [Stall(3.0)], timeout=0.3, retries=0, fallback=RulePlanner())
    assert res.status == "answered" and res.planner == "rule"


def test_a_bad_key_is_not_retried_into_an_answer(case: Case) -> None:
    with pytest.raises(Exception) as info:
        _run(case, "openai", [Status(401)])
    assert getattr(info.value, "code", "") == "validation/llm_request_refused"


@pytest.mark.parametrize("api", ["openai", "anthropic"])
def test_the_async_clients(case: Case, api: str) -> None:
    catalog, question, now, url, tenant = case
    with loopback([Plan(_plans(case)["good"])]) as box:
        if api == "openai":
            complete: Any = AsyncOpenAIChat(
                openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{box.port}/v1", api_key="k"), "m"
            )
        else:
            complete = AsyncAnthropicMessages(
                anthropic.AsyncAnthropic(base_url=f"http://127.0.0.1:{box.port}", api_key="k"), "m"
            )
        planner = LLMPlanner(complete)
        assert planner.is_async and planner.form == "json"

        async def go() -> AnswerResult:
            aengine = make_async_engine(url)
            try:
                return await aplan_and_answer(
                    question,
                    tenant,
                    engine=aengine,
                    options=AnswerOptions(planner=planner, catalog=catalog, now=now),
                )
            finally:
                await aengine.dispose()

        res = asyncio.run(go())
    assert res.status == "answered" and res.attempts[0].input_tokens == 321


def test_plain_text_replies_still_work(case: Case) -> None:
    text = RulePlanner().plan(case[1], catalog=case[0]).text
    with loopback([Plan(text)]) as box:
        client = openai.OpenAI(base_url=f"http://127.0.0.1:{box.port}/v1", api_key="k")
        res = _ask(case, LLMPlanner(OpenAIChat(client, "m"), form="text"))
        assert "response_format" not in box.requests[0][1]
    assert res.status == "answered"
