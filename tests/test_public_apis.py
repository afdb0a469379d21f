"""Product code uses only the public API of its dependencies.

A name starting with `_` of lark, pydantic, json, os, mcp, sqlalchemy or psycopg
(or of a submodule, or of an object imported from one) is that library's to
change in any release, so no product module imports it, reads it or writes it.
The scan (the `ast` of every product module) finds

* `import lark._x`, `from lark._x import y`, `from lark import _x`;
* `m._x` where `m` is bound to such a module or to a name imported from one
  (`from lark import Lark` makes `Lark._x` a hit), dotted paths included
  (`json.encoder.c_make_encoder`);
* `getattr(m, "_x")` and its kin on such a name;
* anywhere, on any object: the private names known to have been reached this
  way (`KNOWN`), since an object a library hands back (a parser's scanner, a
  model instance) cannot be traced to its module by the scan.

Dunders are public protocol (`__version__`, `__name__`), except the instance
state a library keeps in them (`KNOWN`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
PRODUCT = ("qdsl", "dsl", "executor", "verifier", "facts", "envelope")
DEPENDENCIES = frozenset({"lark", "pydantic", "json", "os", "mcp", "sqlalchemy", "psycopg"})
# Reached on objects a library returns (so any object counts), or undocumented
# though their names do not start with `_`.
KNOWN = frozenset(
    {
        "_parse_table",
        "_mres",
        "_data",
        "__pydantic_fields_set__",
        "__pydantic_extra__",
        "__pydantic_private__",
        "__pydantic_validator__",
        "c_make_encoder",
    }
)
ACCESSORS = frozenset(
    {"getattr", "setattr", "hasattr", "delattr", "__setattr__", "__getattribute__"}
)


class Hit(NamedTuple):
    path: str  # relative to the repository, "/"-separated
    name: str  # the private name as written
    line: int


# Hits allowed, as (file, name): none. A private name kept because a benchmark goal
# needs it would be listed here with its reason (and a test that the hit is still
# there, so a stale entry cannot hide a new one); a line number would make every
# unrelated edit above it a failure.
ALLOWED: frozenset[tuple[str, str]] = frozenset()


def _private(name: str) -> bool:
    if name in KNOWN:
        return True
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def _dependency(module: str | None) -> bool:
    return module is not None and module.split(".")[0] in DEPENDENCIES


def _dotted(node: ast.expr) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for anything but names and attributes."""
    parts: list[str] = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name):
        return None
    parts.append(node.id)
    return parts[::-1]


class _Scan(ast.NodeVisitor):
    def __init__(self, path: str) -> None:
        self.path = path
        self.hits: list[Hit] = []
        # local names bound to a dependency module or to a name imported from one
        self.bound: set[str] = set()

    def _hit(self, name: str, node: ast.AST) -> None:
        self.hits.append(Hit(self.path, name, getattr(node, "lineno", 0)))

    def visit_Import(self, node: ast.Import) -> None:
        for alias in node.names:
            if not _dependency(alias.name):
                continue
            for part in alias.name.split("."):
                if _private(part):
                    self._hit(part, node)
            self.bound.add(alias.asname or alias.name.split(".")[0])

    def visit_ImportFrom(self, node: ast.ImportFrom) -> None:
        if node.level or not _dependency(node.module):
            return
        assert node.module is not None
        for part in node.module.split("."):
            if _private(part):
                self._hit(part, node)
        for alias in node.names:
            if _private(alias.name):
                self._hit(alias.name, node)
            self.bound.add(alias.asname or alias.name)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        own = isinstance(node.value, ast.Name) and node.value.id in ("self", "cls")
        if node.attr in KNOWN and not (own and not node.attr.startswith("__")):
            # a class's own `self._data` is its own; pydantic's dunders never are
            self._hit(node.attr, node)
        elif _private(node.attr):
            parts = _dotted(node.value)
            if parts is not None and parts[0] in self.bound:
                self._hit(node.attr, node)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = node.func
        name = func.id if isinstance(func, ast.Name) else getattr(func, "attr", None)
        named = [
            arg.value
            for arg in node.args
            if isinstance(arg, ast.Constant) and isinstance(arg.value, str)
        ]
        # a known name handed to any call (`_set = object.__setattr__` hides the accessor)
        for text in named:
            if text in KNOWN:
                self._hit(text, node)
        if name in ACCESSORS and len(node.args) >= 2:
            target, attr = node.args[0], node.args[1]
            parts = _dotted(target)
            if (
                isinstance(attr, ast.Constant)
                and isinstance(attr.value, str)
                and attr.value not in KNOWN
                and _private(attr.value)
                and parts is not None
                and parts[0] in self.bound
            ):
                self._hit(attr.value, node)
        self.generic_visit(node)


