"""docs/architecture.md: the import graph points one way, and `dsl` imports no database code.

qdsl -> (verifier, executor, envelope) -> dsl / facts. The verifier reads the
executor's result model (`qdsl.executor.result`, plain pydantic) and nothing
else of the executor. Components are named by their folder (`dsl`) and
imported under the one root (`qdsl.dsl`); `qdsl` alone is the facade.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("dsl", "facts", "executor", "verifier", "envelope", "qdsl")

# package -> top-level modules it must never import
FORBIDDEN: dict[str, set[str]] = {
    "dsl": {
        "facts",
        "executor",
        "verifier",
        "envelope",
        "qdsl",
        "sqlalchemy",
        "psycopg",
        "alembic",
    },
    "facts": {"executor", "verifier", "envelope", "qdsl"},
    "executor": {"verifier", "envelope", "qdsl"},
    "verifier": {"envelope", "qdsl", "facts", "sqlalchemy"},
    "envelope": {"facts", "executor", "verifier", "qdsl", "sqlalchemy", "psycopg"},
}
# The output path stays free of database code, but for the PostgreSQL ref store
# (its module, and the selection that opens it): these may use facts' engines
# and tables, SQLAlchemy and psycopg.
DATABASE_MODULES = {"envelope": {"envelope/pg_store.py", "envelope/backends.py"}}
DATABASE_COMPONENTS = {"facts", "sqlalchemy", "psycopg"}
ALLOWED_EXECUTOR_MODULES_FOR_VERIFIER = {"executor.result"}
COMPONENTS = frozenset(PACKAGES) - {"qdsl"}


def _component(module: str) -> str:
    """`qdsl.dsl.ir` -> `dsl`; `qdsl.api` -> `qdsl`; `sqlalchemy.orm` -> `sqlalchemy`."""
    parts = module.split(".")
    if parts[0] == "qdsl":
        return parts[1] if len(parts) > 1 and parts[1] in COMPONENTS else "qdsl"
    return parts[0]


def _imports(package: str) -> list[tuple[Path, str]]:
    found: list[tuple[Path, str]] = []
    for path in sorted((ROOT / package).rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found.extend((path, alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                found.append((path, node.module))
    return found


@pytest.mark.parametrize("package", sorted(FORBIDDEN))
def test_no_import_points_back_up(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path, module in _imports(package)
        if _component(module) in FORBIDDEN[package]
        and not (
            str(path.relative_to(ROOT)) in DATABASE_MODULES.get(package, set())
            and _component(module) in DATABASE_COMPONENTS
        )
    ]
    assert bad == []


def test_verifier_reads_only_the_executor_result_model() -> None:
    used = {m.removeprefix("qdsl.") for _, m in _imports("verifier") if _component(m) == "executor"}
    assert used <= ALLOWED_EXECUTOR_MODULES_FOR_VERIFIER


def test_every_package_is_typed() -> None:
    assert all((ROOT / p / "py.typed").is_file() for p in PACKAGES)


@pytest.mark.parametrize("package", PACKAGES)
def test_every_import_spells_the_one_root(package: str) -> None:
    bare = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path, module in _imports(package)
        if module.split(".")[0] in COMPONENTS
    ]
    assert bare == []


# The demo (catalog, schema, rows) is one deployment, not product code. Only
# these facade modules reach it: the embedded demo is the default deployment
# (`qdsl.deployment`, for `plan_and_answer` without an engine and `ask`/`run`/`mcp`
# without --db) and `qdsl demo` seeds it. dsl.catalog reads the demo's catalog.toml as a data
# file for the same default, without importing demo code.
DEMO = "qdsl.facts.demo"
DEMO_ENTRY_POINTS = {
    "qdsl/deployment.py",
    "qdsl/cli/db_cmds.py",
}


@pytest.mark.parametrize("package", PACKAGES)
def test_product_code_never_imports_the_demo(package: str) -> None:
    bad = [
        f"{path.relative_to(ROOT)} imports {module}"
        for path, module in _imports(package)
        if (module == DEMO or module.startswith(DEMO + "."))
        and "demo" not in path.relative_to(ROOT).parts[:-1]
        and path.relative_to(ROOT).as_posix() not in DEMO_ENTRY_POINTS
    ]
    assert bad == []


def test_the_demo_lives_in_one_place() -> None:
    stray = [
        p.relative_to(ROOT).as_posix()
        for package in PACKAGES
        for p in (ROOT / package).rglob("*demo*.py")
        if "demo" not in p.relative_to(ROOT).parts[:-1]
    ]
    # the facade's `qdsl demo` walkthrough is the demo command itself
    assert stray == ["qdsl/demo_show.py"]
