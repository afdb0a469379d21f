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

    __slots__ = ("callbacks", "ignore", "patterns")

    def __init__(self, basic: Any) -> None:
        scanner = basic.scanner  # built on first use; also builds `basic.callback`
        self.patterns: tuple[re.Pattern[str], ...] = tuple(scanner._mres)
        self.callbacks: dict[str, Callable[[Token], Token]] = dict(basic.callback)
        self.ignore: frozenset[str] = frozenset(basic.ignore_types)


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
        # Terminals a transformer turns into values as they are shifted (none here, usually).
        self._on_shift = {k: f for k, f in callbacks.items() if isinstance(k, str)}
        by_lexer: dict[int, _StateLexer] = {}
        self._lexers: dict[int, _StateLexer] = {}
        for state, basic in contextual.lexers.items():
            if id(basic) not in by_lexer:
                by_lexer[id(basic)] = _StateLexer(basic)
            self._lexers[state] = by_lexer[id(basic)]
        for lexer in by_lexer.values():
            if lexer.ignore & set(lexer.callbacks):
                raise TypeError("LeanParser skips ignored terminals: they may have no callback")

    def parse(self, text: str) -> Any:
        """What Lark's `parse` returns for `text`, or `Refused`."""
        lexers = self._lexers
        stacks: tuple[list[int], list[Any]] = ([self._start], [])
        pos, size = 0, len(text)
        while pos < size:
            lexer = lexers[stacks[0][-1]]
            for pattern in lexer.patterns:
                match = pattern.match(text, pos)
                if match is not None:
                    break
            else:
                raise Refused
            kind = match.lastgroup
            assert kind is not None
            pos = match.end()
            if kind in lexer.ignore:
                continue
            token = Token(kind, match.group())
            if kind in lexer.callbacks:
                token = lexer.callbacks[kind](token)
            self._feed(stacks, token)
        return self._feed(stacks, Token(END, ""))

    def _feed(self, stacks: tuple[list[int], list[Any]], token: Token) -> Any:
        """Lark's `feed_token`: reduce as the table says, then shift `token`; for
        the end token, reduce to the start rule and return its value."""
        table, on_shift = self._table, self._on_shift
        state_stack, value_stack = stacks
        kind = token.type
        is_end = kind == END
        while True:
            entry = table[state_stack[-1]].get(kind)
            if entry is None:
                raise Refused
            reduce, target = entry
            if reduce is None:
                if is_end:
                    raise Refused
                state_stack.append(target)
                value_stack.append(on_shift[kind](token) if kind in on_shift else token)
                return None
            count, callback, origin = reduce
            if count:
                children = value_stack[-count:]
                del state_stack[-count:]
                del value_stack[-count:]
            else:
                children = []
            value = callback(children)
            reduce, target = table[state_stack[-1]][origin]
            if reduce is not None:
                raise Refused
            state_stack.append(target)
            value_stack.append(value)
            if is_end and target == self._end:
                return value
