"""Answer text and data per contract, in the question's language.

The text names the entity and every condition and cites evidence ids inline
("[fact:12]"); `data` carries exactly the keys of the contract
(docs/python-api.md). The
renderer states only what the result holds: the verifier checks it anyway.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from qdsl.abstentions import clarification
from qdsl.dsl.catalog import EVIDENCE_PROJECTION, Catalog, EntitySpec, FieldSpec, rows_path
from qdsl.dsl.ir import Filter, Operator, Plan, QueryType
from qdsl.dsl.kinds import KindTable, kind_of
from qdsl.dsl.textnorm import normalize_text
from qdsl.executor.result import ExecutionResult, ResultRow
from qdsl.many_values import cut_of, listed, row_fields, set_difference, set_difference_text
from qdsl.phrases import (
    conditions,
    entity_name,
    field_name,
    field_spec,
    plain,
    related_label,
    relation_words,
    value_name,
)
from qdsl.superlatives import top_sentence
from qdsl.verifier import Answer, Language

_SHOWN = 5  # items named in the text; data carries them all
_MAX_CITES = 12
_EXCERPT = 200


def _cite(ids: Sequence[str]) -> str:
    return " ".join(f"[{i}]" for i in ids[:_MAX_CITES])


def _evidence_ids(rows: Sequence[ResultRow], result: ExecutionResult) -> list[str]:
    known = result.evidence_by_id()
    ids = [e for row in rows for e in row.evidence_ids if e in known]
    # Facts are the stronger evidence; objects only say the row exists.
    ids.sort(key=lambda i: known[i].kind != "fact")
    if not ids and rows:
        wanted = {(r.entity_type, r.entity_id) for r in rows}
        ids = [e.id for e in result.evidence if (e.entity_type, e.entity_id) in wanted]
    return list(dict.fromkeys(ids))[:_MAX_CITES]


def _data(value: Any) -> Any:
    """A value as answer data: a fact's values as a list."""
    return list(value) if isinstance(value, tuple) else value


def _item(row: ResultRow) -> dict[str, Any]:
    item: dict[str, Any] = {"id": row.entity_id, "label": row.label}
    item.update((k, _data(v)) for k, v in row.values.items())
    if row.facts_cut:
        item["facts_cut"] = dict(row.facts_cut)
    return item


def _entity_data(row: ResultRow, **more: Any) -> dict[str, Any]:
    """A row as a snapshot's (or finding's) data: its values, every fact's values,
    and how many values each cut fact holds."""
    out = _item(row)
    out["facts"] = {k: list(v) for k, v in row.facts.items()}
    out.update(more)
    return out


def _named(row: ResultRow) -> str:
    return f"{row.label} (#{row.entity_id})" if row.label else f"#{row.entity_id}"


def _names(rows: Sequence[ResultRow], lang: Language) -> str:
    sep = "、" if lang == "zh" else ", "
    text = sep.join(_named(r) for r in rows[:_SHOWN])
    if len(rows) > _SHOWN:
        text += " 等" if lang == "zh" else f" and {len(rows) - _SHOWN} more"
    return text


def _asked_ids(plan: Plan) -> list[str]:
    asked: list[str] = []
    for f in plan.filters:
        if f.field == "id":
            asked.extend(str(v) for v in (f.value if isinstance(f.value, tuple) else (f.value,)))
    return asked


def _in_asked_order(plan: Plan, rows: Sequence[ResultRow]) -> list[ResultRow]:
    rank = {v: i for i, v in enumerate(_asked_ids(plan))}
    return sorted(rows, key=lambda r: rank.get(r.entity_id, len(rank)))


def _scope_phrase(plan: Plan, catalog: Catalog, lang: Language) -> str:
    """The plan's project scope as the answer states it ("项目 64 内", " within project 64")."""
    scoped, scope = plan.scope.project_id, catalog.scope
    if scoped is None or scope is None:
        return ""
    name = entity_name(catalog, scope.entity, lang)
    return f"{name} {scoped} 内" if lang == "zh" else f" within {name} {scoped}"


def _names_label(f: Filter, label: str) -> bool:
    return f.field == label and f.operator is Operator.EQUALS


