"""Demo document passages (one docs row per passage), zh and en.

Each passage row carries the canonical topic key of the demo catalog's
`doc.topic` aliases (architecture, ingress_gate, verifier, executor) or None,
and its passage number within its document; the demo builder turns these into
`topic` facts with source_ref `doc:<row id>#p<passage>`. Row "17" of every
tenant is the market coverage note that market_theme facts cite
(`doc:17#p1`).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

_UPDATED = datetime(2026, 10, 1, tzinfo=UTC)

# tenant, id, title, section, passage, topic, body
_PASSAGES: tuple[tuple[str, str, str, str, int, str | None, str], ...] = (
    (
        "t1",
        "1",
        "qdsl architecture",
        "Overview",
        1,
        "architecture",
        "In the qdsl architecture a question becomes a plan, normalized against the catalog, "
        "executed through whitelisted templates and verified against the evidence before "
        "anything is shown.",
    ),
    (
        "t1",
        "2",
        "qdsl architecture",
        "Layers",
        2,
        "architecture",
        "Layers: ingress gate, planner, normalizer, bounded executor, verifier, renderer. Each "
        "layer has one contract and can be tested on its own.",
    ),
    (
        "t1",
        "3",
        "系统架构说明",
        "概述",
        1,
        "architecture",
        "系统由入口闸门、规划器、规范化器、受限执行器和校验器组成。所有查询都绑定租户。",
    ),
    (
        "t1",
        "4",
        "系统架构说明",
        "原则",
        2,
        "architecture",
        "架构原则：只查询目录白名单中的表和字段，值一律作为绑定参数传入。",
    ),
    (
        "t1",
        "5",
        "Ingress gate",
        "Checks",
        1,
        "ingress_gate",
        "The ingress gate checks every plan before any work starts: size limits, tenant scope "
        "and sensitive fields.",
    ),
    (
        "t1",
        "6",
        "入口闸门",
        "检查项",
        1,
        "ingress_gate",
        "入口闸门在执行前检查计划：大小限制、租户范围和敏感字段。",
    ),
    (
        "t1",
        "7",
        "Answer verifier",
        "Checks",
        1,
        "verifier",
        "The verifier checks that every claim in the answer is backed by evidence from this "
        "execution: counts match, no total-count substitution, facts are fresh.",
    ),
    (
        "t1",
        "8",
        "答案校验器",
        "检查项",
        1,
        "verifier",
        "校验器确认答案中的每个数字都有证据支持，拒绝用总数替代过滤后的数量。",
    ),
    (
        "t1",
        "9",
        "Bounded executor",
        "Execution",
        1,
        "executor",
        "The executor compiles a normalized plan into whitelisted SQL templates, binds the "
        "tenant on every table and runs in a read-only transaction with a statement timeout.",
    ),
    (
        "t1",
        "10",
        "受限执行器",
        "执行",
        1,
        "executor",
        "执行器只使用白名单模板，在只读事务中运行，并设置语句超时。",
    ),
    (
        "t1",
        "17",
        "市场覆盖清单 / Market coverage",
        "Coverage",
        1,
        None,
        "覆盖市场：沪深A股（A-share）与港股（Hong Kong equities）。Covered markets: China "
        "A-share and Hong Kong equities.",
    ),
    (
        "t2",
        "1",
        "Platform architecture",
        "Overview",
        1,
        "architecture",
        "The platform answers questions from facts first and falls back to text search only "
        "when the plan allows it.",
    ),
    (
        "t2",
        "2",
        "Verifier rules",
        "Rules",
        1,
        "verifier",
        "Answers that cite a total instead of the filtered count are rejected by the verifier.",
    ),
    (
        "t2",
        "3",
        "执行器超时",
        "超时",
        1,
        "executor",
        "执行器的语句超时为五秒，超时的查询会被取消。",
    ),
    (
        "t2",
        "17",
        "Market coverage",
        "Coverage",
        1,
        None,
        "Covered markets: Hong Kong equities (港股) and US equities (美股).",
    ),
    (
        "t3",
        "1",
        "Architecture notes",
        "Overview",
        1,
        "architecture",
        "Every tenant table has row-level security keyed on the session tenant.",
    ),
    ("t3", "2", "闸门规则", "规则", 1, "ingress_gate", "闸门拒绝超过大小限制的计划。"),
    ("t3", "17", "Market coverage", "Coverage", 1, None, "Covered markets: China A shares only."),
)


def doc_rows() -> list[dict[str, Any]]:
    """Fresh dicts (callers may mutate them): docs columns plus `topic` and `passage`."""
    return [
        {
            "tenant_id": tenant,
            "id": did,
            "title": title,
            "section": section,
            "body": body,
            "updated_at": _UPDATED,
            "topic": topic,
            "passage": passage,
        }
        for tenant, did, title, section, passage, topic, body in _PASSAGES
    ]
