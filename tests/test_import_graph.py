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
    "envelope": {"facts", "executor", "verifier", "qdsl", "sqlalchemy"},
}
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
