"""Every query type is covered everywhere, and a new one takes three files.

The records live in `qdsl.dsl.kinds`; renderers, planner cues, executor
templates and verifier checks register against them. The last test adds a
query type that exists only here, by editing exactly the three files
docs/architecture.md names in a copy of the package, and answers a question of
that type end to end on the demo database.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import pytest

from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.kinds import (
    KINDS,
    MANDATORY_CHECKS,
    KindTable,
    QueryType,
    VerifierCheck,
    kind_for_contract,
)
from qdsl.executor.templates import registry
from qdsl.planner.cues import CUES_BY_KIND
from qdsl.render import RENDERERS
from qdsl.verifier import CHECKS

ROOT = Path(__file__).resolve().parents[1]
COMPONENTS = ("dsl", "executor", "verifier", "facts", "envelope")


def test_every_query_type_has_one_record_and_one_contract() -> None:
    assert set(KINDS) == set(QueryType)
    for qt, kind in KINDS.items():
        assert kind.query_type is qt
        assert kind_for_contract(kind.contract) is kind
        assert kind.data_keys, qt


@pytest.mark.parametrize(
    ("table", "name"), [(RENDERERS, "renderers"), (CUES_BY_KIND, "planner cues")]
)
def test_every_executable_query_type_is_registered(table: KindTable[Any], name: str) -> None:
    assert table.missing() == [], f"{name} missing for these query types"


def test_every_executable_query_type_has_a_template_in_the_demo_catalog() -> None:
    covered = {qt for _entity, qt in registry(demo_catalog())}
    assert covered == {qt for qt, k in KINDS.items() if k.executable}


def test_every_check_a_kind_names_is_a_verifier_function() -> None:
    assert set(CHECKS) == set(VerifierCheck)
    for kind in KINDS.values():
        for check in (*kind.default_checks, *kind.mandatory_checks, *MANDATORY_CHECKS):
            assert CHECKS[check].__name__ == check.value


def test_a_table_names_what_it_misses() -> None:
    table: KindTable[str] = KindTable("thing", needs=lambda k: k.executable)
    table.add(QueryType.COUNT, "x")
    assert QueryType.LIST in table.missing()
    assert QueryType.UNKNOWN not in table.missing()
    with pytest.raises(ValueError, match="registered twice"):
        table.add(QueryType.COUNT, "y")
    with pytest.raises(LookupError, match="no thing registered for list"):
        table[QueryType.LIST]


# --- a query type that exists only in this test -------------------------------

# Each edit: (file, anchor, text inserted after the anchor's line). These are
# the only changes; docs/architecture.md ("Extending") lists the same files.
_EDITS: tuple[tuple[str, str, str], ...] = (
    ("dsl/kinds.py", '    COMPARE = "compare"\n', '    PEEK = "peek"\n'),
    (
        "dsl/kinds.py",
        '    COMPARISON_WITH_BASIS = "comparison_with_basis"\n',
        '    ID_SAMPLE = "id_sample"\n',
    ),
    (
        "dsl/kinds.py",
        "_DECLARED: tuple[QueryKind, ...] = (\n",
        "    QueryKind(\n"
        "        _Q.PEEK,\n"
        "        _A.ID_SAMPLE,\n"
        '        frozenset({"ids"}),\n'
        "        must_cite=True,\n"
        "        default_checks=(_C.COVERS_CONDITIONS,),\n"
        "        template=TemplateShape(),\n"
        "    ),\n",
    ),
    (
        "dsl/question/words.py",
        "CUES: tuple[tuple[QueryType, tuple[str, ...]], ...] = (\n",
        '    (_Q.PEEK, (r"\\bpeek at\\b",)),\n',
    ),
    (
        "qdsl/render.py",
        "RENDERERS.add(QueryType.COMPARE, _compare)\n",
        textwrap.dedent(
            """
            def _peek(c: _Ctx) -> tuple[str, dict[str, Any], list[str]]:
                rows = c.result.rows
                cites = _evidence_ids(rows, c.result)
                text = f"{c.many}: {_names(rows, c.lang)}. {_cite(cites)}"
                return text, {"ids": [r.entity_id for r in rows]}, cites


            RENDERERS.add(QueryType.PEEK, _peek)
            """
        ),
    ),
)

_SCRIPT = """
from qdsl.dsl.catalog import demo_catalog
from qdsl.dsl.ir import QueryType
from qdsl.planner.cues import CUES_BY_KIND, classify
from qdsl.render import RENDERERS
from qdsl.api import AnswerOptions, plan_and_answer

peek = QueryType("peek")
assert RENDERERS.missing() == [] and CUES_BY_KIND.missing() == []
assert classify("peek at the projects") is peek
cat = demo_catalog()
name, spec = next((n, e) for n, e in cat.entities.items() if QueryType.LIST in e.query_types)
spec = spec.model_copy(update={"query_types": (*spec.query_types, peek)})
cat = cat.model_copy(update={"entities": {**cat.entities, name: spec}})
words = spec.synonyms[-1] if spec.synonyms else name
res = plan_and_answer(f"peek at the {words}", tenant_id="t1", options=AnswerOptions(catalog=cat))
assert res.status == "answered", (res.status, res.text, res.verdict)
assert res.query_type is peek and res.answer_contract.value == "id_sample"
assert set(res.data) == {"ids"} and res.data["ids"], res.data
assert res.verdict.ok and "evidence_backed" in res.verdict.checks_run
print("ok", name, len(res.data["ids"]))
"""


def _tree_with_new_kind(tmp: Path) -> Path:
    """A copy of the package shaped like the wheel, with the three files edited."""
    root = tmp / "tree"
    pkg = root / "qdsl"
    shutil.copytree(ROOT / "qdsl", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(ROOT / "dsl", pkg / "dsl", ignore=shutil.ignore_patterns("__pycache__"))
    for name in COMPONENTS[1:]:
        (pkg / name).symlink_to(ROOT / name)
    (pkg / "migrations").symlink_to(ROOT / "alembic")
    touched = set()
    for rel, anchor, text in _EDITS:
        path = pkg / rel.removeprefix("qdsl/")
        source = path.read_text(encoding="utf-8")
        assert source.count(anchor) == 1, f"anchor not unique in {rel}: {anchor!r}"
        path.write_text(source.replace(anchor, anchor + text), encoding="utf-8")
        touched.add(rel)
    assert len(touched) <= 3
    return root


def test_a_new_query_type_takes_three_files(tmp_path: Path) -> None:
    root = _tree_with_new_kind(tmp_path)
    env = {**os.environ, "QDSL_STATE_DIR": str(tmp_path / "state"), "PYTHONPATH": str(root)}
    env.pop("QDSL_CATALOG", None)
    proc = subprocess.run(
        [sys.executable, "-c", _SCRIPT],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert proc.stdout.startswith("ok "), proc.stdout
