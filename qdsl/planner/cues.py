"""Query-type cues in zh and en: which kind of answer the wording asks for.

Order matters: "有多少" is a count, not an existence; "what is the status of"
is a status, not an explanation; "有什么区别" is a comparison, not a list.
"""

from __future__ import annotations

import re

from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import KindTable
from qdsl.dsl.textnorm import normalize_text

_Q = QueryType

CUES: tuple[tuple[QueryType, tuple[str, ...]], ...] = (
    (
        _Q.COMPARE,
        (
            r"区别",
            r"对比",
            r"比较",
            r"差异",
            r"差别",
            r"有何不同",
            r"有什么不同",
            r"\bcompare\b",
            r"\bcomparison\b",
            r"\bdiffer(?:ence|ences|s)?\b",
            r"\bvs\.?(?!\w)",
            r"\bversus\b",
        ),
    ),
    (
        _Q.DIAGNOSE,
        (
            r"为什么",
            r"为何",
            r"怎么回事",
            r"什么原因",
            r"原因是",
            r"为啥",
            r"\bwhy\b",
            r"\bwhat went wrong\b",
            r"\broot cause\b",
            r"\bcause of\b",
        ),
    ),
    (
        _Q.STATUS,
        (
            r"什么状态",
            r"状态如何",
            r"状态是什么",
            r"状态怎么样",
            r"进展如何",
            r"怎么样了",
            r"\bstatus of\b",
            r"\bstate of\b",
            r"\bwhat(?:'s| is) the (?:status|state)\b",
            r"\bwhat status\b",
        ),
    ),
    (
        _Q.COUNT,
        (
            r"多少",
            r"几个",
            r"几项",
            r"几条",
            r"几家",
            r"几篇",
            r"数量",
            r"总数",
            r"\bhow many\b",
            r"\bnumber of\b",
            r"\bcount\b",
        ),
    ),
    (
        _Q.LIST,
        (
            r"哪些",
            r"列出",
            r"列一下",
            r"列举",
            r"清单",
            r"有哪",
            r"\bwhich\b",
            r"\blist\b",
            r"\bshow (?:me )?(?:all|the)\b",
            r"\bwhat are the\b",
        ),
    ),
    (
        _Q.EXISTENCE,
        (
            r"有没有",
            r"是否存在",
            r"是否有",
            r"存不存在",
            r"有无",
            r"有.{0,24}[吗么嘛]",
            r"是不是有",
            r"\bare there\b",
            r"\bis there\b",
            r"\bany\b",
            r"\bdo we have\b",
            r"\bexists?\b",
        ),
    ),
    (
        _Q.EXPLAIN,
        (
            r"是什么",
            r"原理",
            r"怎么工作",
            r"如何工作",
            r"介绍",
            r"解释",
            r"做什么",
            r"干什么",
            r"怎么实现",
            r"如何实现",
            r"\bexplain\b",
            r"\bwhat does\b",
            r"\bwhat is\b",
            r"\bhow does\b",
            r"\bdescribe\b",
            r"\bhow (?:is|are) .* built\b",
        ),
    ),
)

# The cues registered per query type (`dsl.kinds`): every executable kind has
# wording that asks for it (tests/dsl/test_kinds.py); CUES keeps their order.
CUES_BY_KIND: KindTable[tuple[str, ...]] = KindTable("planner cues", needs=lambda k: k.executable)
for _qt, _patterns in CUES:
    CUES_BY_KIND.add(_qt, _patterns)

_COMPILED = tuple((qt, tuple(re.compile(p) for p in pats)) for qt, pats in CUES)

RECENT = re.compile(r"刚才|刚刚|上次|最近|最新|\blatest\b|\blast\b|\bjust now\b|\bmost recent\b")


def classify(question: str) -> QueryType | None:
    """The query type the wording asks for, or None when no cue is present."""
    text = normalize_text(question)
    for qt, patterns in _COMPILED:
        if any(p.search(text) for p in patterns):
            return qt
    return None
