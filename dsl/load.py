"""One entry for a plan in either form: ``load_plan``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.ir import Plan
from qdsl.dsl.json_form import parse_json
from qdsl.dsl.limits import check_plan_limits, check_text_size, limits
from qdsl.dsl.parser import parse_text

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog


def is_json_plan(source: str) -> bool:
    """A plan is JSON when its first character (after a BOM and whitespace) is ``{``."""
    return source.removeprefix("\ufeff").lstrip().startswith("{")


def load_plan(source: str, *, catalog: Catalog | None = None) -> Plan:
    """Parse `source` as a JSON plan if it starts with ``{``, else as plan text.

    The plan's size is bounded before parsing and its shape (filters, lists,
    values) after (`qdsl.dsl.limits`). `catalog`, when at hand, lends its entity
    names to the examples in syntax hints."""
    lim = limits()
    check_text_size(source, "plan_bytes", "the plan", lim)
    plan = parse_json(source) if is_json_plan(source) else parse_text(source, catalog=catalog)
    check_plan_limits(plan, lim)
    return plan