class _Ctx:
    def __init__(self, plan: Plan, result: ExecutionResult, lang: Language, catalog: Catalog):
        self.plan, self.result, self.lang, self.catalog = plan, result, lang, catalog
        self.zh = lang == "zh"
        self.one = entity_name(catalog, plan.entity_type, lang)
        self.many = entity_name(catalog, plan.entity_type, lang, plural=True)
        filters = plan.filters
        if kind_of(plan.query_type).policy.names_subject:
            # The head already names the object ("项目 64（title）"): "where id = 64" or
            # "where <label> = title" would repeat it.
            label = catalog.entities[plan.entity_type].label
            filters = tuple(f for f in filters if f.field != "id" and not _names_label(f, label))
        self.conds = conditions(catalog, plan.entity_type, filters, lang)
        self.scope = _scope_phrase(plan, catalog, lang)

    def where(self) -> str:
        if not self.conds:
            return f"（{self.scope}）" if self.zh and self.scope else self.scope
        if self.zh:
            return f"（{self.conds}；{self.scope}）" if self.scope else f"（{self.conds}）"
        return f" where {self.conds}{self.scope}"

    @property
    def spec(self) -> EntitySpec | None:
        return self.catalog.entities.get(self.plan.entity_type)

    def field(self, name: str) -> str:
        if self.spec is not None and rows_path(self.catalog, self.spec.name, name):
            return relation_words(self.catalog, self.spec, name, self.lang)  # "按客户"
        if "." in name and self.spec is not None:  # a related field: "customer city"
            return related_label(self.catalog, self.spec, name, self.lang)[1]
        return field_name(field_spec(self.spec, name), name, self.lang)

    def shown(self, value: Any) -> str:
        return shown(value, self.zh)

    def cite(self, ids: Sequence[str]) -> str:
        return _cite(ids)

    def value_shown(self, field: str, value: Any) -> str:
        return value_name(field_spec(self.spec, field), value, self.lang)

    def evidence_ids(self) -> list[str]:
        return _evidence_ids(self.result.rows, self.result)

    def value(self, name: str, value: Any, row: ResultRow) -> str:
        """A stated value: a fact's values all listed, with their number when cut."""
        if isinstance(value, tuple):
            stated = [shown(v, self.zh) for v in value]
            return listed(stated, self.lang, cut_of(self.spec, row, name))
        return shown(value, self.zh)


