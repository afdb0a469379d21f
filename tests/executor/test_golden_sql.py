"""Golden SQL and bound parameters for every template on both dialects.

One file per (template, dialect) under tests/golden/sql/, named after this
test. QDSL_UPDATE_GOLDEN=1 rewrites them; review the diff before committing.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from exec_support import CATALOG, NOW, sample_plan

from qdsl.dsl.ir import QueryType
from qdsl.executor.compile import CompiledPlan, compile_plan
from qdsl.executor.main_facts import EVIDENCE_APART_ROWS
from qdsl.executor.templates import registry

GOLDEN = Path(__file__).resolve().parents[1] / "golden" / "sql"
PAIRS = sorted(registry(CATALOG))
TENANT = "t1"


def render_golden(compiled: CompiledPlan) -> str:
    lines = [f"-- template: {compiled.template}", f"-- dialect: {compiled.dialect}"]
    for st in compiled.statements:
        lines.append("")
        lines.append(f"-- role: {st.role}")
        lines.append(st.sql.rstrip())
        lines.append("-- params: " + json.dumps(st.params, ensure_ascii=False, sort_keys=True))
        if st.runtime_params:
            lines.append("-- bound at run time: " + ", ".join(st.runtime_params))
    return "\n".join(lines) + "\n"


def assert_golden(path: Path, text: str) -> None:
    """`text` is the golden file at `path`; QDSL_UPDATE_GOLDEN=1 (or a file not yet
    written, outside CI) writes it instead."""
    if os.environ.get("QDSL_UPDATE_GOLDEN") == "1" or not path.exists():
        if os.environ.get("CI") and not path.exists():
            pytest.fail(f"missing golden file {path.name}; run with QDSL_UPDATE_GOLDEN=1")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    assert text == path.read_text(encoding="utf-8")


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
@pytest.mark.parametrize(("entity", "query_type"), PAIRS)
def test_golden_sql(entity: str, query_type: QueryType, dialect: str) -> None:
    compiled = compile_plan(
        sample_plan(entity, query_type), CATALOG, dialect, tenant_id=TENANT, now=NOW
    )
    for st in compiled.statements:
        # the tenant is always a bound parameter, never text
        assert st.params.get("tenant_id") == TENANT, st.role
        assert f"'{TENANT}'" not in st.sql
    text = render_golden(compiled)
    assert_golden(GOLDEN / f"test_golden_sql__{entity}.{query_type.value}__{dialect}.sql", text)


def test_no_stale_golden_files() -> None:
    expected = {
        f"test_golden_sql__{e}.{qt.value}__{d}.sql"
        for e, qt in PAIRS
        for d in ("sqlite", "postgresql")
    }
    present = {p.name for p in GOLDEN.glob("test_golden_sql__*.sql")}
    assert present <= expected, sorted(present - expected)


@pytest.mark.parametrize("dialect", ["sqlite", "postgresql"])
def test_golden_sql_of_a_large_page(dialect: str) -> None:
    """A page above `EVIDENCE_APART_ROWS` reads its evidence by the rows' ids;
    one of that size carries it in the main statement."""
    plan = sample_plan("project", QueryType.LIST)
    assert any(f.field == "market_theme" for f in plan.filters)

    def compiled(limit: int) -> CompiledPlan:
        sized = plan.model_copy(update={"limit": limit})
        return compile_plan(sized, CATALOG, dialect, tenant_id=TENANT, now=NOW)

    small, large = compiled(EVIDENCE_APART_ROWS), compiled(EVIDENCE_APART_ROWS + 1)
    assert [st.role for st in small.statements] == ["main", "baseline"]
    assert "AS f_id" in small.statements[0].sql
    assert [st.role for st in large.statements] == ["main", "evidence", "baseline"]
    assert "AS f_id" not in large.statements[0].sql
    path = GOLDEN / f"test_golden_large_page__project.list__{dialect}.sql"
    assert_golden(path, render_golden(large))
