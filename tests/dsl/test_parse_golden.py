"""Golden files: plan text -> raw IR JSON -> canonical text, for every query type and operator.

`QDSL_UPDATE_GOLDEN=1 pytest tests/dsl/test_parse_golden.py` rewrites the
`.ir.json` and `.canonical` files from the current code; review the diff.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from qdsl.dsl.ir import Operator, Plan, QueryType
from qdsl.dsl.plan.json_form import parse_json
from qdsl.dsl.plan.parser import parse_text
from qdsl.dsl.plan.printer import to_text

GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "plans"
UPDATE = os.environ.get("QDSL_UPDATE_GOLDEN") == "1"
CASES = sorted(GOLDEN.glob("*.plan"))


def ir_json(plan: Plan) -> str:
    return json.dumps(plan.model_dump(mode="json"), indent=2, ensure_ascii=False) + "\n"


def check(path: Path, actual: str) -> None:
    if UPDATE:
        path.write_text(actual, encoding="utf-8")
        return
    assert path.exists(), f"{path.name} is missing; run with QDSL_UPDATE_GOLDEN=1"
    assert actual == path.read_text(encoding="utf-8"), path.name


@pytest.mark.parametrize("source", CASES, ids=[p.stem for p in CASES])
def test_golden_plan(source: Path) -> None:
    plan = parse_text(source.read_text(encoding="utf-8"))
    check(source.with_suffix(".ir.json"), ir_json(plan))
    canonical = to_text(plan)
    check(source.with_suffix(".canonical"), canonical)
    # The canonical text and the IR JSON both read back to the same plan.
    assert parse_text(canonical) == plan
    assert to_text(parse_text(canonical)) == canonical
    assert parse_json(source.with_suffix(".ir.json").read_text(encoding="utf-8")) == plan


def test_golden_files_cover_every_query_type_and_operator() -> None:
    plans = [parse_text(p.read_text(encoding="utf-8")) for p in CASES]
    assert {p.query_type for p in plans} == set(QueryType)
    assert {f.operator for p in plans for f in p.filters} == set(Operator)
    null_tests = {f.value for p in plans for f in p.filters if f.operator is Operator.IS_NULL}
    assert null_tests == {True, False}


def test_no_stale_golden_outputs() -> None:
    stems = {p.stem for p in CASES}
    outputs = [*GOLDEN.glob("*.ir.json"), *GOLDEN.glob("*.canonical")]
    assert sorted(o.name for o in outputs if o.name.split(".")[0] not in stems) == []
