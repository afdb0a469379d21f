"""The demo cases of every kind of condition, then single objects, unknown words, t2."""

from __future__ import annotations

from cases.demo_rows import (
    A_SHARE,
    ABSTAIN,
    CLARIFY_OR_NOTHING,
    HK,
    not_theme,
    theme,
    title_has,
    topic,
)
from cases.oracle import CaseFile, Entity, at, between, eq, gt, gte, is_null, lt, ne


def add_conditions(cf: CaseFile, data: dict[str, dict[str, Entity]]) -> None:  # noqa: PLR0915
    add = cf.add
    d = data["t1"]
    pj, tk, rn, sg, us, cfg, doc = (
        d[k] for k in ("project", "task", "run", "signal", "user", "config", "doc")
    )
    y2026 = between(at(2026), at(2027), "created_at")
    y2025 = between(at(2025), at(2026), "created_at")

    # -- enum values and aliases
    add("How many active projects are there?", **pj.count(eq("status", "active")))
    add("有多少个已关闭的项目", **pj.count(eq("status", "closed")))
    add("Which projects are closed?", **pj.listing(eq("status", "closed")))
    add("List the projects on hold", **pj.listing(eq("status", "paused")))
    add("有没有挂起的项目", **pj.exists(eq("status", "paused")))
    add("How many tasks are blocked?", **tk.count(eq("status", "blocked")))
    add("有多少个阻塞的任务", **tk.count(eq("status", "blocked")))
    add("How many tasks are completed?", **tk.count(eq("status", "done")))
    add("列出所有未开始的任务", **tk.listing(eq("status", "todo")))
    add("状态为进行中的任务有哪些", **tk.listing(eq("status", "doing")))
    add("有多少个失败的运行", **rn.count(eq("status", "failed")))
    add("Which runs failed?", **rn.listing(eq("status", "failed")))
    add("Is any run still running?", **rn.exists(eq("status", "running")))
    add("类型是报警的信号有多少个", or_clarify=True, **sg.count(eq("kind", "alert")))
    add("How many signals of kind alert are there?", **sg.count(eq("kind", "alert")))
    add("有多少个管理员", **us.count(eq("role", "admin")))
    add("Which users are analysts?", **us.listing(eq("role", "analyst")))
    add("How many users are there?", **us.count())
    add("有多少个配置", **cfg.count())
    # -- negation and exclusion
    add("有多少个不是暂停的项目", **pj.count(ne("status", "paused")))
    add("How many projects are not closed?", **pj.count(ne("status", "closed")))
    add("除了已关闭的以外还有多少个项目", **pj.count(ne("status", "closed")))
    add(
        "Excluding paused projects, how many projects are there?",
        **pj.count(ne("status", "paused")),
    )
    add("除了港股以外的项目有多少个", or_clarify=True, **pj.count(not_theme(HK)))
    add("How many projects are not Hong Kong stocks?", or_clarify=True, **pj.count(not_theme(HK)))
    add(
        "Which tasks of project 64 are not done?",
        **tk.listing(eq("project_id", "64"), ne("status", "done")),
    )
    add(
        "项目 64 里还没完成的任务有哪些", **tk.listing(eq("project_id", "64"), ne("status", "done"))
    )
    add("有多少个不是告警的信号", or_clarify=True, **sg.count(ne("kind", "alert")))
    add("How many runs did not fail?", **rn.count(ne("status", "failed")))
    # -- several conditions
    add("有多少个进行中的A股项目", **pj.count(eq("status", "active"), theme(A_SHARE)))
    add(
        "How many active A-share projects are there?",
        **pj.count(eq("status", "active"), theme(A_SHARE)),
    )
    add("预算超过10万的港股项目有哪些", **pj.listing(gt("budget", 100_000), theme(HK)))
    add(
        "Which Hong Kong equities projects have a budget over 100k?",
        **pj.listing(gt("budget", 100_000), theme(HK)),
    )
    add("2026年创建的已关闭项目有多少个", **pj.count(y2026, eq("status", "closed")))
    add(
        "How many paused projects have a budget under 100k?",
        **pj.count(eq("status", "paused"), lt("budget", 100_000)),
    )
    add(
        "Li Wei 负责的已完成任务有哪些",
        **tk.listing(eq("assignee", "Li Wei"), eq("status", "done")),
    )
    add("项目 64 有多少个任务已完成", **tk.count(eq("project_id", "64"), eq("status", "done")))
    # -- numbers with units
    add("预算低于 10 万的项目有多少个", **pj.count(lt("budget", 100_000)))
    add("How many projects have a budget under 100k?", **pj.count(lt("budget", 100_000)))
    add("预算至少 30 万的项目有哪些", **pj.listing(gte("budget", 300_000)))
    add("Which projects have a budget of at least 300,000?", **pj.listing(gte("budget", 300_000)))
    band = (gte("budget", 50_000), lambda r: r["budget"] is not None and r["budget"] <= 150_000)
    add("预算在 5 万到 15 万之间的项目有哪些", **pj.listing(*band))
    add("Which projects have a budget between 50k and 150k?", **pj.listing(*band))
    add("预算超过二十万的项目有多少个", **pj.count(gt("budget", 200_000)))
    add("Are there any projects with a budget over 1.5M?", **pj.exists(gt("budget", 1_500_000)))
    add("预算超过150万的项目有没有", **pj.exists(gt("budget", 1_500_000)))
    add("Which projects have a budget above 200k?", **pj.listing(gt("budget", 200_000)))
    add("严重程度大于等于 4 的信号有哪些", **sg.listing(gte("severity", 4)))
    add("Which signals have a severity above 3?", **sg.listing(gt("severity", 3)))
    # -- absence
    add("Which projects have no budget?", **pj.listing(is_null("budget")))
    add("没有截止日期的任务有多少个", or_clarify=True, **tk.count(is_null("due_at")))
    add("How many tasks have no due date?", or_clarify=True, **tk.count(is_null("due_at")))
    # -- dates relative to now (2026-11-01)
    add("今年创建了多少个项目", **pj.count(y2026))
    add("去年创建的项目有哪些", **pj.listing(y2025))
    add("How many projects were created last year?", **pj.count(y2025))
    add("上个月创建了多少个项目", **pj.count(between(at(2026, 10), at(2026, 11), "created_at")))
    add(
        "Which projects were created last month?",
        **pj.listing(between(at(2026, 10), at(2026, 11), "created_at")),
    )
    add("2026年5月创建的项目有哪些", **pj.listing(between(at(2026, 5), at(2026, 6), "created_at")))
    add(
        "Which projects were created in May 2026?",
        **pj.listing(between(at(2026, 5), at(2026, 6), "created_at")),
    )
    add(
        "Which projects were created before 2026-02-01?",
        **pj.listing(lambda r: r["created_at"] < at(2026, 2)),
    )
    add("2026年2月1日之前创建的项目有哪些", **pj.listing(lambda r: r["created_at"] < at(2026, 2)))
    add("自2026年9月以来创建的项目有哪些", **pj.listing(lambda r: r["created_at"] >= at(2026, 9)))
    add(
        "Which projects were created since September 2026?",
        **pj.listing(lambda r: r["created_at"] >= at(2026, 9)),
    )
    add("最近 90 天创建了多少个项目", **pj.count(lambda r: r["created_at"] >= at(2026, 8, 3)))
    add(
        "How many projects were created in the last 90 days?",
        **pj.count(lambda r: r["created_at"] >= at(2026, 8, 3)),
    )
    add(
        "Which tasks are due in November 2026?",
        or_clarify=True,
        **tk.listing(between(at(2026, 11), at(2026, 12), "due_at")),
    )
    add(
        "截止日期在2026年12月之前的任务有哪些",
        or_clarify=True,
        **tk.listing(lambda r: r["due_at"] is not None and r["due_at"] < at(2026, 12)),
    )
    add(
        "上个月有多少个运行",
        or_clarify=True,
        **rn.count(between(at(2026, 10), at(2026, 11), "started_at")),
    )
    # -- superlatives and top-N
    add("预算最高的项目是哪个", contract="entity_list", ids=pj.top("budget", 1, desc=True))
    add("预算最少的项目是哪个", contract="entity_list", ids=pj.top("budget", 1, desc=False))
    add(
        "Which project has the smallest budget?",
        contract="entity_list",
        ids=pj.top("budget", 1, desc=False),
    )
    add("最早创建的项目是哪个", contract="entity_list", ids=pj.top("created_at", 1, desc=False))
    add(
        "What is the newest project?",
        contract="entity_list",
        ids=pj.top("created_at", 1, desc=True),
    )
    add("预算最高的 3 个项目", contract="entity_list", ids=pj.top("budget", 3, desc=True))
    add(
        "List the top 3 projects by budget",
        contract="entity_list",
        ids=pj.top("budget", 3, desc=True),
    )
    add(
        "List the 3 most recent projects",
        contract="entity_list",
        ids=pj.top("created_at", 3, desc=True),
    )
    add(
        "最早创建的任务是哪个",
        or_clarify=True,
        contract="entity_list",
        ids=tk.top("created_at", 1, desc=False),
    )
    add("What is the latest run?", contract="entity_list", ids=rn.top("started_at", 1, desc=True))
    # -- names only the data knows, labels
    for person in ("Priya Nair", "Zhang Min", "Alex Morgan"):
        add(f"Which tasks are assigned to {person}?", **tk.listing(eq("assignee", person)))
        add(f"{person} 负责的任务有哪些", **tk.listing(eq("assignee", person)))
    add("Li Wei 负责几个任务", **tk.count(eq("assignee", "Li Wei")))
    add("名字里带 A股 的项目有哪些", **pj.listing(title_has("A股")))
    add("Which projects have research in the title?", **pj.listing(title_has("research")))
    add("标题包含 Executor 的项目有哪些", **pj.listing(title_has("Executor")))
    add(
        "Is there a project called Verifier hardening?",
        **pj.exists(lambda r: r["title"] == "Verifier hardening"),
    )
    # -- attributes of one object, ids, compare
    add(
        "What is the budget of project 70?",
        contract="entity_snapshot",
        ids=["70"],
        fields={"budget": pj.one("70")["budget"]},
    )
    add(
        "项目 65 的状态是什么",
        contract="entity_snapshot",
        ids=["65"],
        fields={"status": pj.one("65")["status"]},
    )
    add(
        "What is the status of project 72?",
        contract="entity_snapshot",
        ids=["72"],
        fields={"status": pj.one("72")["status"]},
    )
    add(
        "项目 72 是什么时候创建的",
        contract="entity_snapshot",
        ids=["72"],
        mentions=[pj.one("72")["created_at"].date().isoformat()],
    )
    add(
        "运行 15 现在什么状态",
        contract="entity_snapshot",
        ids=["15"],
        fields={"status": rn.one("15")["status"]},
    )
    add(
        "What is the status of task 6?",
        contract="entity_snapshot",
        ids=["6"],
        fields={"status": tk.one("6")["status"]},
    )
    add(
        "任务 3 是谁负责的",
        contract="entity_snapshot",
        ids=["3"],
        fields={"assignee": tk.one("3")["assignee"]},
    )
    add("项目 60 和 61 有什么不同", contract="comparison_with_basis", ids=["60", "61"])
    add("Compare run 12 and run 15", contract="comparison_with_basis", ids=["12", "15"])
    add("Is there a project 99?", **pj.exists(eq("id", "99")))
    add("有没有项目 70", **pj.exists(eq("id", "70")))
    add("为什么运行 15 失败了", contract="diagnosis_with_evidence", ids=["15"])
    add(
        "What is the verifier?",
        contract="explanation_with_citations",
        ids=[
            r["id"] for r in doc.where(topic({"verifier", "answer verifier", "校验器", "验证器"}))
        ],
    )
    add(
        "执行器是怎么工作的",
        contract="explanation_with_citations",
        ids=[r["id"] for r in doc.where(topic({"executor", "执行器", "bounded executor"}))],
    )
    add("Which projects are active?", **pj.listing(eq("status", "active")))
    add("How many tasks are not started?", **tk.count(eq("status", "todo")))
    add(
        "How many projects were created in May 2026?",
        **pj.count(between(at(2026, 5), at(2026, 6), "created_at")),
    )
    add(
        "How many tasks are due before December 2026?",
        or_clarify=True,
        **tk.count(lambda r: r["due_at"] is not None and r["due_at"] < at(2026, 12)),
    )
    add("Which projects have a budget under 50k?", **pj.listing(lt("budget", 50_000)))
    add(
        "How many projects have a budget of at most 60k?",
        **pj.count(lambda r: r["budget"] is not None and r["budget"] <= 60_000),
    )
    add("Which users are admins?", **us.listing(eq("role", "admin")))
    add("How many failed runs are there?", **rn.count(eq("status", "failed")))
    add("Which runs belong to project 64?", **rn.listing(eq("project_id", "64")))
    add(
        "What is the role of user 2?",
        contract="entity_snapshot",
        ids=["2"],
        fields={"role": us.one("2")["role"]},
    )
    add(
        "How many closed projects were created last year?",
        **pj.count(y2025, eq("status", "closed")),
    )
    add("Which A-share projects are paused?", **pj.listing(theme(A_SHARE), eq("status", "paused")))
    add(
        "Are there any blocked tasks in project 64?",
        **tk.exists(eq("project_id", "64"), eq("status", "blocked")),
    )
    add("List the tasks of project 65", **tk.listing(eq("project_id", "65")))
    add(
        "Which project was created first?",
        contract="entity_list",
        ids=pj.top("created_at", 1, desc=False),
    )
    add(
        "Which active project has the smallest budget?",
        contract="entity_list",
        ids=pj.top("budget", 1, desc=False, preds=(eq("status", "active"),)),
    )
    add("How many signals have a severity of at least 2?", **sg.count(gte("severity", 2)))
    # -- words no catalog maps
    for word, question, kind in (
        ("绿色", "有多少个绿色项目", "count"),
        ("blockchain", "Are there any blockchain projects?", "exists"),
        ("区块链", "有没有区块链项目", "exists"),
        ("Europe", "How many projects are in Europe?", "count"),
        ("高风险", "有多少个高风险的任务", "count"),
        ("urgent", "How many urgent tasks are there?", "count"),
        ("南美", "南美项目有哪些", "count"),
        ("crypto", "List the crypto projects", "count"),
    ):
        texts = [str(r.get("title", "")) + str(r.get("summary", "")) for r in pj.rows + tk.rows]
        assert not any(word.casefold() in t.casefold() for t in texts), word
        extra = {"exists": False} if kind == "exists" else {"count": 0}
        add(question, status=CLARIFY_OR_NOTHING, mentions=[word], **extra)
    add("量子计算是什么", status=ABSTAIN)

    # -- another tenant: shared ids, other content
    t2 = data["t2"]
    add("Are there any A-share projects?", "t2", **t2["project"].exists(theme(A_SHARE)))
    add("有多少个港股项目", "t2", **t2["project"].count(theme(HK)))
    add("现在有多少个项目", "t2", **t2["project"].count())
    add(
        "项目 64 现在什么状态",
        "t2",
        contract="entity_snapshot",
        ids=["64"],
        fields={"status": t2["project"].one("64")["status"]},
    )
    add(
        "What is the budget of project 64?",
        "t2",
        contract="entity_snapshot",
        ids=["64"],
        fields={"budget": t2["project"].one("64")["budget"]},
    )
    add("有多少个进行中的项目", "t2", **t2["project"].count(eq("status", "active")))
    add(
        "Which projects have a budget over 100k?",
        "t2",
        **t2["project"].listing(gt("budget", 100_000)),
    )
    # t2's data has no Li Wei: the name means nothing there, so a clarification is right too
    add(
        "Which tasks are assigned to Li Wei?",
        "t2",
        or_clarify=True,
        mentions=["Li Wei"],
        **t2["task"].listing(eq("assignee", "Li Wei")),
    )
