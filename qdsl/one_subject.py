"""A snapshot is of one object: a plan that finds several asks which one.

"What is Alice Wang's salary?" names the employee by a label that two of them
may bear; a careless plan may name one by a value many share. Answering with
the first row found would be an answer beside the question (another object's
salary), so when a snapshot's plan names its object by anything but its ids and
the execution finds more than one, the answer asks which one, naming them.
"""

from __future__ import annotations

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.ir import Plan
from qdsl.dsl.kinds import kind_of
from qdsl.executor.result import ExecutionResult
from qdsl.phrases import entity_name
from qdsl.verifier import Language

# candidates named in the question back; the count says how many there are
_NAMED = 5


def several_subjects(
    plan: Plan, result: ExecutionResult, catalog: Catalog, lang: Language
) -> str | None:
    """The sentence asking which object was meant, or None when the plan is answered."""
    template = kind_of(plan.query_type).template
    spec = catalog.entities.get(plan.entity_type)
    if template is None or not template.snapshot or spec is None or len(result.rows) < 2:
        return None
    if any(f.field == spec.id for f in plan.filters):
        return None  # the objects were named by id: each is the one asked for
    n = max(len(result.rows), result.count or 0)
    names = [
        f"{r.entity_id}（{r.label}）" if lang == "zh" else f"{r.entity_id} ({r.label})"
        for r in result.rows[:_NAMED]
    ]
    if lang == "zh":
        one = entity_name(catalog, plan.entity_type, lang)
        more = " 等" if n > len(names) else ""
        return f"有 {n} 个{one}符合：{'、'.join(names)}{more}。请指明是哪一个（例如给出编号）。"
    many = entity_name(catalog, plan.entity_type, lang, plural=True)
    more = f" and {n - len(names)} more" if n > len(names) else ""
    return f"{n} {many} match: {', '.join(names)}{more}. Which one do you mean (its id)?"
