"""The words generated deployments are made of: entity nouns and field concepts, zh and en.

A deployer names things in their own words; a generated catalog draws its
entities and fields from these banks, so every question reads as a user
would write it (no random strings that no reader could segment). Each word
has one meaning across the whole bank (`test_generated_deployments` checks
it), so no generated question is ambiguous by construction: a question two
readings could answer is no test of anything.

Kinds: `enum` (values with zh and en aliases), `bool` (a yes/no adjective),
`number` (with its units: money in 元 / 万 / k / $, counts, scores), `date`,
`datetime`, `text` (names only the data knows, linked per tenant) and `fact`
(a `semantic_facts` predicate, single- or many-valued, with aliases).
"""

from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal
from typing import Literal

Kind = Literal["enum", "bool", "number", "date", "datetime", "text", "fact"]
NumberStyle = Literal["money", "count", "score"]


@dataclass(frozen=True)
class Noun:
    """An entity: its words and the labels its rows carry."""

    key: str
    zh: str
    en: str
    en_plural: str
    prefix: str  # text ids are prefix + number ("E-4")
    labels: tuple[str, ...]


@dataclass(frozen=True)
class Value:
    """An enum or fact value: its canonical spelling and the words for it."""

    canon: str
    zh: tuple[str, ...]
    en: tuple[str, ...]

    @property
    def spellings(self) -> tuple[str, ...]:
        return (self.canon, *self.zh, *self.en)


@dataclass(frozen=True)
class Concept:
    """A field a deployer might declare, with the words users write for it."""

    key: str
    kind: Kind
    zh: tuple[str, ...]
    en: tuple[str, ...]
    values: tuple[Value, ...] = ()
    style: NumberStyle | None = None
    lo: Decimal = Decimal(0)
    hi: Decimal = Decimal(0)
    step: Decimal = Decimal(1)
    # fact fields: several values per object (skills, tags)
    many: bool = False
    # text fields: the names the data holds
    names: tuple[str, ...] = ()


def _v(canon: str, zh: str, en: str) -> Value:
    return Value(canon, tuple(zh.split("|")) if zh else (), tuple(en.split("|")) if en else ())


NOUNS: tuple[Noun, ...] = (
    Noun("employee", "员工", "employee", "employees", "E-", ("张伟", "李娜", "Alice Chen", "刘洋")),
    Noun("site", "站点", "site", "sites", "S-", ("浦东园区", "Harbor Point", "滨江基地", "Ridge")),
    Noun("contract", "合同", "contract", "contracts", "HT-", ("框架协议", "Atlas MSA", "续约函")),
    Noun("device", "设备", "device", "devices", "DEV-", ("核心交换机", "Edge Router", "Probe")),
    Noun("trial", "试验", "trial", "trials", "TR-", ("晨曦研究", "Aurora Study", "Beacon")),
    Noun(
        "supplier", "供应商", "supplier", "suppliers", "SUP-", ("恒通物流", "Nordwind", "Kestrel")
    ),
)

ENUMS: tuple[Concept, ...] = (
    Concept(
        "level",
        "enum",
        ("级别", "职级"),
        ("level", "grade"),
        (
            _v("junior", "初级", "junior"),
            _v("mid", "中级", "mid-level"),
            _v("senior", "高级", "senior"),
        ),
    ),
    Concept(
        "region",
        "enum",
        ("区域", "大区"),
        ("region",),
        (
            _v("east", "华东|华东区", "eastern"),
            _v("north", "华北|华北区", "northern"),
            _v("south", "华南|华南区", "southern"),
        ),
    ),
    Concept(
        "tier",
        "enum",
        ("等级", "会员等级"),
        ("tier",),
        (
            _v("gold", "金牌", "gold"),
            _v("silver", "银牌", "silver"),
            _v("bronze", "铜牌", "bronze"),
        ),
    ),
    Concept(
        "stage",
        "enum",
        ("阶段",),
        ("stage", "phase"),
        (
            _v("planning", "筹备|筹备中", "planning"),
            _v("execution", "执行中", "executing|in execution"),
            _v("closing", "收尾|收尾中", "closing|wrapping up"),
        ),
    ),
    Concept(
        "risk",
        "enum",
        ("风险等级",),
        ("risk level", "risk"),
        (
            _v("high", "高风险", "high-risk|high risk"),
            _v("medium", "中风险", "medium-risk|medium risk"),
            _v("low", "低风险", "low-risk|low risk"),
        ),
    ),
    Concept(
        "status",
        "enum",
        ("状态",),
        ("status", "state"),
        (
            _v("ongoing", "进行中", "ongoing|in progress"),
            _v("paused", "已暂停|暂停中", "paused|on hold"),
            _v("done", "已完成", "completed|finished"),
        ),
    ),
)

BOOLS: tuple[Concept, ...] = (
    Concept("remote", "bool", ("远程办公",), ("remote",)),
    Concept("verified", "bool", ("已认证",), ("verified",)),
    Concept("insured", "bool", ("已投保",), ("insured",)),
    Concept("flagged", "bool", ("已标记",), ("flagged",)),
)

