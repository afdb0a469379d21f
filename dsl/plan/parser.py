"""Plan text -> raw IR: ``parse_text``.

The grammar (``grammar.lark``) is compiled once, lazily, as an LALR(1) parser
with the contextual lexer, and cached by Lark across processes in the private
state dir, sealed so that no file but one qdsl wrote is ever loaded
(`qdsl.dsl.plan.grammar_cache`). A syntax error
becomes a ``PlanError`` (``validation/syntax_error``) with the line, column, a
caret excerpt, the expected tokens in human words and a hint for the usual
mistakes (``==``, a bare word where a quoted value belongs, ``;``).

Positions cost about a third of a parse, and only errors read them. So a
caller that needs no spans (``spans=False``: the compile path, which redoes a
refused plan with spans) gets a second parser that transforms while it parses
(Lark's own LALR loop with the transformer embedded: no parse tree) and
propagates no positions; whenever that parser or its
transformer refuses the text, the text is parsed again with positions, and
that parse raises the error, so every refusal is exactly the located one.
"""

from __future__ import annotations

import difflib
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lark import Lark, Token, Tree, UnexpectedCharacters, UnexpectedEOF, UnexpectedInput
from lark.exceptions import UnexpectedToken, VisitError

from qdsl.dsl.errors import PlanError, QdslError
from qdsl.dsl.ir import Plan
from qdsl.dsl.plan.grammar_cache import grammar_cache
from qdsl.dsl.plan.transform import _HANDLERS, PlanTransformer, excerpt

if TYPE_CHECKING:
    from qdsl.dsl.catalog import Catalog

GRAMMAR_FILE = "grammar.lark"

# Regex terminals in words a person understands; literal terminals show as written.
_TERMINAL_WORDS: dict[str, str] = {
    "NAME": "identifier",
    "INT": "integer",
    "NUMBER": "number",
    "STRING": "quoted string",
    "COMPARE": "comparison (= != ~= contains > >= < <=)",
    "DIRECTION": "asc or desc",
    "$END": "end of input",
}

# Up to this many expected tokens are spelled out in the hint.
_FEW_EXPECTED = 8


def grammar_text() -> str:
    # Next to this module (not importlib.resources: under pytest `dsl` can resolve as a
    # namespace package spanning tests/dsl too).
    return Path(__file__).with_name(GRAMMAR_FILE).read_text(encoding="utf-8")


def make_parser(parser: str = "lalr", *, cache: bool = True) -> Lark:
    """A fresh Lark parser for the plan grammar (``"lalr"`` or, for comparison, ``"earley"``).

    A parser loaded from Lark's cache has no ``.grammar``; pass ``cache=False``
    for tools that read it, such as ``hypothesis.extra.lark.from_lark``.
    """
    options: dict[str, Any] = {
        "parser": parser,
        "propagate_positions": True,
        "maybe_placeholders": True,
    }
    if parser != "lalr" or not cache:
        if parser == "lalr":
            options["lexer"] = "contextual"
        return Lark(grammar_text(), **options)
    # Lark's own default (`cache=True`) is a pickle in the system temp dir under a
    # name anyone can work out; `grammar_cache` loads only a file qdsl sealed.
    options["lexer"] = "contextual"
    text = grammar_text()
    with grammar_cache("located", f"{text}\n{sorted(options.items())}") as where:
        return Lark(text, cache=where, **options)


@functools.cache
def get_parser() -> Lark:
    """The process-wide LALR parser, built on first use."""
    return make_parser("lalr")


class _Embedded:
    """The transformer Lark runs at each reduction of the unlocated parser.

    Lark looks a rule's callback up by the rule's name: each rule of the
    transformer's table answers with its handler, bound here (one call per
    reduction); any other name falls to `__default__`. Stateless (the text is
    needed only to locate errors, and errors are reported by the located
    parse), so one instance serves every thread."""

    def __init__(self) -> None:
        self._transformer = PlanTransformer("")

    def __getattr__(self, name: str) -> Callable[[list[Any]], Any]:
        handler = _HANDLERS.get(name)
        if handler is None or name.startswith("_"):
            raise AttributeError(name)
        return functools.partial(handler, self._transformer, None)

    def __default__(self, data: Any, children: list[Any], meta: Any) -> Any:
        if data.startswith("_"):
            # Lark's own helper rules (`clause*` is `__start_star_0`): their
            # parent splices in the children of the tree built here.
            return Tree(data, children)
        # a rule without a handler: the transformer's own refusal
        return self._transformer.__default__(data, children, meta)


@functools.cache
def _unlocated_parser() -> Lark:
    """The plan grammar with no positions and the transformer run as it parses
    (Lark's one-pass LALR: no parse tree is built)."""
    options: dict[str, Any] = {
        "parser": "lalr",
        "lexer": "contextual",
        "propagate_positions": False,
        "maybe_placeholders": True,
    }
    text = grammar_text()
    with grammar_cache("unlocated", f"{text}\n{sorted(options.items())}") as where:
        return Lark(text, cache=where, transformer=_Embedded(), **options)


