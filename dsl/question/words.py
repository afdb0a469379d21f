"""The small zh/en vocabulary every catalog shares: cues and words without a condition.

Everything domain-specific (entities, fields, values) comes from the catalog;
this module holds only the grammar words a question is built from. Patterns
run on `normalize_text` output (NFKC, casefolded), so they are lower case.
Order matters for query-type cues: "有多少" is a count, not an existence;
"what is the status of" is a status, not an explanation.
"""

from __future__ import annotations

import re

from qdsl.dsl.ir import QueryType
from qdsl.dsl.kinds import cue_table

# Query-type cues: the matched words are the cue's piece of the question. Each
# query kind's record owns its cues (`dsl.kinds`); here they are in rank order.
CUES: tuple[tuple[QueryType, tuple[str, ...]], ...] = cue_table()

COMPILED_CUES = tuple((qt, tuple(re.compile(p) for p in pats)) for qt, pats in CUES)


def _words(*lines: str) -> tuple[str, ...]:
    return tuple(" ".join(lines).split())


# Words that carry no condition. zh first, then en (whole words).
FUNCTION_ZH = _words(
    "帮我看看 帮我查查 帮我查一下 帮我 帮忙 看看 查查 查一下 查询 请问 请 麻烦 "
    "告诉我 我想知道 想知道 系统里面 系统里 系统中 系统内 系统 里面 里边 当中 "
    "之中 目前 当前 现在 现有 一共 总共 共 所有的 所有 全部的 全部 全都 都 "
    "一下 我们的 我们 我的 你们 咱们 相关的 相关 有关的 有关 关于 的话 已经 "
    "还是 还有 以及 或者 或 和 与 及 跟 同 并且 而且 且 以外 之外 外 被 给 把 对 由 "
    "在 是 为 有 了 的 地 得 吗 呢 吧 啊 呀 么 嘛 哦 个 项 条 家 位 "
    "名 篇 份 件 些 这些 那些 其中 还 里 谁 是谁 什么时候 何时 通过 经由 "
    "到 至 之间 中间 分配给 分配 指派给 属于 下的 下面的 之下 里的 中的 "
    "负责的 负责 做的 跟进的 情况 信息 数据 记录 内部 我司 公司 一些 哪里 "
    "怎样 如何 怎么 什么 呢 一个 个数"
)

FUNCTION_EN = _words(
    "when came come comes coming via through the a an is are was were be been being am do "
    "does did done we our you your i me my there any all some of in on at for to from with "
    "and or please show tell give get find between can could would should will currently "
    "current now right today's have has had that this these those they them their its which "
    "what who whom whose how much many here exist exists existing one ones item items record "
    "records entries entry assigned belong belongs belonging under related relating "
    "regarding owned handled just also so then than as into out up listed known system yet "
    "still ever made"
)

# Verbs that say how the asked objects relate to another entity's object ("orders
# Felix Hoffmann placed", "包含 Garden Hose 的订单"). They state no condition: a
# condition across a declared relation carries them, and without one they stay
# residual (`labels.TextPieces.place_residuals`).
RELATION_VERBS = frozenset(
    _words(
        "包含 包括 含有 买过 买了 购买过 购买了 下过 下了",
        "place places placed contain contains contained include includes included "
        "buy buys bought purchase purchases purchased",
    )
)

# "in total", "the total number of": a count said with "total", no sum.
FUNCTION_PHRASES = (
    r"\bin total\b",
    r"\btotal(?= (?:number|count)\b)",
    # the possessive "'s" ("Alice Wang's salary", "E-1's level"): the name carries it
    r"(?<=\w)['’]s\b",
)