def _existence(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    rows = c.result.rows
    n = c.result.count if c.result.count is not None else len(rows)
    matches = [{"id": r.entity_id, "label": r.label} for r in rows]
    at_least = c.result.truncated and c.result.count is None
    if n == 0:
        text = (
            f"没有。当前没有找到{c.one}{c.where()}。"
            if c.zh
            else f"No. No {c.many} found{c.where()}."
        )
        return text, {"exists": False, "matches": []}, []
    cites = _evidence_ids(rows, c.result)
    if c.zh:
        found = f"至少 {n}" if at_least else f"{n}"
        text = (
            f"有。找到 {found} 个{c.one}{c.where()}：{_names(rows, c.lang)}。依据：{_cite(cites)}"
        )
    else:
        noun = c.one if n == 1 else c.many
        found = f"at least {n}" if at_least else f"{n}"
        names = _names(rows, c.lang)
        text = f"Yes. Found {found} {noun}{c.where()}: {names}. Evidence: {_cite(cites)}"
    return text, {"exists": True, "matches": matches}, cites


def _count(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    n = c.result.count if c.result.count is not None else len(c.result.rows)
    if c.zh:
        text = f"共有 {n} 个{c.one}{c.where()}。"
    else:
        text = f"There {'is' if n == 1 else 'are'} {n} {c.one if n == 1 else c.many}{c.where()}."
    return text, {"count": n}, []


def _list(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    rows = c.result.rows
    total = c.result.count if c.result.count is not None else len(rows)
    truncated = c.result.truncated or total > len(rows)
    data = {"items": [_item(r) for r in rows], "total": total, "truncated": truncated}
    cites = _evidence_ids(rows, c.result) if c.plan.filters else []
    tail = f" {_cite(cites)}" if cites else ""
    top = (
        top_sentence(
            c.plan,
            c.spec,
            rows,
            named=_named,
            one=c.one,
            many=c.many,
            total=total,
            where=c.where(),
            zh=c.zh,
        )
        if rows
        else None
    )
    if not rows:
        text = f"没有找到{c.one}{c.where()}。" if c.zh else f"No {c.many} found{c.where()}."
    elif top is not None:
        text = f"{top}{tail}"
    elif c.zh:
        shown = f"，列出 {len(rows)} 个" if truncated else ""
        text = f"符合条件的{c.one}共 {total} 个{c.where()}{shown}：{_listed(c, rows)}。{tail}"
    else:
        shown = f", showing {len(rows)}" if truncated else ""
        text = f"{total} {c.many} found{c.where()}{shown}: {_listed(c, rows)}.{tail}"
    return text.strip(), data, cites


def _asked_fields(c: _Ctx) -> list[str]:
    """The fields a plan selects beyond the entity's defaults: the ones the question
    asked to see ("with their salary", "each order's customer city")."""
    spec = c.spec
    if spec is None:
        return []
    usual = {*spec.default_projection, spec.id, spec.label}
    return [n for n in c.plan.projection if n not in usual and n != EVIDENCE_PROJECTION]


def _listed(c: _Ctx, rows: Sequence[ResultRow]) -> str:
    """The rows' names, each with the values of the asked fields it holds."""
    asked = _asked_fields(c)
    if not asked:
        return _names(rows, c.lang)
    colon, sep = ("：", "；") if c.zh else (": ", "; ")
    items = []
    for r in rows[:_SHOWN]:
        stated = row_fields(c.spec, r)
        held = [(n, stated.get(n)) for n in asked]
        said = sep.join(
            f"{c.field(n)}{colon}{c.value(n, v, r)}" for n, v in held if v not in (None, ())
        )
        items.append(f"{_named(r)}（{said}）" if c.zh else f"{_named(r)} ({said})")
    text = ("、" if c.zh else ", ").join(items)
    if len(rows) > _SHOWN:
        text += " 等" if c.zh else f" and {len(rows) - _SHOWN} more"
    return text


def shown(value: object, zh: bool) -> str:
    """A value as an answer writes it: a yes/no in the answer's language (是/否,
    yes/no), a number without a trailing .0, a date as a date (`plain`)."""
    if isinstance(value, bool):
        return ("是" if value else "否") if zh else ("yes" if value else "no")
    return plain(value)


def _attributes(c: _Ctx, row: ResultRow) -> str:
    label_field = (
        c.catalog.entities[c.plan.entity_type].label
        if c.plan.entity_type in c.catalog.entities
        else None
    )
    # The id and label are already in the head ("项目 64（title）"); the fields the
    # plan selects beyond the entity's defaults come first: "What is Alice Wang's
    # salary?" is answered by the salary.
    stated = row_fields(c.spec, row)
    usual = set(c.spec.default_projection) if c.spec is not None else set()
    asked = {k: stated[k] for k in c.plan.projection if k in stated and k not in usual}
    pairs = {k: v for k, v in {**asked, **stated}.items() if k != label_field}
    sep = "；" if c.zh else "; "
    colon = "：" if c.zh else ": "
    return sep.join(
        f"{c.field(k)}{colon}{c.value(k, v, row)}" for k, v in pairs.items() if v not in (None, ())
    )


def _snapshot(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    rows = c.result.rows
    if not rows:
        asked = "、".join(_asked_ids(c.plan)) if c.zh else ", ".join(_asked_ids(c.plan))
        head = f"{c.one} {asked}".strip()
        text = f"没有找到{head}{c.where()}。" if c.zh else f"No {head} found{c.where()}."
        return text, {"entity": None}, []
    row = rows[0]
    cites = _evidence_ids([row], c.result)
    entity = _entity_data(row)
    head = f"{c.one} {row.entity_id}" + (f"（{row.label}）" if c.zh else f" ({row.label})")
    attrs = _attributes(c, row)
    if c.zh:
        text = f"{head}{c.where()}：{attrs}。依据：{_cite(cites)}"
    else:
        text = f"{head[0].upper()}{head[1:]}{c.where()}: {attrs}. Evidence: {_cite(cites)}"
    return text, {"entity": entity}, cites


def _explain(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    passages: list[dict[str, Any]] = []
    lines: list[str] = []
    spec = c.spec
    quoted = spec.passage_column if spec is not None else None
    part = spec.passage_section if spec is not None else None
    for row in c.result.rows:
        ids = _evidence_ids([row], c.result)
        body = str((row.values.get(quoted) if quoted else None) or row.label or "")
        excerpt = body[:_EXCERPT] + ("…" if len(body) > _EXCERPT else "")
        section = row.values.get(part) if part else None
        passages.append(
            {
                "id": row.entity_id,
                "title": row.label,
                "section": section,
                "text": excerpt,
                "evidence": ids,
            }
        )
        where = f" · {section}" if section else ""
        lines.append(f"- {row.label}{where}: {excerpt} {_cite(ids)}".rstrip())
    cites = list(dict.fromkeys(i for p in passages for i in p["evidence"]))
    if c.zh:
        head = f"根据 {len(passages)} 篇{c.one}{c.where()}："
    else:
        head = f"From {len(passages)} {c.one if len(passages) == 1 else c.many}{c.where()}:"
    return "\n".join([head, *lines]), {"passages": passages, "citations": cites}, cites


def _diagnose(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    findings: list[dict[str, Any]] = []
    lines: list[str] = []
    for row in c.result.rows:
        ids = _evidence_ids([row], c.result)
        findings.append(_entity_data(row, evidence=ids))
        attrs = _attributes(c, row)
        lines.append(
            f"{c.one} {row.entity_id}（{row.label}）：{attrs}。{_cite(ids)}"
            if c.zh
            else f"{c.one} {row.entity_id} ({row.label}): {attrs}. {_cite(ids)}"
        )
    cites = list(dict.fromkeys(i for f in findings for i in f["evidence"]))
    head = f"诊断{c.where()}：" if c.zh else f"Diagnosis{c.where()}:"
    return "\n".join([head, *lines]), {"findings": findings}, cites


def _meaning(spec: FieldSpec | None, value: Any, *, norm: bool = False) -> str:
    """What a compared value means: two spellings of one alias group are one value
    ("US stocks" and "美股" are no difference); `norm`: other values normalized (a
    fact's values, stored normalized)."""
    group = spec.alias_group(str(value)) if spec is not None and value is not None else None
    if group is not None:
        return f"alias:{group[0]}"
    return normalize_text(str(value)) if norm else str(value)


def _compare(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
    rows = _in_asked_order(c.plan, c.result.rows)
    if not rows:
        asked = ("、" if c.zh else ", ").join(_asked_ids(c.plan))
        text = f"没有找到{c.one} {asked}。" if c.zh else f"No {c.one} {asked} found."
        return text, {"subjects": [], "differences": []}, []
    subjects = [{"id": r.entity_id, "label": r.label} for r in rows]
    stated = {r.entity_id: row_fields(c.spec, r) for r in rows}
    fields: list[str] = list(dict.fromkeys(k for s in stated.values() for k in s))
    differences: list[dict[str, Any]] = []
    parts = []
    for name in fields:
        per = {eid: s.get(name) for eid, s in stated.items()}
        if any(isinstance(v, tuple) for v in per.values()):
            # a many-valued fact: sets, not their first values, are compared
            cut = {r.entity_id: n for r in rows if (n := cut_of(c.spec, r, name)) is not None}
            spec = field_spec(c.spec, name)
            found = set_difference(
                {k: v or () for k, v in per.items()},
                cut,
                key=lambda v: _meaning(spec, v, norm=True),
            )
            if found is not None:
                differences.append({"field": name, **found})
                body = set_difference_text(found, c.lang)
                parts.append(f"{c.field(name)}（{body}）" if c.zh else f"{c.field(name)} ({body})")
            continue
        values = {k: (plain(v) if isinstance(v, float) else v) for k, v in per.items()}
        if len({_meaning(field_spec(c.spec, name), v) for v in values.values()}) > 1:
            differences.append({"field": name, "values": values})
            sep = "，" if c.zh else ", "
            vals = sep.join(f"{k}: {shown(v, c.zh)}" for k, v in values.items())
            parts.append(f"{c.field(name)}（{vals}）" if c.zh else f"{c.field(name)} ({vals})")
    cites = _evidence_ids(rows, c.result)
    ids = ("、" if c.zh else ", ").join(r.entity_id for r in rows)
    missing = [i for i in _asked_ids(c.plan) if i not in {r.entity_id for r in rows}]
    if missing:
        gone = ("、" if c.zh else ", ").join(missing)
        parts.append(f"未找到 {c.one} {gone}" if c.zh else f"{c.one} {gone} not found")
    if c.zh:
        body = "；".join(parts) if parts else "没有发现差异"
        text = f"{c.one} {ids} 的区别：{body}。依据：{_cite(cites)}"
    else:
        body = "; ".join(parts) if parts else "no differences found"
        text = f"Comparing {c.one} {ids}: {body}. Evidence: {_cite(cites)}"
    return text, {"subjects": subjects, "differences": differences}, cites


Renderer = Callable[[_Ctx], tuple[str, dict[str, Any], list[str]]]

# The built-in kinds' renderers: one per executable query type without a renderer
# of its own (`QueryKind.render`); tests/test_query_kinds.py proves none is missing.
RENDERERS: KindTable[Renderer] = KindTable(
    "renderer", needs=lambda k: k.executable and k.render is None
)
RENDERERS.add(QueryType.EXISTENCE, _existence)
RENDERERS.add(QueryType.COUNT, _count)
RENDERERS.add(QueryType.LIST, _list)
RENDERERS.add(QueryType.STATUS, _snapshot)
RENDERERS.add(QueryType.EXPLAIN, _explain)
RENDERERS.add(QueryType.DIAGNOSE, _diagnose)
RENDERERS.add(QueryType.COMPARE, _compare)


def render(plan: Plan, result: ExecutionResult, *, language: Language, catalog: Catalog) -> Answer:
    """The answer to `plan` from `result`, per the plan's contract."""
    kind = kind_of(plan.query_type)
    if not kind.executable:
        return clarification(language)
    ctx = _Ctx(plan, result, language, catalog)
    own = kind.render
    text, data, cites = own(ctx) if own is not None else RENDERERS[plan.query_type](ctx)
    return Answer(
        contract=kind.contract,
        text=text,
        data=data,
        cited_evidence=tuple(cites),
        language=language,
    )