def example_plan(catalog: Catalog | None) -> str:
    """The smallest plan, for a hint: over the catalog's first entity when one is at
    hand (the parser itself knows no catalog), else with a placeholder."""
    entity = next(iter(catalog.entities), None) if catalog is not None else None
    return f"count {entity or '<entity_type>'}"


def parse_text(text: str, *, catalog: Catalog | None = None, spans: bool = True) -> Plan:
    """Parse plan text into the raw IR (names unbound, defaults unfilled, spans set).

    `catalog` only lends its entity names to the hints of syntax errors.
    `spans=False` leaves the spans out (faster); errors are located all the same."""
    if text.startswith("\ufeff"):
        text = text[1:]
    if not text.strip():
        raise PlanError(
            "empty_plan",
            "the plan is empty",
            hint=f'a plan needs at least "<query_type> <entity_type>", '
            f'e.g. "{example_plan(catalog)}"',
        )
    if not spans:
        try:
            plan = _unlocated_parser().parse(text)
        except Exception:
            pass  # any refusal: the located parse below raises it, with its position
        else:
            assert isinstance(plan, Plan)
            return plan
    try:
        tree = get_parser().parse(text)
    except UnexpectedInput as error:
        raise syntax_error(text, error, example=example_plan(catalog)) from None
    try:
        return PlanTransformer(text).transform(tree)
    except VisitError as error:
        if isinstance(error.orig_exc, QdslError):
            raise error.orig_exc from None
        raise


def _human(name: str) -> str:
    if name in _TERMINAL_WORDS:
        return _TERMINAL_WORDS[name]
    try:
        pattern = get_parser().get_terminal(name).pattern
    except KeyError:
        return name
    return str(pattern.value) if pattern.type == "str" else name


def _found(error: UnexpectedInput) -> str:
    """What the parser ran into, as written (or "end of input")."""
    if isinstance(error, UnexpectedEOF):
        return "end of input"
    if isinstance(error, UnexpectedToken):
        token: Token = error.token
        return "end of input" if token.type == "$END" else str(token)
    assert isinstance(error, UnexpectedCharacters)
    return str(error.char)


def _position(text: str, error: UnexpectedInput, found: str) -> tuple[int, int]:
    line, column = getattr(error, "line", -1), getattr(error, "column", -1)
    at_end = found == "end of input"
    if not at_end and isinstance(line, int) and line > 0 and isinstance(column, int) and column > 0:
        return line, column
    # End of input: point just past the last written character.
    lines = text.rstrip().split("\n")
    return len(lines), len(lines[-1]) + 1


def _expected(error: UnexpectedInput) -> list[str]:
    names: set[str] = set()
    if isinstance(error, UnexpectedToken):
        names = set(error.accepts or error.expected)
    elif isinstance(error, UnexpectedCharacters):
        names = set(error.allowed or ())
    elif isinstance(error, UnexpectedEOF):
        names = set(error.expected)
    return sorted({_human(name) for name in names if not name.startswith("__IGNORE")})


def _diagnose(
    text: str, error: UnexpectedInput, found: str, expected: list[str], example: str
) -> str | None:
    """A targeted hint for a mistake people make, or None."""
    position = getattr(error, "pos_in_stream", None)
    if found == ";":
        return "`;` is not part of the plan language: one plan, no statement separators"
    if found == "'":
        return 'quote strings with double quotes: "value"'
    if found == "=" and isinstance(position, int) and text[position - 1 : position] == "=":
        return "compare with a single `=` (not `==`)"
    if found in ("&", "&&", "|", "||", "or", "OR"):
        return "conditions are joined with `and`; for alternatives use `field in (a, b)`"
    if "quoted string" in expected and found and (found[0].isalpha() or found[0] == "_"):
        return f'put the value in double quotes: "{found}"'
    keywords = [word for word in expected if word.replace("_", "").isalpha()]
    close = difflib.get_close_matches(found.casefold(), keywords, n=1, cutoff=0.7)
    if close and close[0] != found:
        return f'did you mean "{close[0]}"?'
    if found == "end of input" and len(text.split()) < 2:
        return f"a plan starts with <query_type> <entity_type>, e.g. `{example}`"
    return None


def syntax_error(
    text: str, error: UnexpectedInput, *, example: str = "count <entity_type>"
) -> PlanError:
    found = _found(error)
    line, column = _position(text, error, found)
    expected = _expected(error)
    hint = _diagnose(text, error, found, expected, example)
    if hint is None:
        if 0 < len(expected) <= _FEW_EXPECTED:
            hint = "expected " + " or ".join(f"`{e}`" for e in expected)
        else:
            hint = "see docs/plan-language.md (`qdsl fmt` prints a canonical plan)"
    shown = "end of input" if found == "end of input" else repr(found)
    return PlanError(
        "syntax_error",
        f"unexpected {shown} at line {line}, column {column}",
        hint=hint,
        details={
            "line": line,
            "column": column,
            "excerpt": excerpt(text, line, column),
            "expected": expected,
            "found": found,
        },
    )
