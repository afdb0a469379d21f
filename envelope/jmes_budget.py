"""What a JMESPath evaluation builds, counted while it builds it (`envelope.jmes`).

jmespath's interpreter shares values rather than copying them: `[@,@]` is a
new two-element list whose elements are one object. A chain of such steps
stays small in memory while the JSON it prints doubles at each step, so a
bound applied to the printed result comes too late, and a bound on memory
alone would let the printed result grow without end. Both are bounded here,
at each node of the tree, as it returns:

* the value a node builds (a list, an object, a projection, a slice, a
  function's result) is measured as the JSON it prints as, from its parts'
  sizes (kept by object identity for the evaluation: a part built before is
  known, a part of the document is measured once), and may not be larger
  than the budget;
* the bytes all nodes build, each value counting only what is new in it
  (its slots, the characters of a new string), may not add up to more than
  the budget: a projection whose every element is within it cannot pile up
  more than it altogether;
* a function whose result can outgrow its arguments by more than a constant
  factor (`join`, by its separator's length) is checked before it runs.

The budget is the document's own bytes (a selection of it is never refused)
plus `jmespath_result_bytes`; the clock is checked at every node.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable
from typing import Any

from jmespath import functions
from jmespath.visitor import Options, TreeInterpreter

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.limits import Limits

# The node types whose value the node itself builds; every other node returns
# a part of its input (a field, an index, the current node), a boolean, or
# one of its children's values.
_BUILDS = frozenset(
    {
        "multi_select_list",
        "multi_select_dict",
        "projection",
        "value_projection",
        "filter_projection",
        "flatten",
        "slice",
        "function_expression",
    }
)
# Characters JSON escapes: `"` and `\` take 2 bytes, a control character up to 6.
_ESCAPED = re.compile(r'["\\\x00-\x1f]')
# Strings shorter than this are measured again rather than remembered.
_REMEMBER_CHARS = 64
Sizes = dict[int, tuple[Any, int]]


class Budget:
    """One evaluation's limits and what it has built so far."""

    def __init__(self, lim: Limits, document_bytes: int) -> None:
        self.lim = lim
        self.max_bytes = lim.jmespath_result_bytes + max(document_bytes, 0)
        self.built = 0
        self.deadline = time.monotonic() + lim.jmespath_ms / 1000
        # id -> (the value, kept alive so that its id stays its own; its JSON size)
        self.sizes: Sizes = {}

    def tick(self) -> None:
        if time.monotonic() > self.deadline:
            raise self.lim.too_large(
                "jmespath_ms", "evaluating the JMESPath expression", self.lim.jmespath_ms, "ms"
            )

    def add(self, value: Any) -> None:
        """`value` was just built: measure it and count what is new in it."""
        size = built_bytes(value, self.sizes)
        if size > self.max_bytes:
            raise self.over(size)
        self.built += own_bytes(value)
        if self.built > self.max_bytes:
            raise self.over(self.built)

    def room_for(self, nbytes: int) -> None:
        """Refuse now what would build `nbytes` more than the budget has left."""
        if self.built + nbytes > self.max_bytes:
            raise self.over(self.built + nbytes)

    def over(self, size: int) -> UsageError:
        name = "jmespath_result_bytes"
        setting = self.lim.setting(name)
        return UsageError(
            f"{name}_exceeded",
            f"the JMESPath expression builds more than {self.max_bytes} bytes "
            f"({size} or more): the document's own bytes plus {self.lim.jmespath_result_bytes}",
            hint=f"select less (a slice such as [0:50], a count with length()), or raise the "
            f"limit with {setting}",
            retryable=False,
            details={"limit": name, "max": self.max_bytes, "unit": "bytes", "setting": setting},
        )


class _Functions(functions.Functions):
    """jmespath's built-in functions, `join` checked against the budget before it runs."""

    def __init__(self, budget: Budget) -> None:
        super().__init__()
        self.budget = budget

    def call_function(self, function_name: str, resolved_args: Iterable[Any]) -> Any:
        args = list(resolved_args)
        if function_name == "join" and len(args) == 2:
            sep, items = args
            if isinstance(sep, str) and isinstance(items, list):
                texts = sum(len(s) for s in items if isinstance(s, str))
                self.budget.room_for(texts + len(sep) * max(len(items) - 1, 0))
        return super().call_function(function_name, args)


class _Interpreter(TreeInterpreter):
    def __init__(self, budget: Budget) -> None:
        super().__init__(Options(custom_functions=_Functions(budget)))
        self.budget = budget

    def visit(self, node: Any, *args: Any, **kwargs: Any) -> Any:
        self.budget.tick()
        value = super().visit(node, *args, **kwargs)
        if node["type"] in _BUILDS:
            self.budget.add(value)
        return value


def evaluate(tree: Any, document: Any, budget: Budget) -> Any:
    """The value of a parsed expression over `document`, within `budget`."""
    return _Interpreter(budget).visit(tree, document)


def built_bytes(value: Any, sizes: Sizes) -> int:
    """The JSON size of a value a node has just built: its own brackets,
    separators and keys, plus its parts' sizes. A part built before is known
    (every built value is measured as its node returns); the others are parts
    of the document or of a literal, trees that json measures at C speed, in
    one call when they are distinct. So a chain of `[@,@]` costs one step per
    level, never a walk of what it would print."""
    if not isinstance(value, list | dict):
        return part_bytes(value, sizes)
    parts = list(value.values()) if isinstance(value, dict) else value
    total = 2 + max(len(parts) - 1, 0)
    if isinstance(value, dict):
        total += sum(_str_bytes(str(k)) + 1 for k in value)
    unknown = [p for p in parts if id(p) not in sizes and isinstance(p, str | list | dict)]
    if unknown and len({id(p) for p in unknown}) == len(unknown):
        # their sizes together: the JSON list of them, less its brackets and commas
        total += _dumped(unknown) - 2 - (len(unknown) - 1)
        total += sum(part_bytes(p, sizes) for p in parts if id(p) in sizes)
        total += sum(part_bytes(p, sizes) for p in parts if not isinstance(p, str | list | dict))
    else:
        total += sum(part_bytes(p, sizes) for p in parts)
    sizes[id(value)] = (value, total)
    return total


def _dumped(value: Any) -> int:
    text = json.dumps(value, ensure_ascii=False, separators=(",", ":"), default=str)
    return len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))


def part_bytes(value: Any, sizes: Sizes) -> int:
    """The JSON size of a value that is built (and known) or is a part of the
    document or of a literal (measured, and remembered when large)."""
    known = sizes.get(id(value))
    if known is not None:
        return known[1]
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int | float):
        return len(repr(value))
    if isinstance(value, str) and len(value) < _REMEMBER_CHARS:
        return _str_bytes(value)
    if not isinstance(value, str | list | dict):
        return 64  # not JSON (an expression reference): printed as a short text
    size = _dumped(value)
    sizes[id(value)] = (value, size)
    return size


def _str_bytes(text: str) -> int:
    size = len(text) if text.isascii() else len(text.encode("utf-8", "surrogatepass"))
    escapes = len(_ESCAPED.findall(text)) if _ESCAPED.search(text) else 0
    return size + 2 + 5 * escapes


def own_bytes(value: Any) -> int:
    """What building `value` itself allocated, its parts aside: its slots, or
    the characters of a string."""
    if isinstance(value, list):
        return len(value) + 2
    if isinstance(value, dict):
        return 2 + sum(len(str(k)) + 4 for k in value)
    if isinstance(value, str):
        return len(value) + 2
    return 8
