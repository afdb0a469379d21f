"""The LLM planner's prompt: the plan language, the catalog, the question.

The model sees either the Lark grammar (text plans) or the JSON Schema (JSON
plans) and only the catalog's non-sensitive names. It is told to write a plan,
never SQL and never an answer.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Collection
from typing import Any, Literal

from qdsl.dsl.catalog import Catalog, FieldSpec, MeasureSpec
from qdsl.dsl.errors import QdslError
from qdsl.dsl.kinds import KINDS
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.operators import value_shapes

PlanForm = Literal["text", "json"]

_RULES_TEMPLATE = """\
You translate one question about a tenant's internal data into ONE Query DSL plan.
Rules:
- Output the plan only: no SQL, no prose, no answer to the question.
{kinds}
- An existence question is never a count plan. Keep every condition the question states.
- A bool field is a condition: "remote" is `remote = true`, "not remote" `remote = false`.
- An aggregate states its measure: `aggregate <entity> ... measure avg(<field>)` (sum, avg,
  min, max or count_distinct of a field listing it in its aggregations; count() counts
  rows) or `measure <name>` of a measure the catalog declares; the highest value asked
  as a value is max, "which one has the highest" a sorted list.
- A count or a measure per group (per / by <field>, 每个, 各, 按, monthly) is a breakdown:
  `breakdown <entity> [measure sum(<field>)] group by <field>` (a date field by a grain:
  `<field> month`; a many_to_one `<relation>.<field>`, or `<relation>` for one group per
  related object); `limit N` keeps the N largest groups.
