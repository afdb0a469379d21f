"""The text fallback refuses a term with more grams than its index serves
(`[limits] fallback_grams`), before any statement runs, on every entry."""

from __future__ import annotations

import json
from typing import Any

import pytest
from click.testing import CliRunner
from exec_support import CATALOG, NOW
from sqlalchemy import Engine, event

from qdsl.cli.main import cli
from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType, RetrievalPolicy
from qdsl.dsl.settings.limits import limits
from qdsl.executor.run import execute
from qdsl.facts.textindex import grams_for_term


def _term(grams: int) -> str:
    """A term of `grams` distinct character pairs (grams + 1 distinct CJK characters)."""
    term = "".join(chr(0x4E00 + i) for i in range(grams + 1))
    assert len(grams_for_term(term)) == grams
    return term


def _plan(term: str) -> Plan:
    return Plan(
        query_type=QueryType.LIST,
        entity_type="doc",
        filters=(Filter(field="topic", operator=Operator.CONTAINS, value=term),),
        retrieval_policy=RetrievalPolicy(facts_first=False, allow_fallback_text=True),
    )


def _statements_run(engine: Engine, plan: Plan) -> tuple[int, Any]:
    seen: list[str] = []

    def count(*args: Any) -> None:
        seen.append(args[2])

    event.listen(engine, "before_cursor_execute", count)
    try:
        try:
            outcome: Any = execute(plan, CATALOG, engine, "t1", now=NOW)
        except PlanError as e:
            outcome = e
    finally:
        event.remove(engine, "before_cursor_execute", count)
    return len(seen), outcome


def test_a_term_at_the_limit_runs_and_one_over_is_refused_before_any_sql(engine: Engine) -> None:
    bound = limits().fallback_grams
    ran, result = _statements_run(engine, _plan(_term(bound)))
    assert not isinstance(result, PlanError), result
    assert result.retrieval == "fallback_text" and ran > 0

    ran, error = _statements_run(engine, _plan(_term(bound + 1)))
    assert isinstance(error, PlanError) and ran == 0
    assert error.subtype == "fallback_grams_exceeded"
    assert "QDSL_MAX_FALLBACK_GRAMS" in (error.hint or "")
    assert error.details["limit"] == "fallback_grams" and error.details["max"] == bound


def test_raising_the_setting_lets_a_longer_term_run(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    term = _term(limits().fallback_grams + 50)
    monkeypatch.setenv("QDSL_MAX_FALLBACK_GRAMS", str(limits().fallback_grams + 50))
    ran, result = _statements_run(engine, _plan(term))
    assert not isinstance(result, PlanError), result
    assert result.retrieval == "fallback_text" and ran > 0


def test_a_long_term_of_few_grams_is_served() -> None:
    # The bound is the index's, not the value's length: one repeated character
    # is one gram however long the value is.
    assert len(grams_for_term("x" * limits().value_chars)) == 1


def _plan_text(term: str) -> str:
    return f'list doc where topic contains "{term}" retrieval fallback_text'


def _cli(args: list[str]) -> tuple[int, dict[str, Any]]:
    result = CliRunner().invoke(cli, ["--json", *args])
    stream = result.stdout if result.exit_code == 0 else result.stderr
    return result.exit_code, json.loads(stream.strip().splitlines()[-1])


@pytest.mark.parametrize("entry", ["run", "chain"])
def test_the_cli_refuses_with_the_setting_named(entry: str, sqlite_url: str) -> None:
    bound = limits().fallback_grams

    def call(term: str) -> tuple[int, dict[str, Any]]:
        if entry == "run":
            return _cli(["--db", sqlite_url, "run", "--tenant", "t1", "--plan", _plan_text(term)])
        step = {"op": "run", "input": {"tenant": "t1", "plan": _plan_text(term)}}
        return _cli(["--db", sqlite_url, "chain", "--steps", json.dumps([step])])

    code, envelope = call(_term(bound))
    assert code == 0, envelope
    code, envelope = call(_term(bound + 1))
    assert code == 3, envelope
    error = envelope["error"]
    assert error["subtype"] == "fallback_grams_exceeded"
    assert "[limits] fallback_grams" in error["hint"]
