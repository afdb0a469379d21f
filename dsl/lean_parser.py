"""Lark's LALR(1) tables and contextual lexer, run by a lean loop: `LeanParser`.

Lark's own loop pays, per token, for a lexer generator, a line and column
counter, a token with eight positions and a parser-state call; for a plan of
fifteen tokens that is most of the parse. This loop runs the same automaton:
the parse table, the per-state terminal regexes and the reduction callbacks
(with the plan transformer embedded) are Lark's own, taken from a `Lark`
built with ``parser="lalr"``, ``lexer="contextual"`` and a ``transformer``. So
it picks the same terminal Lark's contextual lexer picks in each state (the
state's alternation, keyword retyping included) and reduces the same rules
in the same order; it only tracks no positions.

It reports no errors: on any input Lark would refuse (or any it cannot follow)
it raises `Refused`, and the caller parses again with Lark itself, which
raises the located error.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from lark import Lark
from lark.lexer import UnlessCallback
from lark.parse_tree_builder import ExpandSingleChild
from lark.parsers.lalr_analysis import Shift

END = "$END"


class Refused(Exception):
    """The lean loop does not accept the text; Lark's own parse will say why."""


class _StateLexer:
    """One parser state's terminals: Lark's alternation regex, the terminals it
    ignores, and its keyword retyping (Lark's `UnlessCallback`: a NAME that
    spells a keyword of this state becomes that keyword), remembered per word."""

    __slots__ = ("_fullmatch", "ignore", "match", "retype")

    def __init__(self, basic: Any) -> None:
        scanner = basic.scanner  # built on first use; also builds `basic.callback`
        if len(scanner._mres) != 1:
            # Lark splits a state's alternation only past Python's 100 groups.
            raise TypeError("LeanParser needs one terminal regex per parser state")
        self.match: Callable[[str, int], re.Match[str] | None] = scanner._mres[0].match
        self.ignore: frozenset[str] = frozenset(basic.ignore_types)
        self._fullmatch: dict[str, Callable[[str], str | None]] = {}
        # per retyped terminal, each word seen and the terminal it is lexed as
        self.retype: dict[str, dict[str, str]] = {}
        for kind, callback in basic.callback.items():
            if type(callback) is not UnlessCallback or kind in self.ignore:
                raise TypeError("LeanParser follows Lark's keyword retyping only")
            self._fullmatch[kind] = callback.scanner.fullmatch
            self.retype[kind] = {}

    def retyped(self, kind: str, word: str) -> str:
        """What `UnlessCallback` makes of `word` lexed as `kind` (kept for next time)."""
        found = self._fullmatch[kind](word) or kind
        seen = self.retype[kind]
        if len(seen) < _MAX_WORDS:
            seen[word] = found
        return found


# Words remembered per retyped terminal: a bound against text made to fill memory.
_MAX_WORDS = 4096


class _Lexers(dict[int, _StateLexer]):
    """Each parser state's lexer, built when the state is first reached (as Lark
    builds its own): compiling every state's regexes up front would cost a
    one-shot command more than its parse."""

    def __init__(self, basic_by_state: dict[int, Any]) -> None:
        super().__init__()
        self._basic = basic_by_state
        self._built: dict[int, _StateLexer] = {}

    def __missing__(self, state: int) -> _StateLexer:
        basic = self._basic[state]
        lexer = self._built.get(id(basic))
        if lexer is None:
            lexer = self._built[id(basic)] = _StateLexer(basic)
        self[state] = lexer
        return lexer


# One table entry: a shift (-1, None, next state) or a reduction (children
# count, callback, the rule's nonterminal).
_Entry = tuple[int, Callable[[list[Any]], Any] | None, Any]


class LeanParser:
    def __init__(self, lark: Lark, start: str = "start") -> None:
        frontend = lark.parser
        lalr = frontend.parser
        table = lalr._parse_table
        contextual = frontend.lexer
        if frontend.lexer_conf.postlex is not None or not hasattr(contextual, "lexers"):
            raise TypeError("LeanParser needs Lark's contextual lexer without a post-lexer")
        self._start: int = table.start_states[start]
        self._end: int = table.end_states[start]
        callbacks: dict[Any, Callable[[Any], Any]] = lalr.parser.callbacks
        # Rules hash in Python: each becomes a tuple once, here.
        reductions: dict[Any, _Entry] = {}
        nonterminals = {rule.origin.name for rule in callbacks if not isinstance(rule, str)}
        self._table: dict[int, dict[str, _Entry]] = {}
        # after a reduction: the state the rule's nonterminal leads to
        self._goto: dict[int, dict[str, int]] = {}
        for state, row in table.states.items():
            entries: dict[str, _Entry] = {}
            goto = self._goto[state] = {}
            for symbol, (action, arg) in row.items():
                if symbol in nonterminals:
                    if action is not Shift:
                        raise TypeError("LeanParser expects a goto for every nonterminal")
                    goto[symbol] = arg
                elif action is Shift:
                    if symbol != END:  # an end token never shifts
                        entries[symbol] = (-1, None, arg)
                else:
                    if arg not in reductions:
                        callback = callbacks[arg]
                        if type(callback) is ExpandSingleChild and len(arg.expansion) == 1:
                            callback = _SAME  # what it returns for one child
                        reductions[arg] = (len(arg.expansion), callback, arg.origin.name)
                    entries[symbol] = reductions[arg]
            self._table[state] = entries
        if any(isinstance(key, str) for key in callbacks):
            raise TypeError("LeanParser shifts tokens as they are: no terminal callbacks")
        self._lexers = _Lexers(contextual.lexers)

    def parse(self, text: str) -> Any:
        """What Lark's `parse` returns for `text`, or `Refused`.

        One loop (no call per token): lex in the current state as Lark's
        contextual lexer does, then Lark's `feed_token` (reduce as the table
        says, then shift; at the end, reduce to the start rule). Tokens are
        shifted as plain strings: the reductions read only their text (and
        tell a STRING by its quote)."""
        table, goto, lexers, end_state = self._table, self._goto, self._lexers, self._end
        state = self._start
        state_stack = [state]
        value_stack: list[Any] = []
        pos, size = 0, len(text)
        while True:
            if pos < size:
                lexer = lexers[state]
                match = lexer.match(text, pos)
                if match is None:
                    raise Refused
                kind = match.lastgroup or ""  # every alternative is a named group
                pos = match.end()
                if kind in lexer.ignore:
                    continue
                word = match.group()
                seen = lexer.retype.get(kind)
                if seen is not None:
                    kind = seen.get(word) or lexer.retyped(kind, word)
            else:
                word, kind = "", END
            while True:
                entry = table[state].get(kind)
                if entry is None:
                    raise Refused
                count, callback, target = entry
                if callback is None:
                    state = target
                    state_stack.append(state)
                    value_stack.append(word)
                    break
                if callback is _SAME:  # a `?rule` of one child: that child
                    state_stack.pop()
                else:
                    cut = len(value_stack) - count
                    value = callback(value_stack[cut:])
                    del value_stack[cut:]
                    del state_stack[cut + 1 :]
                    value_stack.append(value)
                state = goto[state_stack[-1]][target]
                state_stack.append(state)
                if state == end_state and kind == END:
                    return value_stack[-1]


def _same(children: list[Any]) -> Any:
    return children[0]


_SAME = _same
