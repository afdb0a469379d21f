"""The support desk's curated cases (tests/cases/tickets.toml), computed from its rows."""

from __future__ import annotations

from cases.oracle import CaseFile, Entity, at, between, eq, ne
from cases.tickets_rows import CLARIFY_OR_NOTHING, TENANTS
from cases.tickets_tenant import add_tenant_cases


def build(data: dict[str, dict[str, Entity]]) -> CaseFile:
    cf = CaseFile("tickets", {"tenant": "acme", "now": "2026-06-15T12:00:00Z"})
    add = cf.add
    for tenant in TENANTS:
        add_tenant_cases(cf, tenant, data[tenant])

    # -- agents (acme), articles, the gate, another tenant's names
    ag = data["acme"]["agent"]
    add("How many agents are there?", **ag.count())
    add("有多少个客服", **ag.count())
    add("How many tier 1 agents are there?", **ag.count(eq("team", "tier1")))
    add("一线团队的客服有哪些", **ag.listing(eq("team", "tier1")))
    add("Which agents are not in tier 1?", **ag.listing(ne("team", "tier1")))
    add("Which agents were hired in 2025?", **ag.listing(between(at(2025), at(2026), "hired_at")))
    add("2025年入职的客服有哪些", **ag.listing(between(at(2025), at(2026), "hired_at")))
    three = ag.one("AG-3")
    add(
        "Which team is agent AG-3 in?",
        contract="entity_snapshot",
        ids=["AG-3"],
        fields={"team": three["team"]},
    )
    add(
        "客服 AG-3 属于哪个团队",
        contract="entity_snapshot",
        ids=["AG-3"],
        fields={"team": three["team"]},
    )
    add("最早入职的客服是谁", contract="entity_list", ids=ag.top("hired_at", 1, desc=False))
    add("How are refunds processed?", contract="explanation_with_citations", ids=["KB-1"])
    add("单点登录怎么配置", contract="explanation_with_citations", ids=["KB-2"])
    for text in ("确认", "继续", "ok", "退出需求模式", "再出一版草稿"):
        add(text, status="gated")
    globex_only = sorted(
        {t["requester"] for t in data["globex"]["ticket"].rows}
        - {t["requester"] for t in data["acme"]["ticket"].rows}
    )
    name = globex_only[0]
    add(f"How many tickets are from {name}?", status=CLARIFY_OR_NOTHING, count=0, mentions=[name])
    add(f"{name} 提交的工单有多少个", status=CLARIFY_OR_NOTHING, count=0, mentions=[name])

    # -- issue 20: a sum or a breakdown clarifies, naming the word
    add(
        "What is the total refund amount of urgent tickets?", status=["clarify"], mentions=["total"]
    )
    add("退款总额是多少", status=["clarify"], mentions=["总额"])
    add("How many tickets per channel?", status=["clarify"], mentions=["per"])
    add("每个渠道有多少个工单", status=["clarify"], mentions=["每个"])
    # a window ending now on a DATE field: today and the 364 days before it
    year = between(at(2025, 6, 16), at(2026, 6, 16), "hired_at")
    add("Which agents were hired in the last 365 days?", **ag.listing(year))
    add("最近365天入职的客服有哪些", **ag.listing(year))
    return cf


HEADER = """
Curated questions for the support-desk deployment (tests/deployments/tickets/),
tenants acme and globex, clock 2026-06-15T12:00:00Z. Expectations were computed
from the rows by hand-written filters (tests/cases/build_cases.py), never copied
from qdsl. Run: qdsl --db URL --catalog tests/deployments/tickets/catalog.toml
eval tests/cases/tickets.toml
status = ["answered", "clarify"]: a clarification is right too, where the
question holds a word no catalog maps, a name the tenant's data lacks, or a
field or operator the catalog does not give (the answer, if one leaves, must
still be exactly right).
"""
