"""The plans the benchmarks compile and run, each beside the SQL an LLM would write for it.

The LLM's SQL asks for the same rows the plan does, with the same guards: the
tenant predicate on every table and, for a fact filter, the same facts EXISTS
over the same spellings (the catalog's aliases of the value). It is the
simplest SQL that answers the question (no evidence join, no baseline count),
so the guard's share of the work is if anything smaller than qdsl's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass

from qdsl.dsl.bound import alias_set
from qdsl.dsl.catalog import Catalog, demo_catalog
from qdsl.dsl.plan.parser import parse_text


@dataclass(frozen=True)
class Case:
    label: str
    text: str  # the plan text
    sql: Callable[[str], str]  # the LLM's SQL for a tenant

    @property
    def json(self) -> str:
        return json.dumps(parse_text(self.text).model_dump(mode="json"), ensure_ascii=False)


def _quoted(values: list[str]) -> str:
    return ", ".join("'" + v.replace("'", "''") + "'" for v in values)


def spellings(catalog: Catalog, entity: str, field: str, value: str) -> list[str]:
    return sorted(alias_set(catalog.entity(entity).fields[field], value))


def facts_exists(catalog: Catalog, tenant: str, predicate: str, value: str) -> str:
    norms = _quoted(spellings(catalog, "project", predicate, value))
    return (
        "EXISTS (SELECT 1 FROM semantic_facts AS f "
        f"WHERE f.tenant_id = '{tenant}' AND f.entity_type = 'project' "
        f"AND f.entity_id = p.id AND f.predicate = '{predicate}' AND f.value_norm IN ({norms}))"
    )


def theme_list(value: str, limit: int) -> Case:
    """Projects with a market theme, newest first (facts first)."""
    catalog = demo_catalog()
    return Case(
        f"list project, theme {value}, limit {limit}",
        f'list project where market_theme ~= "{value}" select id, title'
        f" order by created_at desc limit {limit} retrieval facts_first",
        lambda t: (
            f"SELECT p.id, p.title FROM projects AS p WHERE p.tenant_id = '{t}' AND "
            + facts_exists(catalog, t, "market_theme", value)
            + f" ORDER BY p.created_at DESC LIMIT {limit + 1}"
        ),
    )


def demo_cases() -> list[Case]:
    """A mixed set over the demo catalog: facts, counts, ranges, refs, sorts."""
    catalog = demo_catalog()
    return [
        Case(
            "existence project, theme A股 (facts)",
            'existence project where market_theme ~= "A股" select id, title limit 20'
            " retrieval facts_first",
            lambda t: (
                f"SELECT p.id, p.title FROM projects AS p WHERE p.tenant_id = '{t}' AND "
                + facts_exists(catalog, t, "market_theme", "A股")
                + " ORDER BY p.created_at DESC LIMIT 21"
            ),
        ),
        Case(
            "count project, theme 港股 and active (facts)",
            'count project where market_theme ~= "港股" and status = "active"',
            lambda t: (
                f"SELECT count(*) FROM projects AS p WHERE p.tenant_id = '{t}' "
                "AND p.status = 'active' AND " + facts_exists(catalog, t, "market_theme", "港股")
            ),
        ),
        Case(
            "count project, active",
            'count project where status = "active"',
            lambda t: (
                f"SELECT count(*) FROM projects AS p WHERE p.tenant_id = '{t}' "
                "AND p.status = 'active'"
            ),
        ),
        Case(
            "list task, range + not-equal",
            'list task where project_id = "64" and status != "done"'
            ' and due_at between "2026-10-01" and "2026-10-31"'
            " select id, status, assignee order by due_at asc limit 50",
            lambda t: (
                f"SELECT k.id, k.status, k.assignee FROM tasks AS k WHERE k.tenant_id = '{t}' "
                "AND k.project_id = '64' AND k.status <> 'done' "
                "AND k.due_at BETWEEN '2026-10-01' AND '2026-10-31' "
                "ORDER BY k.due_at ASC LIMIT 51"
            ),
        ),
        Case(
            "status project 64",
            "status project about project 64 select status, budget",
            lambda t: (
                "SELECT p.id, p.title, p.status, p.budget FROM projects AS p "
                f"WHERE p.tenant_id = '{t}' AND p.id = '64'"
            ),
        ),
        Case(
            "list signal, severity + in, sorted",
            'list signal where severity >= 3 and kind in ("alert", "metric")'
            " order by severity desc limit 10",
            lambda t: (
                f"SELECT s.id, s.kind, s.severity FROM signals AS s WHERE s.tenant_id = '{t}' "
                "AND s.severity >= 3 AND s.kind IN ('alert', 'metric') "
                "ORDER BY s.severity DESC LIMIT 11"
            ),
        ),
    ]


# Demo questions for plan_and_answer, each with the SQL an LLM would write for it.
def demo_questions() -> list[tuple[str, Callable[[str], str]]]:
    catalog = demo_catalog()
    return [
        (
            "帮我看看系统里面有没有 A 股项目",
            lambda t: (
                f"SELECT p.id, p.title FROM projects AS p WHERE p.tenant_id = '{t}' AND "
                + facts_exists(catalog, t, "market_theme", "A股")
                + " ORDER BY p.created_at DESC LIMIT 21"
            ),
        ),
        (
            "有多少个进行中的项目",
            lambda t: (
                f"SELECT count(*) FROM projects AS p WHERE p.tenant_id = '{t}' "
                "AND p.status = 'active'"
            ),
        ),
        (
            "项目 64 现在什么状态",
            lambda t: (
                "SELECT p.id, p.title, p.status FROM projects AS p "
                f"WHERE p.tenant_id = '{t}' AND p.id = '64'"
            ),
        ),
        (
            "列出所有暂停的项目",
            lambda t: (
                "SELECT p.id, p.title FROM projects AS p "
                f"WHERE p.tenant_id = '{t}' AND p.status = 'paused' "
                "ORDER BY p.created_at DESC LIMIT 21"
            ),
        ),
    ]