def scan_source(source: str, path: str = "<snippet>") -> list[Hit]:
    scan = _Scan(path)
    scan.visit(ast.parse(source))
    return scan.hits


def product_files() -> Iterator[Path]:
    for top in PRODUCT:
        yield from sorted((ROOT / top).rglob("*.py"))


def product_hits() -> list[Hit]:
    hits: list[Hit] = []
    for path in product_files():
        rel = path.relative_to(ROOT).as_posix()
        hits += scan_source(path.read_text(encoding="utf-8"), rel)
    return hits


def test_no_product_module_reaches_a_private_name_of_a_dependency() -> None:
    found = [hit for hit in product_hits() if (hit.path, hit.name) not in ALLOWED]
    assert found == [], "\n".join(f"{h.path}:{h.line}: {h.name}" for h in found)


def test_the_scan_reads_every_product_package() -> None:
    files = {p.relative_to(ROOT).parts[0] for p in product_files()}
    assert files == set(PRODUCT)


SNIPPETS = {
    "a private attribute of an object from lark": (
        "from lark import Lark\nparser = Lark('')\ntable = parser.parser.parser._parse_table\n",
        ["_parse_table"],
    ),
    "a private attribute of an imported class": (
        "from lark import Lark\nLark._load\n",
        ["_load"],
    ),
    "a private module": ("import sqlalchemy.sql._typing\n", ["_typing"]),
    "a name from a private module": (
        "from pydantic._internal import _model_construction\n",
        ["_internal", "_model_construction"],
    ),
    "a private name from a module": ("from psycopg import _encodings\n", ["_encodings"]),
    "a module attribute, dotted": (
        "import json.encoder\njson.encoder.c_make_encoder\n",
        ["c_make_encoder"],
    ),
    "an aliased module": ("import os as o\no._exit(0)\n", ["_exit"]),
    "getattr with the name as text": ("import os\ngetattr(os.environ, '_data', None)\n", ["_data"]),
    "a known name on any object": ("def f(scanner):\n    return scanner._mres\n", ["_mres"]),
    "pydantic's instance state, even on self": (
        "class M:\n    def f(self):\n        return self.__pydantic_fields_set__\n",
        ["__pydantic_fields_set__"],
    ),
    "a library's instance state": (
        "def f(model):\n    object.__setattr__(model, '__pydantic_fields_set__', set())\n",
        ["__pydantic_fields_set__"],
    ),
    "instance state through an alias of the accessor": (
        "_set = object.__setattr__\ndef f(m):\n    _set(m, '__pydantic_extra__', None)\n",
        ["__pydantic_extra__"],
    ),
    "a private name of a dependency by getattr": (
        "from lark import lexer\ngetattr(lexer, '_create_unless')\n",
        ["_create_unless"],
    ),
}


def test_the_scan_finds_each_way_of_reaching_a_private_name() -> None:
    for label, (source, names) in SNIPPETS.items():
        assert [hit.name for hit in scan_source(source)] == names, label


def test_a_new_hit_fails_the_check_whatever_the_allow_list_holds() -> None:
    source = "from lark import Lark\nLark('').parser._parse_table\n"
    hits = scan_source(source, "dsl/plan/parser.py")
    assert [(h.path, h.name) for h in hits] == [("dsl/plan/parser.py", "_parse_table")]
    assert not {(h.path, h.name) for h in hits} <= ALLOWED


def test_public_names_and_own_private_names_are_not_hits() -> None:
    source = (
        "import os\nimport json\nfrom lark import Lark, __version__\n"
        "from pydantic import BaseModel\n"
        "class M(BaseModel):\n    _cache: int = 0\n"
        "    def f(self) -> None:\n        self._cache = 1\n        self.__class__\n"
        "os.environ.get('X')\njson.dumps({})\nLark.open\nBaseModel.model_copy\n"
        "def g(thing):\n    return thing._own\n"
        "class Store:\n    def get(self):\n        return self._data\n"
    )
    assert scan_source(source) == []
