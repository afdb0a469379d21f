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

from lark import Lark, Token
from lark.parsers.lalr_analysis import Shift

END = "$END"


class Refused(Exception):
    """The lean loop does not accept the text; Lark's own parse will say why."""


class _StateLexer:
    """One parser state's terminals: Lark's alternation regexes and callbacks."""

    __slots__ = ("callbacks", "ignore", "pattern")

    def __init__(self, basic: Any) -> None:
        scanner = basic.scanner  # built on first use; also builds `basic.callback`
        if len(scanner._mres) != 1:
            # Lark splits a state's alternation only past Python's 100 groups.
            raise TypeError("LeanParser needs one terminal regex per parser state")
        self.pattern: re.Pattern[str] = scanner._mres[0]
        self.callbacks: dict[str, Callable[[Token], Token]] = dict(basic.callback)
        self.ignore: frozenset[str] = frozenset(basic.ignore_types)
        if self.ignore & set(self.callbacks):
            raise TypeError("LeanParser skips ignored terminals: they may have no callback")


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


# One table entry: a shift (None, next state) or a reduction ((children count,
# callback, the rule's nonterminal), -1).
_Reduce = tuple[int, Callable[[list[Any]], Any], str]
_Entry = tuple[_Reduce | None, int]


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
        reductions: dict[Any, _Reduce] = {}
        self._table: dict[int, dict[str, _Entry]] = {}
        for state, row in table.states.items():
            entries: dict[str, _Entry] = {}
            for symbol, (action, arg) in row.items():
                if action is Shift:
                    entries[symbol] = (None, arg)
                else:
                    if arg not in reductions:
                        reductions[arg] = (len(arg.expansion), callbacks[arg], arg.origin.name)
                    entries[symbol] = (reductions[arg], -1)
            self._table[state] = entries
        if any(isinstance(key, str) for key in callbacks):
            raise TypeError("LeanParser shifts tokens as they are: no terminal callbacks")
        self._lexers = _Lexers(contextual.lexers)

    def parse(self, text: str) -> Any:
        """What Lark's `parse` returns for `text`, or `Refused`.

        One loop (no call per token): lex in the current state as Lark's
        contextual lexer does, then Lark's `feed_token` (reduce as the table
        says, then shift; at the end, reduce to the start rule)."""
        table, lexers, end_state = self._table, self._lexers, self._end
        state_stack = [self._start]
        value_stack: list[Any] = []
        pos, size = 0, len(text)
        while True:
            if pos < size:
                lexer = lexers[state_stack[-1]]
                match = lexer.pattern.match(text, pos)
                if match is None:
                    raise Refused
                kind = match.lastgroup or ""  # every alternative is a named group
                pos = match.end()
                if kind in lexer.ignore:
                    continue
                token = Token(kind, match.group())
                if kind in lexer.callbacks:
                    token = lexer.callbacks[kind](token)
                    kind = token.type
            else:
                token, kind = Token(END, ""), END
            while True:
                reduce, target = table[state_stack[-1]].get(kind, _NONE)
                if reduce is None:
                    # a shift (an end token never shifts: `target` is -1 for no entry)
                    if target < 0 or kind == END:
                        raise Refused
                    state_stack.append(target)
                    value_stack.append(token)
                    break
                count, callback, origin = reduce
                cut = len(value_stack) - count
                value = callback(value_stack[cut:])
                del value_stack[cut:]
                del state_stack[len(state_stack) - count :]
                reduce, target = table[state_stack[-1]][origin]
                if reduce is not None:
                    raise Refused
                state_stack.append(target)
                value_stack.append(value)
                if target == end_state and kind == END:
                    return value


_NONE: _Entry = (None, -1)
