"""One entry for a plan in either form: ``load_plan``."""

from __future__ import annotations

from typing import TYPE_CHECKING

from qdsl.dsl.ir import Plan
from qdsl.dsl.settings.limits import Limits, check_plan_limits, check_text_size, limits

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog


def is_json_plan(source: str) -> bool:
    """A plan is JSON when its first character (after a BOM and whitespace) is ``{``."""
    return source.removeprefix("\ufeff").lstrip().startswith("{")


def load_plan(
    source: str,
    *,
    catalog: Catalog | None = None,
    spans: bool = True,
    limit: Limits | None = None,
) -> Plan:
    """Parse `source` as a JSON plan if it starts with ``{``, else as plan text.

    The plan's size is bounded before parsing and its shape (filters, lists,
    values) after (`qdsl.dsl.settings.limits`; `limit`: the limits already read for this
    call, if any). `catalog`, when at hand, lends its entity names to the
    examples in syntax hints. `spans=False` leaves a text plan's spans out
    (`parse_text`); its errors are located all the same."""
    # The parsers are imported here, not with the module: a question answered by
    # the rule planner reaches the plan cache but never parses a plan.
    lim = limit or limits()
    check_text_size(source, "plan_bytes", "the plan", lim)
    if is_json_plan(source):
        from qdsl.dsl.plan.json_form import parse_json

        plan = parse_json(source)
    else:
        from qdsl.dsl.plan.parser import parse_text

        plan = parse_text(source, catalog=catalog, spans=spans)
    check_plan_limits(plan, lim)
    return plan
