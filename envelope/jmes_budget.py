"""What a JMESPath evaluation builds, counted while it builds it (`envelope.jmes`).

jmespath's interpreter shares values rather than copying them: `[@,@]` is a
new two-element list whose elements are one object. A chain of such steps
stays small in memory while the JSON it prints doubles at each step, so a
bound applied to the printed result comes too late, and a bound on memory
alone would let the printed result grow without end. Both are bounded here,
at each node of the tree, as it returns:

* the value a node builds (a list, an object, a projection, a slice, a
  function's result) is measured as the JSON it prints as, its shared parts
  once each (sizes are kept by object identity for the evaluation), and may
  not be larger than the budget;
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

import re
import time
from collections.abc import Iterable
from typing import Any

from jmespath import functions
from jmespath.visitor import Options, TreeInterpreter

from qdsl.dsl.errors import UsageError
from qdsl.dsl.limits import Limits

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
        size = json_bytes(value, self.sizes, stop_above=self.max_bytes)
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


def json_bytes(value: Any, sizes: Sizes, *, stop_above: int | None = None) -> int:
    """The bytes `value` prints as (compact JSON, UTF-8; an upper estimate for
    escapes), each shared part measured once; iterative, as values may be deep.
    With `stop_above`, a part found larger than it is returned at once."""
    if not isinstance(value, list | dict):
        return _scalar_bytes(value, sizes)
    known = sizes.get(id(value))
    if known is not None:
        return known[1]
    stack: list[tuple[Any, bool]] = [(value, False)]
    while stack:
        node, children_done = stack.pop()
        if id(node) in sizes:
            continue
        items = list(node.values()) if isinstance(node, dict) else node
        if not children_done:
            stack.append((node, True))
            stack.extend(
                (c, False) for c in items if isinstance(c, list | dict) and id(c) not in sizes
            )
            continue
        total = 2 + max(len(items) - 1, 0)
        if isinstance(node, dict):
            total += sum(_scalar_bytes(str(k), sizes) + 1 for k in node)
        for c in items:
            total += sizes[id(c)][1] if isinstance(c, list | dict) else _scalar_bytes(c, sizes)
        sizes[id(node)] = (node, total)
        if stop_above is not None and total > stop_above:
            return total
    return sizes[id(value)][1]


def _scalar_bytes(value: Any, sizes: Sizes) -> int:
    if isinstance(value, str):
        if len(value) < _REMEMBER_CHARS:
            return _str_bytes(value)
        known = sizes.get(id(value))
        if known is None:
            known = sizes[id(value)] = (value, _str_bytes(value))
        return known[1]
    if value is None or value is True:
        return 4
    if value is False:
        return 5
    if isinstance(value, int | float):
        return len(repr(value))
    return 64  # not JSON (an expression reference): printed as a short text


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
