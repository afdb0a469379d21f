"""The wheel ships every module of the tree under the one import root `qdsl`."""

from __future__ import annotations

import zipfile
from pathlib import Path

from wheel_check import build_wheel

ROOT = Path(__file__).resolve().parents[1]
# folder in the repository -> where it lands in the wheel
FOLDERS = {
    "qdsl": "qdsl",
    "dsl": "qdsl/dsl",
    "executor": "qdsl/executor",
    "verifier": "qdsl/verifier",
    "facts": "qdsl/facts",
    "envelope": "qdsl/envelope",
    "alembic": "qdsl/migrations",
}
SHIPPED_SUFFIXES = {".py", ".lark", ".toml", ".mako", ".typed"}


def _expected() -> set[str]:
    names: set[str] = set()
    for folder, target in FOLDERS.items():
        for path in (ROOT / folder).rglob("*"):
            shipped = path.suffix in SHIPPED_SUFFIXES and "__pycache__" not in path.parts
            if path.is_file() and shipped:
                names.add(f"{target}/{path.relative_to(ROOT / folder).as_posix()}")
    return names


def test_the_wheel_ships_every_module_under_qdsl(tmp_path: Path) -> None:
    wheel = build_wheel(tmp_path)
    with zipfile.ZipFile(wheel) as zf:
        shipped = {n for n in zf.namelist() if ".dist-info/" not in n}
    assert {n.split("/")[0] for n in shipped} == {"qdsl"}
    assert _expected() - shipped == set()
    assert shipped - _expected() == set()
