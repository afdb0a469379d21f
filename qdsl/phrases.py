"""How entities, fields, values and conditions are named in zh and en answers.

Names come from the catalog (synonyms and aliases) so that the text the
renderer writes is text the verifier's `covers_conditions` recognises.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from qdsl.dsl.catalog import Catalog, EntitySpec, FieldSpec, rows_path
from qdsl.dsl.ir import Filter, Operator
from qdsl.verifier import Language

_CJK = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")


def detect_language(text: str) -> Language:
    """zh when the text holds any CJK ideograph, else en."""
    return "zh" if _CJK.search(text) else "en"


def has_cjk(text: str) -> bool:
    return bool(_CJK.search(text))


def _first(words: Iterable[str], *, cjk: bool) -> str | None:
    for w in words:
        if has_cjk(w) == cjk:
            return w
    return None


def entity_name(catalog: Catalog, entity_type: str, lang: Language, *, plural: bool = False) -> str:
    spec = catalog.entities.get(entity_type)
    if lang == "zh" and spec is not None:
        zh = _first(spec.synonyms, cjk=True)
        if zh:
            return zh
    # the key as words, as field names are ("upcoming visits", not "upcoming_visits")
    noun = entity_type.replace("_", " ")
    return f"{noun}s" if plural else noun


def field_name(field: FieldSpec | None, name: str, lang: Language) -> str:
    if lang == "zh" and field is not None:
        zh = _first(field.synonyms, cjk=True)
        if zh:
            return zh
    if name == "id":
        return "编号" if lang == "zh" else "id"
    return name.replace("_", " ")


def value_name(field: FieldSpec | None, value: object, lang: Language) -> str:
    """A value as the answer writes it: the canonical one plus a local alias."""
    text = _scalar(value)
    if field is None or not field.aliases:
        return text
    aliases = field.aliases.get(text)
    if aliases is None:
        return text
    if has_cjk(text) == (lang == "zh"):
        return text
    local = _first((a for a in aliases if a != text), cjk=lang == "zh")
    if local is None:
        return text
    return f"{local}（{text}）" if lang == "zh" else f"{text} ({local})"


def _scalar(value: object) -> str:
    return plain(value)


_MIDNIGHT = re.compile(r"^(\d{4}-\d{2}-\d{2})T00:00:00(?:\.0+)?(?:\+00:00|Z)?$")


def plain(value: object) -> str:
    """A value as text: 250000.0 is written 250000, a UTC midnight as its date."""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    text = str(value)
    day = _MIDNIGHT.match(text)
    return day.group(1) if day else text


_OPS_ZH: dict[Operator, str] = {
    Operator.EQUALS: "为",
    Operator.NOT_EQUALS: "不是",
    Operator.IN: "属于",
    Operator.NOT_IN: "不属于",
    Operator.EQUALS_OR_ALIAS: "为",
    Operator.CONTAINS: "包含",
    Operator.GT: "大于",
    Operator.GTE: "不少于",
    Operator.LT: "小于",
    Operator.LTE: "不超过",
}
_OPS_EN: dict[Operator, str] = {
    Operator.EQUALS: "=",
    Operator.NOT_EQUALS: "is not",
    Operator.IN: "in",
    Operator.NOT_IN: "not in",
    Operator.EQUALS_OR_ALIAS: "≈",
    Operator.CONTAINS: "contains",
    Operator.GT: ">",
    Operator.GTE: ">=",
    Operator.LT: "<",
    Operator.LTE: "<=",
}


def field_spec(entity: EntitySpec | None, name: str) -> FieldSpec | None:
    return entity.fields.get(name) if entity is not None else None


def related_label(
    catalog: Catalog, entity: EntitySpec, path: str, lang: Language
) -> tuple[FieldSpec | None, str]:
    """A `relation.field` condition's field and its words: "客户的城市", "customer city"."""
    *names, last = path.split(".")
    words: list[str] = []
    here = entity.name
    for name in names:
        step = catalog.relation_steps.get(here, {}).get(name)
        if step is None:
            return None, path
        if lang == "zh":
            words.append(_first(step.synonyms, cjk=True) or entity_name(catalog, step.target, lang))
        else:
            words.append(name)
        here = step.target
    spec = field_spec(catalog.entities.get(here), last)
    label = field_name(spec, last, lang)
    if lang == "zh":
        return spec, "的".join((*words, label))
    return spec, " ".join((*(w.replace("_", " ") for w in words), label))