NUMBERS: tuple[Concept, ...] = (
    Concept(
        "salary",
        "number",
        ("薪资", "月薪"),
        ("salary",),
        style="money",
        lo=Decimal(5000),
        hi=Decimal(60000),
        step=Decimal(2500),
    ),
    Concept(
        "budget",
        "number",
        ("预算",),
        ("budget",),
        style="money",
        lo=Decimal(50000),
        hi=Decimal(2000000),
        step=Decimal(50000),
    ),
    Concept(
        "premium",
        "number",
        ("保费",),
        ("premium",),
        style="money",
        lo=Decimal("500.00"),
        hi=Decimal("9000.00"),
        step=Decimal("250.50"),
    ),
    Concept(
        "headcount",
        "number",
        ("人数",),
        ("headcount",),
        style="count",
        lo=Decimal(1),
        hi=Decimal(400),
        step=Decimal(7),
    ),
    Concept(
        "score",
        "number",
        ("评分",),
        ("score", "rating"),
        style="score",
        lo=Decimal("1.0"),
        hi=Decimal("5.0"),
        step=Decimal("0.5"),
    ),
)

# zh names end in 日期/时间, which lends the verb ("2025年入职的"); en names are the
# participle the event reads as ("hired in 2025").
DATES: tuple[Concept, ...] = (
    Concept("hired_on", "date", ("入职日期",), ("hired", "hire date")),
    Concept("signed_on", "date", ("签署日期",), ("signed", "signing date")),
    Concept("renewed_on", "date", ("续约日期",), ("renewed", "renewal date")),
)

DATETIMES: tuple[Concept, ...] = (
    Concept("created_at", "datetime", ("创建时间",), ("created", "creation time")),
    Concept("reported_at", "datetime", ("上报时间",), ("reported", "report time")),
    Concept("inspected_at", "datetime", ("巡检时间",), ("inspected", "inspection time")),
)

TEXTS: tuple[Concept, ...] = (
    Concept(
        "city",
        "text",
        ("城市", "所在城市"),
        ("city",),
        names=("上海", "北京", "深圳", "杭州", "Berlin", "Austin"),
    ),
    Concept(
        "vendor",
        "text",
        ("厂商",),
        ("vendor", "maker"),
        names=("华为", "中兴", "Cisco", "Juniper"),
    ),
    Concept(
        "manager",
        "text",
        ("负责人",),
        ("manager",),
        names=("王强", "赵敏", "Li Wei", "Omar Haddad"),
    ),
)

FACTS: tuple[Concept, ...] = (
    Concept(
        "skill",
        "fact",
        ("技能",),
        ("skill",),
        (
            _v("Go", "", "Go|golang"),
            _v("Python", "", "Python"),
            _v("Kubernetes", "", "Kubernetes|K8s"),
            _v("Machine Learning", "机器学习", "Machine Learning|ML"),
        ),
        many=True,
    ),
    Concept(
        "area",
        "fact",
        ("治疗领域",),
        ("therapeutic area",),
        (
            _v("oncology", "肿瘤", "oncology"),
            _v("cardiology", "心血管", "cardiology|cardiac"),
            _v("neurology", "神经科", "neurology"),
        ),
    ),
    Concept(
        "market",
        "fact",
        ("市场",),
        ("market",),
        (
            _v("A股", "A股|沪深A股", "A-share|A shares"),
            _v("港股", "港股", "HK stocks|Hong Kong stocks"),
            _v("美股", "美股", "US stocks|US equities"),
        ),
    ),
    Concept(
        "tag",
        "fact",
        ("标签",),
        ("tag",),
        (
            _v("key account", "重点客户", "key account"),
            _v("pilot", "试点", "pilot"),
            _v("legacy", "遗留", "legacy"),
        ),
        many=True,
    ),
)

CONCEPTS: tuple[Concept, ...] = (*ENUMS, *BOOLS, *NUMBERS, *DATES, *DATETIMES, *TEXTS, *FACTS)
BY_KIND: dict[Kind, tuple[Concept, ...]] = {
    "enum": ENUMS,
    "bool": BOOLS,
    "number": NUMBERS,
    "date": DATES,
    "datetime": DATETIMES,
    "text": TEXTS,
    "fact": FACTS,
}


def every_word() -> list[tuple[str, str]]:
    """(word, what it names) for every word of the bank: one meaning each."""
    out: list[tuple[str, str]] = []
    for n in NOUNS:
        out += [(w, f"noun:{n.key}") for w in (n.zh, n.en, n.en_plural)]
        out += [(w, f"label:{n.key}") for w in n.labels]
    for c in CONCEPTS:
        out += [(w, f"field:{c.key}") for w in (*c.zh, *c.en)]
        for v in c.values:
            out += [(w, f"value:{c.key}:{v.canon}") for w in v.spellings]
        out += [(w, f"name:{c.key}") for w in c.names]
    return out
