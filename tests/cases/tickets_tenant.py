"""The support desk's cases asked in each tenant (tests/cases/tickets.toml)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from cases.oracle import CaseFile, Entity, at, between, eq, gt, gte, is_null, lt, ne
from cases.tickets_rows import ABSTAIN, CLARIFY_OR_NOTHING, NOW, area, not_area


def add_tenant_cases(cf: CaseFile, tenant: str, data: dict[str, Entity]) -> None:  # noqa: PLR0915
    """Conditions of every kind, single objects and unknown words, answered from `data`."""
    add = cf.add
    tenant_rows = {tenant: data}
    tk = tenant_rows[tenant]["ticket"]
    agent_id = {a["name"]: a["id"] for a in tenant_rows[tenant]["agent"].rows}

    def assigned(name: str, _ids: dict[str, str] = agent_id) -> Any:
        return eq("assignee_id", _ids[name])

    # -- totals
    add("How many tickets are there?", tenant, **tk.count())
    add("现在有多少个工单", tenant, **tk.count())
    add("系统里有哪些工单", tenant, **tk.listing())
    # -- enum values, by their own spelling and by aliases
    add("How many open tickets are there?", tenant, **tk.count(eq("status", "open")))
    add("有多少个未处理的工单", tenant, **tk.count(eq("status", "open")))
    add("How many pending tickets do we have?", tenant, **tk.count(eq("status", "pending")))
    add("等待中的工单有多少个", tenant, **tk.count(eq("status", "pending")))
    add("How many resolved tickets are there?", tenant, **tk.count(eq("status", "solved")))
    add("列出所有已解决的工单", tenant, **tk.listing(eq("status", "solved")))
    add("List the closed tickets", tenant, **tk.listing(eq("status", "closed")))
    add("有多少个已关闭的工单", tenant, **tk.count(eq("status", "closed")))
    add("Are there any urgent tickets?", tenant, **tk.exists(eq("priority", "urgent")))
    add("有没有紧急的工单", tenant, **tk.exists(eq("priority", "urgent")))
    add("How many high priority tickets are there?", tenant, **tk.count(eq("priority", "high")))
    add("有多少个高优先级的工单", tenant, **tk.count(eq("priority", "high")))
    add("列出所有低优先级的工单", tenant, **tk.listing(eq("priority", "low")))
    add("How many tickets came in by phone?", tenant, **tk.count(eq("channel", "phone")))
    add("电话渠道的工单有多少个", tenant, **tk.count(eq("channel", "phone")))
    add("有没有通过在线聊天提交的工单", tenant, **tk.exists(eq("channel", "chat")))
    # -- field names by their synonyms
    add("优先级为普通的工单有多少个", tenant, **tk.count(eq("priority", "normal")))
    add("How many tickets have the status pending?", tenant, **tk.count(eq("status", "pending")))
    add("渠道是邮件的工单有哪些", tenant, **tk.listing(eq("channel", "email")))
    # -- negation and exclusion
    add("How many tickets are not urgent?", tenant, **tk.count(ne("priority", "urgent")))
    add("有多少个不是紧急的工单", tenant, **tk.count(ne("priority", "urgent")))
    add("除了已关闭的以外还有多少个工单", tenant, **tk.count(ne("status", "closed")))
    add(
        "How many tickets are there excluding closed ones?",
        tenant,
        **tk.count(ne("status", "closed")),
    )
    add("非电话渠道的工单有多少个", tenant, **tk.count(ne("channel", "phone")))
    add("不是账单相关的工单有多少个", tenant, **tk.count(not_area("Billing")))
    add("How many tickets are not about billing?", tenant, **tk.count(not_area("Billing")))
    # -- the fact field and its aliases
    add("有多少个账单相关的工单", tenant, **tk.count(area("Billing")))
    add("How many billing tickets are there?", tenant, **tk.count(area("Billing")))
    add("有没有单点登录相关的工单", tenant, **tk.exists(area("SSO")))
    add("Are there any SSO tickets?", tenant, **tk.exists(area("SSO")))
    add("列出移动端的工单", tenant, **tk.listing(area("Mobile")))
    add("List the reporting tickets", tenant, **tk.listing(area("Reporting")))
    add(
        "计费相关的紧急工单有哪些",
        tenant,
        **tk.listing(area("Billing"), eq("priority", "urgent")),
    )
    # -- absence
    add("有多少个没有负责人的工单", tenant, **tk.count(is_null("assignee_id")))
    add("How many tickets have no assignee?", tenant, **tk.count(is_null("assignee_id")))
    add("没有退款的工单有多少个", tenant, **tk.count(is_null("refund_amount")))
    add("How many tickets are without a refund?", tenant, **tk.count(is_null("refund_amount")))
    # -- numbers with units
    add("退款超过 1 万的工单有哪些", tenant, **tk.listing(gt("refund_amount", 10_000)))
    add(
        "Which tickets have a refund over 10k?",
        tenant,
        **tk.listing(gt("refund_amount", 10_000)),
    )
    add("退款金额大于 1000 的工单有多少个", tenant, **tk.count(gt("refund_amount", 1000)))
    add(
        "How many tickets have a refund of at least 1,200?",
        tenant,
        **tk.count(gte("refund_amount", 1200)),
    )
    add("退款不到 500 的工单有哪些", tenant, **tk.listing(lt("refund_amount", 500)))
    add("Which tickets have a refund under 500?", tenant, **tk.listing(lt("refund_amount", 500)))
    add(
        "退款在 1000 到 2 万之间的工单有多少个",
        tenant,
        **tk.count(
            gte("refund_amount", 1000),
            lambda r: r["refund_amount"] is not None and r["refund_amount"] <= 20_000,
        ),
    )
    add(
        "How many tickets have a refund between 1,000 and 20,000?",
        tenant,
        **tk.count(
            gte("refund_amount", 1000),
            lambda r: r["refund_amount"] is not None and r["refund_amount"] <= 20_000,
        ),
    )
    add("退款超过5万元的工单有没有", tenant, **tk.exists(gt("refund_amount", 50_000)))
    # -- dates relative to now
    y2026 = between(at(2026), at(2027), "opened_at")
    y2025 = between(at(2025), at(2026), "opened_at")
    may = between(at(2026, 5), at(2026, 6), "opened_at")
    march = between(at(2026, 3), at(2026, 4), "opened_at")
    week = between(NOW - timedelta(days=7), NOW + timedelta(seconds=1), "opened_at")
    add("2026年提交的工单有多少个", tenant, **tk.count(y2026))
    add("How many tickets were opened in 2026?", tenant, **tk.count(y2026))
    add("今年提交了多少个工单", tenant, **tk.count(y2026))
    add("去年提交的工单有多少个", tenant, **tk.count(y2025))
    add("How many tickets were opened last year?", tenant, **tk.count(y2025))
    add("上个月提交的工单有哪些", tenant, **tk.listing(may))
    add("Which tickets were opened last month?", tenant, **tk.listing(may))
    add("最近 7 天提交的工单有哪些", tenant, **tk.listing(week))
    add("Which tickets were opened in the last 7 days?", tenant, **tk.listing(week))
    add("2026年3月提交的工单有多少个", tenant, **tk.count(march))
    add("How many tickets were opened in March 2026?", tenant, **tk.count(march))
    add(
        "How many tickets were opened before 2026-03-01?",
        tenant,
        **tk.count(lambda r: r["opened_at"] < at(2026, 3)),
    )
    add(
        "2026年3月1日之前提交的工单有多少个",
        tenant,
        **tk.count(lambda r: r["opened_at"] < at(2026, 3)),
    )
    add(
        "How many tickets were opened since 2026?",
        tenant,
        **tk.count(lambda r: r["opened_at"] >= at(2026)),
    )
    # -- several conditions at once
    add(
        "有多少个紧急的未处理工单",
        tenant,
        **tk.count(eq("priority", "urgent"), eq("status", "open")),
    )
    add(
        "How many high priority tickets are still pending?",
        tenant,
        **tk.count(eq("priority", "high"), eq("status", "pending")),
    )
    add("2026年提交的紧急工单有多少个", tenant, **tk.count(y2026, eq("priority", "urgent")))
    add(
        "电话渠道的高优先级工单有哪些",
        tenant,
        **tk.listing(eq("channel", "phone"), eq("priority", "high")),
    )
    add(
        "Which urgent tickets are not closed?",
        tenant,
        **tk.listing(eq("priority", "urgent"), ne("status", "closed")),
    )
    add("去年提交的已关闭的工单有多少个", tenant, **tk.count(y2025, eq("status", "closed")))
    # -- superlatives and top-N
    add(
        "退款金额最高的工单是哪个",
        tenant,
        contract="entity_list",
        ids=tk.top("refund_amount", 1, desc=True),
    )
    add(
        "Which ticket has the largest refund?",
        tenant,
        contract="entity_list",
        ids=tk.top("refund_amount", 1, desc=True),
    )
    add(
        "退款最少的工单是哪个",
        tenant,
        contract="entity_list",
        ids=tk.top("refund_amount", 1, desc=False),
    )
    add(
        "最早提交的工单是哪个",
        tenant,
        contract="entity_list",
        ids=tk.top("opened_at", 1, desc=False),
    )
    add(
        "Which is the oldest ticket?",
        tenant,
        contract="entity_list",
        ids=tk.top("opened_at", 1, desc=False),
    )
    add(
        "列出最近的 3 个工单",
        tenant,
        contract="entity_list",
        ids=tk.top("opened_at", 3, desc=True),
    )
    add(
        "List the 3 most recent tickets",
        tenant,
        contract="entity_list",
        ids=tk.top("opened_at", 3, desc=True),
    )
    add(
        "退款最高的前 2 个工单",
        tenant,
        contract="entity_list",
        ids=tk.top("refund_amount", 2, desc=True),
    )
    # -- names only the data knows: requesters (linked values) and agents (references)
    requesters = sorted({t["requester"] for t in tk.rows})
    for name in requesters[:3]:
        add(f"{name} 提交的工单有多少个", tenant, **tk.count(eq("requester", name)))
        # not "did {name} open": open is also a status value here, the question would be ambiguous
        add(f"How many tickets are from {name}?", tenant, **tk.count(eq("requester", name)))
    first = requesters[0]
    add(f"Which tickets are from {first}?", tenant, **tk.listing(eq("requester", first)))
    add(
        f"{first} 的紧急工单有哪些",
        tenant,
        **tk.listing(eq("requester", first), eq("priority", "urgent")),
    )
    add(f"How many tickets are not from {first}?", tenant, **tk.count(ne("requester", first)))
    for name in sorted(agent_id)[:3]:
        add(f"分配给 {name} 的工单有哪些", tenant, **tk.listing(assigned(name)))
        add(f"Which tickets are assigned to {name}?", tenant, **tk.listing(assigned(name)))
    boss = sorted(agent_id)[0]
    add(
        f"{boss} 负责的未处理工单有多少个",
        tenant,
        **tk.count(assigned(boss), eq("status", "open")),
    )
    # -- one object: ids, attributes, compare
    seven = tk.one("TCK-7")
    add(
        "What is the priority of ticket TCK-7?",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-7"],
        fields={"priority": seven["priority"]},
    )
    add(
        "工单 TCK-7 的优先级是什么",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-7"],
        fields={"priority": seven["priority"]},
    )
    add(
        "TCK-7 现在什么状态",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-7"],
        fields={"status": seven["status"]},
    )
    add(
        "What is the status of TCK-7?",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-7"],
        fields={"status": seven["status"]},
    )
    add(
        "Who requested ticket TCK-7?",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-7"],
        fields={"requester": seven["requester"]},
    )
    twelve = tk.one("TCK-12")
    add(
        "TCK-12 的渠道是什么",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-12"],
        fields={"channel": twelve["channel"]},
    )
    refunded = next(
        t for t in sorted(tk.rows, key=lambda r: int(r["id"][4:])) if t["refund_amount"]
    )
    add(
        f"{refunded['id']} 的退款金额是多少",
        tenant,
        contract="entity_snapshot",
        ids=[refunded["id"]],
        fields={"refund_amount": refunded["refund_amount"]},
    )
    add(
        f"What is the refund amount of {refunded['id']}?",
        tenant,
        contract="entity_snapshot",
        ids=[refunded["id"]],
        fields={"refund_amount": refunded["refund_amount"]},
    )
    add(
        "TCK-7 和 TCK-12 有什么区别",
        tenant,
        contract="comparison_with_basis",
        ids=["TCK-7", "TCK-12"],
    )
    add(
        "Compare TCK-7 with TCK-12",
        tenant,
        contract="comparison_with_basis",
        ids=["TCK-7", "TCK-12"],
    )
    add("Is there a ticket TCK-99?", tenant, **tk.exists(eq("id", "TCK-99")))
    add("有没有 TCK-40 这个工单", tenant, **tk.exists(eq("id", "TCK-40")))
    # -- words no catalog maps: clarify naming them, or a text match that finds nothing
    for word, q in (
        ("VIP", "有多少个VIP客户的工单"),
        ("Europe", "How many tickets came from customers in Europe?"),
        ("周末", "周末提交的工单有多少个"),
        ("GDPR", "Are there any GDPR tickets?"),
        ("区块链", "有没有区块链相关的工单"),
        ("refurbished", "How many refurbished tickets are open?"),
    ):
        absent = not any(word.casefold() in (t["subject"] + t["body"]).casefold() for t in tk.rows)
        assert absent, word
        add(
            q,
            tenant,
            status=CLARIFY_OR_NOTHING,
            mentions=[word],
            **({"exists": False} if q.startswith(("Are", "有没有")) else {"count": 0}),
        )
    add("Which tickets are pending?", tenant, **tk.listing(eq("status", "pending")))
    add(
        "How many tickets came in through the web form?",
        tenant,
        **tk.count(eq("channel", "web")),
    )
    add("Are there any tickets from live chat?", tenant, **tk.exists(eq("channel", "chat")))
    add(
        "How many normal priority tickets are there?",
        tenant,
        **tk.count(eq("priority", "normal")),
    )
    add("How many tickets are not pending?", tenant, **tk.count(ne("status", "pending")))
    add("How many tickets did not come in by email?", tenant, **tk.count(ne("channel", "email")))
    add("Which mobile app tickets are there?", tenant, **tk.listing(area("Mobile")))
    add(
        "How many single sign-on tickets are still open?",
        tenant,
        **tk.count(area("SSO"), eq("status", "open")),
    )
    add(
        "Which tickets have a refund above 50,000?",
        tenant,
        **tk.listing(gt("refund_amount", 50_000)),
    )
    add("Which tickets were opened this year?", tenant, **tk.listing(y2026))
    add(
        "How many urgent tickets were opened last month?",
        tenant,
        **tk.count(may, eq("priority", "urgent")),
    )
    add(
        "What is the channel of TCK-12?",
        tenant,
        contract="entity_snapshot",
        ids=["TCK-12"],
        fields={"channel": twelve["channel"]},
    )
    add(
        "Which urgent tickets have no refund?",
        tenant,
        **tk.listing(eq("priority", "urgent"), is_null("refund_amount")),
    )
    add(
        "List the 2 tickets with the largest refunds",
        tenant,
        contract="entity_list",
        ids=tk.top("refund_amount", 2, desc=True),
    )
    add("What is quantum computing?", tenant, status=ABSTAIN)
    add("量子计算是什么", tenant, status=ABSTAIN)
