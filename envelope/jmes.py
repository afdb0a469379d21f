"""JMESPath over stored envelopes, with qdsl's errors and bounds.

jmespath is the de-facto standard query language for JSON documents (AWS CLI,
Ansible), with a spec and a compliance suite; hand-rolling a path language
would give agents one more dialect to learn.

Every expression is a caller's (`refs get`, `--pick`, chain `$.` references,
MCP `get_ref`), so none is evaluated unbounded (`dsl.settings.limits`):

* its length, then its nesting, before jmespath's parser runs: the parser
  and the interpreter recurse once or more per level, and a few thousand
  levels were a RecursionError; nesting is estimated from the text (brackets,
  prefix and projection operators, literals included), then measured on the
  parsed tree (a left-deep chain such as `a[0][1]...` or `a|b|c...` is deep
  only there);
* what it builds, while it builds it (`jmes_budget`): `[@,@]` repeated doubles
  the result's size at each step while sharing its parts, so memory stays
  small until the result is printed (19 steps were gigabytes); every value a
  node builds is measured as the JSON it would print as, and the expression
  may build at most the bytes of the document it reads plus
  `jmespath_result_bytes`;
* its time: the evaluation stops after `jmespath_ms`.

Over a bound, a typed usage error (exit 2) naming the limit and its setting.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from qdsl.dsl.errors import UsageError
from qdsl.dsl.settings.limits import Limits, limits

if TYPE_CHECKING:
    from qdsl.envelope.jmes_budget import Sizes

# Characters that each open one level of the parser's recursion (or more).
_OPEN = "[{("
_CLOSE = "]})"
# Prefix operators (`!`, `&`) and projections (`*`, `[]`, `[?`) nest what
# follows them; `|`, `||` and `&&` chain left-deep in the tree. Counted over
# the whole text: an estimate never below the nesting the parser reaches.
_NESTING_OPS = frozenset("!&*?|")


def search(
    expression: str,
    document: Any,
    *,
    document_bytes: int = 0,
    store_bytes: int | None = None,
) -> Any:
    """The value of `expression` over `document`, bounded (see the module doc).

    `document_bytes` is the size of the stored document (its bytes may be
    selected whole); `store_bytes`, when the value may be stored as a ref, is
    the room the ref store's byte caps leave for it.
    """
    from jmespath.exceptions import JMESPathError

    from qdsl.envelope.jmes_budget import Budget, evaluate

    lim = limits()
    estimate = check_expression(expression, lim)
    try:
        parsed = _parse(expression)
    except JMESPathError as exc:
        raise bad_expression(expression, exc) from None
    except RecursionError:  # a guard only: the estimate keeps the parser well clear of it
        raise lim.too_large(
            "jmespath_depth", "the JMESPath expression's nesting", estimate, "levels"
        ) from None
    depth = tree_depth(parsed.parsed)
    if depth > lim.jmespath_depth:
        raise lim.too_large("jmespath_depth", "the JMESPath expression's nesting", depth, "levels")
    budget = Budget(lim, document_bytes)
    try:
        value = evaluate(parsed.parsed, document, budget)
        if store_bytes is not None:
            _check_room(value, budget.sizes, document_bytes, store_bytes)
    except (JMESPathError, TypeError) as exc:
        # TypeError: jmespath compares a string with a number as Python does
        # (`[?id > \`10\`]` over a string id), which raises
        raise bad_expression(expression, exc) from None
    except RecursionError:  # a guard only: the depth checks above keep well clear of it
        raise lim.too_large(
            "jmespath_depth", "the JMESPath expression's nesting", depth, "levels"
        ) from None
    return value


def _check_room(value: Any, sizes: Sizes, document_bytes: int, room: int) -> None:
    """Refuse a value the ref store's byte caps have no room for. One that was
    not built is a part of the document (or a literal), within the document's
    own bytes: it needs no measuring when the document fits."""
    from qdsl.envelope.jmes_budget import part_bytes

    if id(value) in sizes or document_bytes > room:
        size = part_bytes(value, sizes)
        if size > room:
            raise too_large_to_store(size, room)


def check_expression(expression: str, lim: Limits | None = None) -> int:
    """Refuse an expression too long or nested too deep for the parser to be run
    on it; its nesting estimate otherwise."""
    lim = lim or limits()
    if len(expression) > lim.jmespath_chars:
        raise lim.too_large(
            "jmespath_chars", "the JMESPath expression", len(expression), "characters"
        )
    depth = nesting_estimate(expression)
    if depth > lim.jmespath_depth:
        raise lim.too_large("jmespath_depth", "the JMESPath expression's nesting", depth, "levels")
    return depth


def nesting_estimate(expression: str) -> int:
    """An upper estimate of how deep the parser recurses on `expression`: the
    deepest bracket (inside JSON literals too) plus every nesting operator, the
    contents of quoted names, raw strings and JSON strings aside."""
    depth = deepest = operators = 0
    quote: str | None = None  # the quote of the string being read, if any
    in_literal = False  # inside `...`, whose JSON strings are "..."
    escaped = False
    for ch in expression:
        if escaped:  # as jmespath's lexer: a backslash takes the next character
            escaped = False
        elif ch == "\\":
            escaped = True
        elif in_literal and ch == "`":  # a literal ends here, inside a JSON string too
            in_literal, quote = False, None
        elif quote is not None:
            if ch == quote:
                quote = None
        elif ch == "`":
            in_literal = True
        elif ch == '"' or (ch == "'" and not in_literal):
            quote = ch
        elif ch in _OPEN:
            depth += 1
            deepest = max(deepest, depth)
        elif ch in _CLOSE:
            depth = max(depth - 1, 0)
        elif ch in _NESTING_OPS and not in_literal:
            operators += 1
    return deepest + operators


def tree_depth(node: Any) -> int:
    """The depth of a parsed expression's tree (iterative: it may be deep)."""
    deepest = 0
    stack = [(node, 1)]
    while stack:
        current, depth = stack.pop()
        deepest = max(deepest, depth)
        children = current.get("children", ()) if isinstance(current, dict) else ()
        stack.extend((child, depth + 1) for child in children if isinstance(child, dict))
    return deepest


def _parse(expression: str) -> Any:
    import jmespath

    return jmespath.compile(expression)


def bad_expression(expression: str, exc: Exception) -> UsageError:
    from jmespath.exceptions import EmptyExpressionError, ParseError

    shown = expression if len(expression) <= 200 else expression[:200] + "…"
    # jmespath's message of a failed evaluation quotes the value it failed on:
    # the name of the failure says enough
    what = (
        "not a valid JMESPath expression"
        if isinstance(exc, ParseError | EmptyExpressionError)
        else "the JMESPath expression failed on this document"
    )
    return UsageError(
        "bad_expression",
        f"{what}: {shown!r} ({type(exc).__name__})",
        hint="for example data.items[0].id or data.items[*].id; see jmespath.org",
    )


def too_large_to_store(size: int, room: int) -> UsageError:
    return UsageError(
        "result_over_ref_cap",
        f"the expression selects about {size} bytes, more than the ref store's byte caps "
        f"leave for one result ({room} bytes)",
        hint="select a part (e.g. data.items[0:50] or length(data.items)); the operator "
        "sets the caps with QDSL_REF_MAX_BYTES / QDSL_REF_TENANT_MAX_BYTES",
        retryable=False,
        details={"bytes": size, "max": room},
    )
