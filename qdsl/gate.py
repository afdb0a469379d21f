"""The ingress gate: messages that are not questions never reach a planner.

Protocol replies ("B", "确认"), mode control ("退出需求模式"), action requests
("接入外部来源继续核实") and draft actions ("再出一版草稿") belong to the
conversation host, not to data. The lexicon is data: a caller passes its own.
A message is gated when, stripped of punctuation and politeness, it IS one of
the phrases (or a choice letter), not when it merely contains one.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from functools import cached_property

from qdsl.dsl.errors import PolicyError
from qdsl.dsl.textnorm import normalize_text


class GateKind(StrEnum):
    PROTOCOL_REPLY = "protocol_reply"
    MODE_CONTROL = "mode_control"
    ACTION_REQUEST = "action_request"
    DRAFT_ACTION = "draft_action"


DEFAULT_PHRASES: dict[GateKind, tuple[str, ...]] = {
    GateKind.PROTOCOL_REPLY: (
        "确认",
        "确定",
        "好的",
        "好",
        "可以",
        "行",
        "继续",
        "是的",
        "是",
        "对",
        "没问题",
        "同意",
        "不用了",
        "取消",
        "ok",
        "okay",
        "yes",
        "y",
        "no",
        "n",
        "sure",
        "continue",
        "go on",
        "go ahead",
        "confirm",
        "confirmed",
        "agreed",
        "cancel",
    ),
    GateKind.MODE_CONTROL: (
        "退出需求模式",
        "进入需求模式",
        "退出计划模式",
        "退出",
        "结束会话",
        "切换模式",
        "exit plan mode",
        "enter plan mode",
        "exit",
        "quit",
        "stop",
    ),
    GateKind.ACTION_REQUEST: (
        "接入外部来源继续核实",
        "接入外部来源",
        "联网核实",
        "继续核实",
        "去外部查一下",
        "search the web",
        "verify with external sources",
        "check external sources",
    ),
    GateKind.DRAFT_ACTION: (
        "再出一版草稿",
        "再出一版",
        "重新生成",
        "再写一版",
        "改一下草稿",
        "出一版草稿",
        "regenerate",
        "another draft",
        "new draft",
        "rewrite the draft",
    ),
}

# "A", "b", "选 B", "选择C", "option 2", "(c)": a choice among offered options.
DEFAULT_CHOICE = re.compile(
    r"^(?:选|选择|我选|option|choice|pick)?\s*[\(（]?\s*(?:[a-e]|[1-9])\s*[\)）]?$"
)

_EDGES = re.compile(r"^[\s\W_]+|[\s\W_]+$")
_POLITE = re.compile(r"^(?:请|麻烦|please)\s*|\s*(?:吧|吗|呢|啊|了|谢谢|please|thanks)$")


# A phrase as the gate finds it: (its place in the lexicon, its kind, the phrase).
_Hit = tuple[int, "GateKind", str]


@dataclass(frozen=True)
class GateLexicon:
    phrases: Mapping[GateKind, tuple[str, ...]] = field(default_factory=lambda: DEFAULT_PHRASES)
    choice: re.Pattern[str] | None = DEFAULT_CHOICE

    @cached_property
    def index(self) -> tuple[dict[str, _Hit], dict[str, _Hit]]:
        """Each phrase normalized, and normalized without spaces -> (its place in the
        lexicon, kind, phrase); the first phrase in order wins, as a scan would."""
        exact: dict[str, _Hit] = {}
        squashed: dict[str, _Hit] = {}
        order = 0
        for kind, phrases in self.phrases.items():
            for phrase in phrases:
                norm = normalize_text(phrase)
                exact.setdefault(norm, (order, kind, phrase))
                squashed.setdefault(norm.replace(" ", ""), (order, kind, phrase))
                order += 1
        return exact, squashed

    def extended(self, more: Mapping[GateKind, tuple[str, ...]]) -> GateLexicon:
        merged = {k: tuple(v) for k, v in self.phrases.items()}
        for kind, extra in more.items():
            merged[kind] = (*merged.get(kind, ()), *extra)
        return GateLexicon(phrases=merged, choice=self.choice)


_DEFAULT = GateLexicon()


@dataclass(frozen=True)
class GateDecision:
    gated: bool
    kind: GateKind | None = None
    matched: str | None = None


def _bare(text: str) -> str:
    text = normalize_text(text)
    for _ in range(3):
        stripped = _POLITE.sub("", _EDGES.sub("", text)).strip()
        if stripped == text:
            break
        text = stripped
    return text


def gate(message: str, lexicon: GateLexicon | None = None) -> GateDecision:
    """Whether `message` is a conversation move rather than a data question."""
    lex = lexicon or _DEFAULT
    bare = _bare(message)
    if not bare:
        return GateDecision(gated=False)
    exact, squashed = lex.index
    found = [
        hit
        for hit in (exact.get(bare), squashed.get(bare.replace(" ", "")))
        if hit is not None
    ]
    if found:
        _, kind, phrase = min(found, key=lambda hit: hit[0])
        return GateDecision(gated=True, kind=kind, matched=phrase)
    if lex.choice is not None and lex.choice.match(bare):
        return GateDecision(gated=True, kind=GateKind.PROTOCOL_REPLY, matched=bare)
    return GateDecision(gated=False)


# The router's decisions qdsl knows; only "internal" is planned, the others are
# refused as policy. Anything else is a caller's mistake (a usage error at the CLI).
ROUTE_MODES = ("internal", "external", "web", "hybrid")


def check_route(route_mode: str) -> None:
    """Only internal questions are planned; anything else is refused before planning."""
    if route_mode != "internal":
        raise PolicyError(
            "route_not_internal",
            f"route_mode {route_mode!r} is not answered from internal data",
            hint='send only route_mode="internal" questions to qdsl',
            details={"route_mode": route_mode},
        )
