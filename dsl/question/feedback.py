"""The sentence a problem of a reading becomes, in the question's language.

It names the words that are not applied and the fields that could carry them,
so a planner that takes advice (an LLM) can fix its plan and a user can
rephrase: "“欧洲” is not applied: no field or value of project matches it;
fields that could: market_theme (A股, 港股, 美股), …".
"""

from __future__ import annotations

from collections.abc import Iterable

from qdsl.dsl.question.model import Language, Problem

_EN = {
    "residual": "“{t}” is not applied: no field or value of {e} matches it",
    "ambiguous": "“{t}” is ambiguous: it matches values of several fields of {e}",
    "not_allowed": "“{t}” cannot be applied as asked: the field does not allow it",
    "number": "“{t}” is not applied: no number field of {e} is named",
    "date": "“{t}” is not applied: no date field of {e} is named",
    "sort": "“{t}” is not applied: nothing of {e} can be sorted that way",
    "comparison": "“{t}” is not applied: no number follows it",
    "negation": "“{t}” is not applied: it negates nothing the catalog knows",
    "other_entity": "“{t}” is not applied: it belongs to another entity than {e}",
    "relation_paths": "“{t}” is ambiguous: several relations of {e} lead to it; say which one",
    "too_far": "“{t}” is not applied: it belongs to an entity more than two relations away"
    " from {e}",
    "compare": "a comparison needs two or more {e} objects named by id",
    "status": "which {e} is meant? name it by its id",
    "field": "“{t}” is not applied: a field alone states no condition here",
    "excluded": "“{t}” cannot be excluded as asked: the field does not allow it",
    "verb": "“{t}” is ambiguous: a verb here, or the value of a field of {e}? say which",
    "both_states": "“{t}” states both yes and no of one field of {e}: say which one",
    "sum": "“{t}” asks for a total (a sum), which cannot be answered here: name a field of {e}"
    " the catalog lets be summed, or ask how many {e} there are, or which ones",
    "average": "“{t}” asks for an average, which cannot be answered here: name a field of {e}"
    " the catalog lets be averaged, or ask how many {e} there are, or which ones",
    "max": "“{t}” asks for the highest value, which cannot be answered here: name a field of {e}"
    " whose maximum the catalog allows, or ask which {e} has the highest",
    "min": "“{t}” asks for the lowest value, which cannot be answered here: name a field of {e}"
    " whose minimum the catalog allows, or ask which {e} has the lowest",
    "count_distinct": "“{t}” asks how many distinct values, which cannot be answered here:"
    " name a field of {e} whose distinct values the catalog lets be counted",
    "measure": "“{t}” names a measure that cannot be answered as asked: ask for it alone,"
    " of the entity that declares it",
    "breakdown": "“{t}” asks for one answer per group, which cannot be answered yet: ask"
    " about one group at a time",
    "grouping": "“{t}” asks for one answer per value of a field, which cannot be answered"
    " yet: ask about one value at a time",
}
_ZH = {
    "residual": "“{t}”未被应用：{e}没有字段或取值与之匹配",
    "ambiguous": "“{t}”有歧义：它匹配{e}的多个字段的取值",
    "not_allowed": "“{t}”无法按所问应用：该字段不支持这种条件",
    "number": "“{t}”未被应用：没有指明{e}的数值字段",
    "date": "“{t}”未被应用：没有指明{e}的日期字段",
    "sort": "“{t}”未被应用：{e}没有可以这样排序的字段",
    "comparison": "“{t}”未被应用：后面没有数值",
    "negation": "“{t}”未被应用：它否定的内容目录中没有",
    "other_entity": "“{t}”未被应用：它属于{e}以外的对象",
    "relation_paths": "“{t}”有歧义：{e}有多条关系通向它，请说明是哪一条",
    "too_far": "“{t}”未被应用：它所属的对象与{e}之间隔了两层以上的关系",
    "compare": "比较需要按编号指明两个或更多{e}",
    "status": "请指明是哪个{e}（编号）",
    "field": "“{t}”未被应用：单独的字段在这里不构成条件",
    "excluded": "“{t}”无法按所问排除：该字段不支持",
    "verb": "“{t}”有歧义：是动词，还是{e}某个字段的取值？请说明",
    "both_states": "“{t}”对{e}的同一个是/否字段既说是又说否：请说明是哪一个",
    "sum": "“{t}”要求求和（合计），这里无法回答：请指明{e}可以求和的字段，"
    "或者问有多少个{e}、有哪些{e}",
    "average": "“{t}”要求求平均值，这里无法回答：请指明{e}可以求平均的字段，"
    "或者问有多少个{e}、有哪些{e}",
    "max": "“{t}”要求求最大值，这里无法回答：请指明{e}可以求最大值的字段，或者问哪个{e}最高",
    "min": "“{t}”要求求最小值，这里无法回答：请指明{e}可以求最小值的字段，或者问哪个{e}最低",
    "count_distinct": "“{t}”要求统计不同取值的个数，这里无法回答：请指明{e}可以这样统计的字段",
    "measure": "“{t}”指的度量无法按所问回答：请单独问它，并问声明它的对象",
    "breakdown": "“{t}”要求按组分别作答，目前还无法回答：请一次只问一个分组",
    "grouping": "“{t}”要求按字段的每个取值分别作答，目前还无法回答：请一次只问一个取值",
}


def problem_sentence(p: Problem, entity: str | None, language: Language) -> str:
    table = _ZH if language == "zh" else _EN
    key = p.detail if p.detail in table else p.reason
    key = key if key in table else "residual"
    ent = entity or ("数据" if language == "zh" else "the catalog")
    text = table[key].format(t=p.text, e=ent)
    if p.could:
        joined = ("、" if language == "zh" else ", ").join(p.could)
        if p.reason == "unsupported":  # the fields it would apply to, not a fix
            text += f"（涉及字段：{joined}）" if language == "zh" else f" (fields: {joined})"
        else:
            text += (
                f"；可以承载它的字段：{joined}"
                if language == "zh"
                else f"; fields that could: {joined}"
            )
    return text


def problems_text(problems: Iterable[Problem], entity: str | None, language: Language) -> str:
    sep = "。" if language == "zh" else ". "
    sentences = [problem_sentence(p, entity, language) for p in problems]
    return sep.join(sentences) + ("。" if language == "zh" and sentences else "")
