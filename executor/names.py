"""Every bound-parameter and result-column name the executor's statements use.

The statement builders (`statements`, `predicates`, `main_facts`,
`fallback_sql`), the parameter side (`bind`, `compile`) and the row reader
(`flow`) all spell names through here, so a statement and the values bound to
it can never disagree on a name. Names depend only on positions (a filter's
index, a slot's number), never on values.
"""

from __future__ import annotations

# --- bound parameters, shared by every statement of a plan -------------------
TENANT = "tenant_id"
ENTITY_TYPE = "entity_type"
LIMIT = "limit"  # the page size + 1 (to know `truncated`)
ONE_ROW = "one_row"  # 1: the related row a many-to-one projection reads
FACTS_CAP = "facts_cap"
VALUES_CAP = "values_cap"  # distinct values read per (entity, predicate)
FACT_PREDICATES = "fact_predicates"  # the predicates of projected fact fields
SUBJECT_IDS = "subject_ids"
SCOPE = "scope_id"  # the plan's project scope (`BoundScope.value`)
NOW = "now"
FRESH_SINCE = "fresh_since"
FALLBACK_CAP = "fallback_cap"
IDS = "ids"  # bound at run time, from an earlier statement's rows


def filter_value(index: int) -> str:
    """A filter's value; `_pred`, `_lo`, `_hi` are derived from it."""
    return f"f{index}"


def filter_predicate(index: int) -> str:
    return f"{filter_value(index)}_pred"


def filter_low(index: int) -> str:
    return f"{filter_value(index)}_lo"


def filter_high(index: int) -> str:
    return f"{filter_value(index)}_hi"


def grams(index: int) -> str:
    """The text fallback of a fact filter: the union of its slots' grams."""
    return f"g{index}_grams"


def slot_grams(index: int, slot: int) -> str:
    return f"g{index}_s{slot}_grams"


def slot_gram_count(index: int, slot: int) -> str:
    return f"g{index}_s{slot}_n"


def slot_text(index: int, slot: int) -> str:
    return f"g{index}_s{slot}_text"


def slot_number(slot: int) -> str:
    return f"slot{slot}"


# --- result columns ------------------------------------------------------------
ROW_TENANT = "q_tenant"
ROW_ID = "q_id"
ROW_LABEL = "q_label"
ROW_TOTAL = "q_total"  # the match total (a window count)
ROW_BASELINE = "q_baseline"  # the tenant's unfiltered count
ROW_FILTER = "q_filter"  # which filter a matching fact row belongs to
FACT_RANK = "q_rank"  # a fact's value among its predicate's distinct values (1, 2, ...)
FACT_RANK_DOWN = "q_rank_down"  # the same counted from the last value
COUNT = "n"  # the baseline statement's one column


def value_column(name: str) -> str:
    """A projected column of the entity rows."""
    return f"v_{name}"


def sort_column(position: int) -> str:
    return f"q_k{position}"


def hit_slot(index: int) -> str:
    """Which slot (spelling) of fact filter `index` a fallback hit matched."""
    return f"q_g{index}"