# Words that ask for more than a list, a count or a snapshot: a sum, an average, a
# count of distinct values, one answer per group. They are never filler: the reader
# reads a measure from them or makes each a Problem (`measures.py`) naming what
# cannot be answered. (pattern, what it asks for): "sum", "average", "distinct",
# "amount" (how much: a sum beside another sum word, refused alone unless it asks
# one object's attribute), "per" (a breakdown, unless it means every one of the
# asked objects), "respectively" (per group, unless the ids are named), "group"
# (always a breakdown).
AGGREGATES: tuple[tuple[str, str], ...] = (
    (r"合计|总计|总和|总额|总量|共计多少|总(?![数共部结体是之])", "sum"),
    (r"(?<!\bin )\btotal\b(?! (?:number|count)\b)|\bsum(?:s|med)?\b|\bsummed up\b", "sum"),
    (r"平均值?|均值|人均|\baverage\b|\bavg\b|(?<=\bthe )mean\b|\bmean (?=of\b)", "average"),
    (r"多少钱|\bhow much\b", "amount"),
    (r"有?多少种|有?几种|\bdistinct\b|\bdifferent\b|\bunique\b", "distinct"),
    (r"每(?:一)?(?:个|位|名|家|条|项|种|篇|份|件)?|各(?:个|位|种|类)?", "per"),
    (r"\b(?:for )?each\b|\bevery\b|\bper\b", "per"),
    (r"分别", "respectively"),
    (r"分组|\bgroup(?:ed)? by\b|\bbreak(?:s|ing)? ?down\b|\bbroken down\b", "group"),
)
# A superlative asked as a value ("what is the highest salary", "最高工资是多少"),
# not as the object holding it ("who has the highest salary", "哪个员工工资最高").
VALUE_ASKED_ZH = re.compile(r"是多少|为多少|有多少|多少")
VALUE_ASKED_EN = re.compile(r"\bwhat(?:'s|\s+is|\s+was|\s+are|\s+were)\s+(?:the\s+)?$")
# (en: as the question's first word; later, "who" and "whose" lead a condition:
# "the highest salary of employees who work remotely")
HOLDER_ASKED = re.compile(
    r"哪|谁|列出|列举|^\W*(?:which|who|whose|list|show|find|name|tell me (?:which|who))\b"
)
# Words that ask for groups whatever the question counts (a breakdown, not a count).
GROUP_WORDS = re.compile(r"分组|\bgroup(?:ed)? by\b|\bbreak(?:s|ing)? ?down\b|\bbroken down\b")
# After 按 / "by", a field groups the answer when the question counts or
# aggregates; these words make it a sort whatever the question asks.
SORT_WORDS = re.compile(r"排序|排列|排名|\bsort(?:ed)?\b|\border(?:ed)?\b|\brank(?:ed)?\b")

# Negation and exclusion (the next condition is inverted).
NEGATION = (
    r"除了",
    r"除去",
    r"排除",
    r"不包括",
    r"不含",
    r"不是",
    r"不属于",
    r"不在",
    r"还没有?",
    r"尚未",
    r"没有(?!多少)",
    r"没",
    r"未",
    r"非",
    r"不",
    r"\bnot\b",
    # "don't", "isn't", "doesn’t": one negation, not the words "don" and "t"
    r"\b(?:do|does|did|is|are|was|were|has|have|had|ca|wo|could|would|should)n['’]t\b",
    r"\bnon-?",
    r"\bexcept(?: for)?\b",
    r"\bexcluding\b",
    r"\bother than\b",
    r"\bapart from\b",
    r"\bisn't\b",
    r"\baren't\b",
    r"\bwasn't\b",
    r"\bweren't\b",
    r"\bnor\b",
    r"\byet to be\b",
)
# Asking words that contain a negation but ask yes/no.
ASKING = re.compile(r"有没有|是不是|有无|是否|存不存在|还有没有")

# Absence / presence of a field's value, built around the field's spellings.
# 没有 after a lone 有 is the asking 有没有; after 有没有 / 是否有 it is "without"
# ("有没有没有预算的项目": are there projects without a budget).
ABSENCE_BEFORE = (
    r"(?:(?<!(?<![没否])有)没有|(?<!有)没|无|缺少|缺|未设置|未填写?|\bwithout(?: an?| any)?"
    r"|\bwith no|\bno|\bmissing(?: an?)?|\blacking(?: an?)?)"
)
ABSENCE_AFTER = r"(?:为空|是空的|缺失|\bis (?:missing|empty|not set)|\bmissing)"
PRESENCE_BEFORE = r"(?:(?<![没所])有|\bwith an?|\bhaving an?|\bthat have an?)"

