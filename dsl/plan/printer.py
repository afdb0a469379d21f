"""IR -> canonical plan text: ``to_text``.

The output parses back (``dsl.plan.parser.parse_text``) to an equal plan: every
field is printed, clauses come in one fixed order, defaults are left out,
strings are JSON-escaped and enum members are written by their canonical
value. ``qdsl fmt`` prints this.
"""

from __future__ import annotations

import json
import math
import re

from qdsl.dsl.errors import PlanError
from qdsl.dsl.ir import (
    LIST_OPERATORS,
    Filter,
    Grouping,
    Measure,
    ObjectRef,
    Operator,
    Plan,
    RetrievalPolicy,
    Scalar,
    Sort,
    ValueSource,
)

NAME_RE = re.compile(r"[^\W\d]\w*")
_DIGITS_RE = re.compile(r"[0-9]+")

_SYMBOLS: dict[Operator, str] = {
    Operator.EQUALS: "=",
    Operator.NOT_EQUALS: "!=",
    Operator.EQUALS_OR_ALIAS: "~=",
    Operator.CONTAINS: "contains",
    Operator.GT: ">",
    Operator.GTE: ">=",
    Operator.LT: "<",
    Operator.LTE: "<=",
}


def _unprintable(what: str, hint: str) -> PlanError:
    return PlanError("unprintable_plan", f"cannot print {what}", hint=hint)


def name(text: str) -> str:
    """An identifier as written in plan text."""
    if not NAME_RE.fullmatch(text):
        raise _unprintable(
            f"the name {text!r}", "names are identifiers: a letter, then letters, digits or _"
        )
    return text


def string(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def ident(text: str) -> str:
    """An id or scope value: bare when it reads back unchanged, else quoted."""
    if _DIGITS_RE.fullmatch(text) or NAME_RE.fullmatch(text):
        return text
    return string(text)


def scalar(value: Scalar) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        if not math.isfinite(value):
            raise _unprintable(f"the number {value!r}", "plan numbers are finite")
        return repr(value)
    if isinstance(value, str):
        return string(value)
    raise _unprintable(f"the value {value!r}", "values are strings, numbers or true/false")


def condition(item: Filter) -> str:
    op, value = item.operator, item.value
    if op in _SYMBOLS and not isinstance(value, tuple | type(None)):
        return f"{_SYMBOLS[op]} {scalar(value)}"
    if op in LIST_OPERATORS and isinstance(value, tuple) and value:
        words = "in" if op is Operator.IN else "not in"
        return f"{words} ({', '.join(scalar(v) for v in value)})"
    if op is Operator.BETWEEN and isinstance(value, tuple) and len(value) == 2:
        return f"between {scalar(value[0])} and {scalar(value[1])}"
    if op is Operator.IS_NULL and isinstance(value, bool):
        return "is null" if value else "is not null"
    raise _unprintable(
        f"{op.value} with the value {value!r}",
        "in/not_in take a non-empty list, between a pair, is_null true/false, the rest a scalar",
    )


def path_text(field: str) -> str:
    """A field as written: a related one is a path of names (`customer.city`)."""
    return ".".join(name(part) for part in field.split("."))


def filter_text(item: Filter) -> str:
    text = f"{path_text(item.field)} {condition(item)}"
    if item.value_source is not ValueSource.USER_TEXT:
        text += f" from {item.value_source.value}"
    return text


def sort_text(item: Sort) -> str:
    return f"{name(item.field)} {item.direction.value}"


def grouping_text(item: Grouping) -> str:
    field = path_text(item.field)
    return field if item.grain is None else f"{field} {item.grain.value}"


def object_ref_text(ref: ObjectRef) -> str:
    return f"{name(ref.entity_type)} {ident(ref.id)}"


def retrieval_text(policy: RetrievalPolicy) -> str | None:
    if policy == RetrievalPolicy():
        return None
    items = ["facts_first" if policy.facts_first else "no_facts_first"]
    if policy.allow_fallback_text:
        items.append("fallback_text")
    if policy.require_fresh_fact:
        items.append("require_fresh_fact")
    if policy.freshness_days is not None:
        items.append(f"freshness_days {policy.freshness_days}")
    return ", ".join(items)


def measure_text(measure: Measure) -> str:
    if measure.name is not None:
        return name(measure.name)
    assert measure.function is not None  # the IR holds a name or a function
    field = "" if measure.field is None else name(measure.field)
    return f"{measure.function.value}({field})"


def _scope_lines(plan: Plan) -> list[str]:
    scope = plan.scope
    lines = []
    if scope.tenant_id is not None:
        lines.append(f"tenant {ident(scope.tenant_id)}")
    if scope.project_id is not None:
        lines.append(f"project {ident(scope.project_id)}")
    if scope.referenced_objects:
        lines.append("about " + ", ".join(object_ref_text(r) for r in scope.referenced_objects))
    return lines


def _query_lines(plan: Plan) -> list[str]:
    """Contract, filters, projection, sort, grouping and limit."""
    lines = []
    if plan.answer_contract is not None:
        lines.append(f"contract {plan.answer_contract.value}")
    if plan.filters:
        lines.append("where " + "\n  and ".join(filter_text(f) for f in plan.filters))
    if plan.projection:
        lines.append("select " + ", ".join(path_text(n) for n in plan.projection))
    if plan.sort:
        lines.append("order by " + ", ".join(sort_text(s) for s in plan.sort))
    if plan.group_by:
        lines.append("group by " + ", ".join(grouping_text(g) for g in plan.group_by))
    if plan.limit is not None:
        lines.append(f"limit {plan.limit}")
    return lines


def to_text(plan: Plan) -> str:
    """The canonical text of `plan`, one clause per line, ending in a newline."""
    lines = [f"plan {plan.plan_version}", f"{plan.query_type.value} {name(plan.entity_type)}"]
    lines += _query_lines(plan)
    if plan.measure is not None:
        lines.append(f"measure {measure_text(plan.measure)}")
    lines += _scope_lines(plan)
    retrieval = retrieval_text(plan.retrieval_policy)
    if retrieval is not None:
        lines.append(f"retrieval {retrieval}")
    if plan.verifier_checks:
        lines.append("verify " + ", ".join(c.value for c in plan.verifier_checks))
    if plan.clarify_on_empty:
        lines.append("on_empty clarify")
    return "\n".join(lines) + "\n"