def relation_words(catalog: Catalog, entity: EntitySpec, path: str, lang: Language) -> str:
    """A path of relations in words: "订单的支付", "orders payments" (a grouping by the
    related object is named so too: "按客户")."""
    words: list[str] = []
    here = entity.name
    for name in path.split("."):
        step = catalog.relation_steps.get(here, {}).get(name)
        if step is None:
            return path
        if lang == "zh":
            words.append(_first(step.synonyms, cjk=True) or entity_name(catalog, step.target, lang))
        else:
            words.append(name.replace("_", " "))
        here = step.target
    return ("的" if lang == "zh" else " ").join(words)


def related_rows(
    catalog: Catalog, entity: EntitySpec, path: str, flt: Filter, lang: Language
) -> str:
    """A filter on related rows in words: "没有支付", "there is no payment"."""
    none = flt.value is not False
    if lang == "zh":
        return ("没有" if none else "有") + relation_words(catalog, entity, path, lang)
    steps = rows_path(catalog, entity.name, path)
    if not steps:
        return path
    target = entity_name(catalog, steps[-1].target, lang)
    through = f" through {relation_words(catalog, entity, path.rsplit('.', 1)[0], lang)}"
    said = f"there is {'no' if none else 'a'} {target}"
    return said + (through if len(steps) > 1 else "")


def condition(catalog: Catalog, entity_type: str, flt: Filter, lang: Language) -> str:
    entity = catalog.entities.get(entity_type)
    if (
        entity is not None
        and flt.operator is Operator.IS_NULL
        and rows_path(catalog, entity.name, flt.field)
    ):
        return related_rows(catalog, entity, flt.field, flt, lang)
    spec = field_spec(entity, flt.field)
    label = field_name(spec, flt.field, lang)
    if "." in flt.field and entity is not None:
        spec, label = related_label(catalog, entity, flt.field, lang)
    zh = lang == "zh"
    if flt.operator is Operator.IS_NULL:
        empty = flt.value is not False
        if zh:
            return f"{label}{'为空' if empty else '不为空'}"
        return f"{label} {'is empty' if empty else 'is set'}"
    if isinstance(flt.value, bool) and flt.operator in (Operator.EQUALS, Operator.NOT_EQUALS):
        return _yes_no(label, flt.value != (flt.operator is Operator.NOT_EQUALS), zh)
    values = flt.value if isinstance(flt.value, tuple) else (flt.value,)
    shown = [value_name(spec, v, lang) for v in values]
    if flt.operator is Operator.CONTAINS and len(shown) == 1:
        # Matched as text, not as a field's value: "名称中含“风控”".
        return f"{label}中含“{shown[0]}”" if zh else f"{label} contains “{shown[0]}”"
    if flt.operator is Operator.BETWEEN and len(shown) == 2:
        lo, hi = shown
        return f"{label}介于 {lo} 和 {hi}" if zh else f"{label} between {lo} and {hi}"
    joined = ("、" if zh else ", ").join(shown)
    if zh:
        return f"{label}{_OPS_ZH.get(flt.operator, flt.operator.value)} {joined}"
    return f"{label} {_OPS_EN.get(flt.operator, flt.operator.value)} {joined}"


def _yes_no(label: str, state: bool, zh: bool) -> str:
    """A yes/no condition in the answer's words: 远程办公：否, remote = no."""
    if zh:
        return f"{label}：{'是' if state else '否'}"
    return f"{label} = {'yes' if state else 'no'}"


def conditions(
    catalog: Catalog, entity_type: str, filters: Iterable[Filter], lang: Language
) -> str:
    parts = [condition(catalog, entity_type, f, lang) for f in filters]
    return ("，".join(parts)) if lang == "zh" else " and ".join(parts)