- Use only the entities, fields, operators and values listed in the catalog below.
- A condition on a related entity names its relation, never a table or a key:
  `<relation>.<field>` (e.g. orders of customers in a city: the order's customer
  relation, then the customer's field), at most two relations deep; `<relation> is null`
  is "with no related row". `select` may name one too (each order's customer city),
  across many_to_one relations only.
{values}
- Never set a tenant: the caller binds it."""


def _kinds_rule() -> str:
    """The query types an LLM may choose, each with what it answers (`dsl.kinds`)."""
    asked = ", ".join(f"{qt.value} ({k.intent})" for qt, k in KINDS.items())
    return textwrap.fill(
        f"- Choose query_type by what is asked: {asked}.", width=88, subsequent_indent="  "
    )


_RULES = _RULES_TEMPLATE.format(
    kinds=_kinds_rule(),
    values=textwrap.fill(f"- A filter's value: {value_shapes()}", width=88, subsequent_indent="  "),
)


def approx_tokens(text: str) -> int:
    """Tokens as bytes / 4 (no tokenizer is assumed; CJK text counts high, safely)."""
    return (len(text.encode("utf-8")) + 3) // 4


def _field_line(fname: str, spec: FieldSpec, max_values: int | None) -> str:
    ops = ", ".join(o.value for o in spec.operators)
    extra = ""
    if spec.values:
        shown = spec.values if max_values is None else spec.values[:max_values]
        more = ", ..." if len(shown) < len(spec.values) else ""
        extra += f"; values: {', '.join(shown)}{more}"
    if spec.aliases and max_values is None:
        groups = "; ".join(f"{k} = {' / '.join(v)}" for k, v in spec.aliases.items())
        extra += f"; aliases: {groups}"
    if spec.references:
        extra += f"; references {spec.references}"
    if spec.aggregations:
        extra += f"; aggregations: {', '.join(a.value for a in spec.aggregations)}"
    if spec.grains:
        extra += f"; grains: {', '.join(g.value for g in spec.grains)}"
    return f"  field {fname} ({spec.type.value}; operators: {ops}{extra})"


def _aggregate(m: MeasureSpec) -> str:
    function = m.function.value if m.function is not None else "?"
    over = f"{m.field} × {m.times}" if m.times is not None else m.field or ""
    return f"{function}({over})"


def catalog_summary(
    catalog: Catalog,
    entities: Collection[str] | None = None,
    *,
    max_values: int | None = None,
) -> str:
    """The catalog's non-sensitive names; only `entities` when given, in catalog order."""
    lines: list[str] = []
    for name, ent in catalog.entities.items():
        if entities is not None and name not in entities:
            continue
        kinds = ", ".join(q.value for q in ent.query_types)
        words = ", ".join(ent.synonyms)
        lines.append(f"entity {name} (query types: {kinds}; users say: {words})")
        lines.append(f"  id field: id; label field: {ent.label}")
        for fname, spec in ent.fields.items():
            if not spec.sensitive:
                lines.append(_field_line(fname, spec, max_values))
        for mname, m in ent.measures.items():
            what = f"{m.numerator} / {m.denominator}" if m.is_ratio else _aggregate(m)
            said = f"; users say: {', '.join(m.synonyms)}" if m.synonyms else ""
            lines.append(f"  measure {mname} ({what}{said})")
        for rname, step in catalog.relation_steps.get(name, {}).items():
            said = f"; users say: {', '.join(step.synonyms)}" if step.synonyms else ""
            lines.append(f"  relation {rname} -> {step.target} ({step.cardinality.value}{said})")
    return "\n".join(lines)


def _language(form: PlanForm, schema_attached: bool = False) -> str:
    if form == "json" and schema_attached:
        return (
            "Write the plan as one JSON object; the request carries its JSON Schema "
            "(this catalog's entity, field and operator names)."
        )
    if form == "json":
        from qdsl.dsl.plan.schema import plan_json_schema

        schema = json.dumps(plan_json_schema(), ensure_ascii=False, separators=(",", ":"))
        return f"Write the plan as one JSON object valid under this JSON Schema:\n{schema}"
    from qdsl.dsl.plan.parser import grammar_text

    # Placeholders, not names: a deployment's model must not copy another catalog's words.
    example = 'count <entity> where <field> = "<value>"'
    return (
        "Write the plan in the text form defined by this Lark grammar "
        f"(only the `<query_type> <entity>` line is required, e.g. `{example}`):\n"
        f"{grammar_text()}"
    )


def _context(context: PlanContext | None) -> str:
    if context is None:
        return ""
    parts = []
    if context.project_id:
        # qdsl scopes the plan itself (dsl.normalize.scope.bind_scope): a model
        # writing the scope would also write it where the catalog cannot apply it
        parts.append(
            f"current project: {context.project_id} (qdsl applies it; write no project clause)"
        )
    if context.thread_anchor:
        parts.append(f"thread anchor: {context.thread_anchor}")
    for ref in context.referenced_objects:
        parts.append(f"referenced: {ref.entity_type} {ref.id}")
    return ("Conversation context: " + "; ".join(parts) + "\n") if parts else ""


def build_prompt(
    question: str,
    catalog: Catalog,
    *,
    form: PlanForm = "text",
    context: PlanContext | None = None,
    feedback: str | None = None,
    catalog_text: str | None = None,
    schema_attached: bool = False,
) -> str:
    """The first prompt; `catalog_text` replaces the full catalog (a bounded slice)."""
    contracts = ", ".join(f"{q.value} -> {k.contract.value}" for q, k in KINDS.items())
    sections = [
        _RULES,
        f"Answer contracts: {contracts}",
        _language(form, schema_attached),
        "Catalog:\n" + (catalog_text if catalog_text is not None else catalog_summary(catalog)),
        _context(context) + f"Question: {question}",
    ]
    if feedback:
        sections.append(
            "A previous plan for this question was refused by the answer verifier "
            "(question_covered names the words of the question the plan did not apply "
            "and the fields that could carry them):\n"
            f"{feedback}\nWrite a plan that applies every condition the question states."
        )
    return "\n\n".join(s for s in sections if s)


def _position(details: dict[str, Any]) -> str:
    parts = []
    if details.get("path"):
        parts.append(f"at {details['path']}")
    if details.get("line") is not None:
        parts.append(f"line {details['line']}, column {details.get('column')}")
    return (" (" + ", ".join(parts) + ")") if parts else ""


def repair_prompt(base: str, output: str, error: QdslError) -> str:
    """The first prompt again, the refused plan, and the typed error: code, position, hint."""
    fix = f"\nhint: {error.hint}" if error.hint else ""
    return (
        f"{base}\n\nYour previous plan was:\n{output}\n\n"
        f"It was refused with error {error.code}{_position(error.details)}: "
        f"{error.message}{fix}\n"
        "Write a corrected plan. Output the plan only."
    )