# A superlative right before an amount bounds it ("薪资最多4.5万" is at most, not the
# most); before a count ("最多5个") it stays a limit or a ranking.
_ZH_AMOUNT = r"[\d零〇一二两三四五六七八九十百千万亿.]"
_BOUND = rf"(?=\s*{_ZH_AMOUNT}+(?!{_ZH_AMOUNT}|\s*[个项条名家篇位件份]))"
# Comparisons: (pattern, op, whether the number comes after the words).
_GTE = (
    r"不少于|不低于|至少|大于等于|大于或等于|\bat least\b|\bno less than\b"
    rf"|\bnot less than\b|(?:最少|最低){_BOUND}|>=|=>|≥"
)
_LTE = (
    r"不超过|不多于|不高于|至多|小于等于|小于或等于|\bat most\b|\bno more than\b"
    rf"|\bup to\b|\bnot more than\b|(?:最多|最高){_BOUND}|<=|=<|≤"
)
_GT = (
    r"超过|大于|多于|高于|高过|\bover\b|\bmore than\b|\babove\b|\bgreater than\b"
    r"|\bexceeding\b|\bexceeds?\b|\bhigher than\b|\blarger than\b|\bbigger than\b"
    r"|>(?!=)"
)
_LT = (
    r"低于|小于|少于|不到|不足|\bunder\b|\bbelow\b|\bless than\b|\bfewer than\b"
    r"|\blower than\b|\bsmaller than\b|<(?!=)"
)
# Comparisons: (pattern, op, whether the number comes after the words).
COMPARISONS: tuple[tuple[str, str, bool], ...] = (
    (_GTE, "gte", True),
    (_LTE, "lte", True),
    (_GT, "gt", True),
    (_LT, "lt", True),
    (r"等于|\bequal to\b|\bequals\b|\bexactly\b", "eq", True),
    (r"以上|及以上|或以上|\bor more\b|\band above\b|\bor above\b|\bplus\b", "gte", False),
    (
        r"以下|及以下|或以下|以内|之内|\bor less\b|\bor fewer\b|\band below\b|\bor below\b",
        "lte",
        False,
    ),
    (r"介于|\bbetween\b", "between", True),
)
BETWEEN_JOIN = r"(?:和|与|到|至|-|~|\band\b|\bto\b)"
BETWEEN_END = r"(?:之间|中间)"

# Superlatives: (pattern, direction, about time).
_LATEST = (
    r"最新|最近|最晚|最迟|刚才|刚刚|上次|上一次|\blatest\b|\bnewest\b|\bmost recent(?:ly)?\b"
    r"|\brecent\b|\blast\b"
)
_MOST = (
    r"最大|最高|最多|最贵|最长|\blargest\b|\bbiggest\b|\bhighest\b|\bmost\b"
    r"|\bgreatest\b|\bmaximum\b|\bmax\b|\btop\b"
)
_LEAST = (
    r"最小|最低|最少|最便宜|最短|\bsmallest\b|\blowest\b|\bleast\b|\bfewest\b"
    r"|\bminimum\b|\bmin\b|\bcheapest\b"
)
# "by budget", "按预算": the field that follows orders the answer.
ORDER_BY = r"\b(?:sorted |ordered |ranked )?by\b|按照?"
DESCENDING = re.compile(r"从高到低|从大到小|从新到旧|降序|倒序|\bdesc(?:ending)?\b|\btop\b")
ASCENDING = re.compile(r"从低到高|从小到大|从旧到新|升序|\basc(?:ending)?\b|\bbottom\b")
SUPERLATIVES: tuple[tuple[str, str, bool], ...] = (
    (_LATEST, "desc", True),
    (r"最早|最老|最旧|\bearliest\b|\boldest\b|\bfirst\b", "asc", True),
    (_MOST, "desc", False),
    (_LEAST, "asc", False),
)
# A requested number of items: 前 3 个, top 3, first 5, 3 个 after 列出.
LIMIT = (
    r"前\s*(?P<n>\d+)\s*(?:个|项|条|名|家|篇|位)?",
    r"\btop\s+(?P<n>\d+)\b",
    r"\bfirst\s+(?P<n>\d+)\b",
    r"\blast\s+(?P<n>\d+)\b(?!\s*(?:days?|weeks?|months?|years?))",
    r"(?P<n>\d+)\s*(?:个|项|条|名|家|篇|位)(?![天周月年小])",
)

# Label conditions: the words after the cue are matched against the label.
LABEL_CUES = (
    r"名字里带有?",
    r"名字里有",
    r"名字中有",
    r"名字包含",
    r"名称包含",
    r"名称中含有?",
    r"名称里有",
    r"标题包含",
    r"标题中含有?",
    r"标题里有",
    r"标题带",
    r"名为",
    r"叫做",
    r"叫",
    r"\bcalled\b",
    r"\bnamed\b",
    r"\btitled\b",
    r"\bwhose (?:name|title) contains\b",
    r"\bwith (?:a )?(?:name|title) containing\b",
    r"\bcontaining\b",
    r"\babout\b",
)

# After a text field's name: "主题包含退款", "subject contains refund".
CONTAINS_AFTER_FIELD = (
    r"(?:里面?|中)?(?:包含|含有|带有|含|带|有|提到)|\s(?:contains?|containing|including|mentions?"
    r"|mentioning|with)\b"
)

PRONOUNS = (
    r"它们的?",
    r"它的?",
    r"这个",
    r"该",
    r"此",
    r"那个",
    r"\bit\b",
    r"\bits\b",
    r"\bthis\b",
    r"\bthat\b",
    r"\bthese\b",
)
# A pronoun standing alone (it, 它) vs one before an entity (这个项目, this project).
STANDALONE_PRONOUNS = frozenset({"它", "它的", "它们", "它们的", "it", "its"})
