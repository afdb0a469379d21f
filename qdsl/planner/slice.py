"""Bounded prompts: the slice of the catalog a question can touch, within a budget.

The question is read against the catalog (`qdsl.dsl.question.read_question`,
the reader the rule planner and the verifier share); the slice is the entity it
asks about, the entities its fields reference, entities the question or the
conversation names, and nothing else. The full catalog goes in whenever the
whole prompt fits the budget. Tokens are approximated as bytes / 4
(`approx_tokens`): no tokenizer is assumed, and CJK text counts high, so the
budget errs on the safe side.
"""

from __future__ import annotations

from collections.abc import Callable

from qdsl.dsl.catalog import Catalog
from qdsl.dsl.normalize import PlanContext
from qdsl.dsl.question import read_question
from qdsl.dsl.textnorm import normalize_text
from qdsl.planner.prompt import approx_tokens, catalog_summary

# Values shown per field once the slice has to shrink.
FEW_VALUES = 5


def touched_entities(
    question: str, catalog: Catalog, context: PlanContext | None = None
) -> list[str]:
    """The entities the question can touch: asked, referenced, named, or in context."""
    found: list[str] = []

    def add(name: str | None) -> None:
        if name is not None and name in catalog.entities and name not in found:
            found.append(name)

    context_types = [r.entity_type for r in context.referenced_objects] if context else []
    reading = read_question(question, catalog, context_entities=context_types)
    add(reading.entity)
    text = normalize_text(question)
    for name, ent in catalog.entities.items():
        words = (name, *ent.synonyms)
        if any(w and normalize_text(w) in text for w in words):
            add(name)
    for name in context_types:
        add(name)
    for name in list(found):
        for spec in catalog.entities[name].fields.values():
            if not spec.sensitive:
                add(spec.references)
    return found


def bounded_catalog_text(
    question: str,
    catalog: Catalog,
    render: Callable[[str], str],
    *,
    budget_tokens: int,
    context: PlanContext | None = None,
) -> str:
    """The catalog text whose prompt (`render(catalog_text)`) fits `budget_tokens` if
    anything does: the full catalog, else the touched slice, else that slice with
    few values per field, else the asked entity alone."""
    full = catalog_summary(catalog)
    if approx_tokens(render(full)) <= budget_tokens:
        return full
    touched = touched_entities(question, catalog, context) or list(catalog.entities)
    tries = [
        catalog_summary(catalog, touched),
        catalog_summary(catalog, touched, max_values=FEW_VALUES),
        catalog_summary(catalog, touched[:1], max_values=FEW_VALUES),
    ]
    for text in tries:
        if approx_tokens(render(text)) <= budget_tokens:
            return text
    return tries[-1]  # over budget still: the smallest honest slice
