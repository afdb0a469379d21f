"""The tests' folders mirror the packages without shadowing them.

`python -m pytest` (what `make test` runs) and plain `pytest` must collect the
same tests: both put the checkout's root on the path (pyproject's `pythonpath`),
where `qdsl/`, each component folder and `benchmarks/` are regular packages,
found before any folder of the same name that pytest puts on the path for the
tests (`tests/`, `tests/<area>/`: no `__init__.py`). A folder `tests/qdsl/`
used to shadow the import root under plain `pytest`, whose path has no root.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TESTS = ROOT / "tests"
PACKAGES = ("qdsl", "dsl", "executor", "verifier", "facts", "envelope", "benchmarks")


@pytest.mark.parametrize("name", PACKAGES)
def test_each_top_level_name_is_the_checkouts_package(name: str) -> None:
    spec = importlib.util.find_spec(name)
    assert spec is not None and spec.origin is not None, name
    assert Path(spec.origin) == ROOT / name / "__init__.py"
    assert list(spec.submodule_search_locations or []) == [str(ROOT / name)]


def test_the_import_root_is_the_checkouts_qdsl() -> None:
    import qdsl
    import qdsl.dsl

    assert Path(qdsl.__file__ or "").parent == ROOT / "qdsl"
    assert Path(qdsl.dsl.__file__ or "").parent == ROOT / "dsl"


def test_no_test_folder_is_named_for_the_import_root() -> None:
    named = [p.relative_to(ROOT).as_posix() for p in TESTS.rglob("qdsl") if p.is_dir()]
    assert named == []


# What every stage of `dsl/` shares stays at its top; each stage is a sub-package
# (docs/architecture.md, "Packages and the import graph").
DSL_SHARED = {
    "__init__",
    "bound",
    "errors",
    "freshness",
    "grain",  # the IR's and the catalog's calendar periods, like `operators`
    "ir",
    "linking",
    "numerals",
    "operators",
    "suggest",
    "tenant",
    "textnorm",
}
DSL_STAGES = {"catalog", "kinds", "normalize", "plan", "question", "settings"}


def test_dsl_is_laid_out_by_stage() -> None:
    dsl = ROOT / "dsl"
    modules = {p.stem for p in dsl.glob("*.py")}
    stages = {p.name for p in dsl.iterdir() if (p / "__init__.py").is_file()}
    assert modules == DSL_SHARED, "a new module of dsl/ belongs in the stage that reads it"
    assert stages == DSL_STAGES
    assert not list(dsl.glob("*.lark")), "the grammar is the plan stage's"
