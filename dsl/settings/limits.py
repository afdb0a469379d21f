"""Input bounds: how much qdsl reads, parses and compiles before refusing.

Every input a caller controls is bounded, and a refusal names the limit and
the setting that raises it. Each limit is read from its environment variable,
then from `[limits]` in `<state dir>/config.toml`, then its default (the same
order as the `[io]` settings of the ref store).

| limit | env | config `[limits]` | default |
| --- | --- | --- | --- |
| bytes read from one input channel | QDSL_MAX_INPUT_BYTES | input_bytes | 4 MiB |
| catalog file size | QDSL_MAX_CATALOG_BYTES | catalog_bytes | 1 MiB |
| plan text or JSON size | QDSL_MAX_PLAN_BYTES | plan_bytes | 64 KiB |
| characters of one filter value | QDSL_MAX_VALUE_CHARS | value_chars | 1000 |
| values of one list filter | QDSL_MAX_LIST_ITEMS | list_items | 200 |
| filters of one plan | QDSL_MAX_FILTERS | filters | 32 |
| JSON nesting depth | QDSL_MAX_JSON_DEPTH | json_depth | 64 |
| tenant id length | QDSL_MAX_TENANT_CHARS | tenant_chars | 128 |
| grams of one text-fallback term | QDSL_MAX_FALLBACK_GRAMS | fallback_grams | 100 |
| characters of a JMESPath expression | QDSL_MAX_JMESPATH_CHARS | jmespath_chars | 4096 |
| nesting depth of a JMESPath expression | QDSL_MAX_JMESPATH_DEPTH | jmespath_depth | 64 |
| bytes JMESPath may build | QDSL_MAX_JMESPATH_RESULT_BYTES | jmespath_result_bytes | 4 MiB |
| time one JMESPath evaluation may take | QDSL_MAX_JMESPATH_MS | jmespath_ms | 5000 |

Exceeding a channel, catalog, JSON-depth or JMESPath bound is a usage error
(exit 2); a plan over its bounds is a validation error (exit 3).

The JMESPath bounds hold for every expression a caller writes (`refs get`,
`--pick`, chain `$.` references, MCP `get_ref`): its length and nesting are
checked before jmespath's recursive parser sees it, and what it builds is
counted while it is evaluated (`qdsl.envelope.jmes`): beyond the bytes of the
document it reads, it may build `jmespath_result_bytes` more, within
`jmespath_ms`.

`fallback_grams` bounds what the text index is asked, not how long a value is:
the fallback finds a term through the distinct character pairs (bigrams) of
its normalized text, each bound once per term slot and once more in their
union, so a term costs one index probe per gram and up to 16 parameters per
gram in one statement. The default keeps the worst plan (`filters` fact
filters, 8 spellings each) inside PostgreSQL's 65,535 parameters per statement
and a term's candidate lookup to a few index probes; "x" * 1000 has one gram,
a 101-character phrase of distinct pairs has 100. The executor checks it
before any statement runs (`qdsl.executor.compile.prepare`).
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, fields
from datetime import UTC, datetime
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, BinaryIO

from qdsl.dsl.errors import PlanError, QdslError, UsageError
from qdsl.dsl.settings.config import STATE_ROOT_ENV, config_table, environ_key, state_root

if TYPE_CHECKING:
    # annotations only: the CLI checks its input bounds before pydantic loads
    from qdsl.dsl.ir import Plan

KIB = 1024


@dataclass(frozen=True)
class Limits:
    input_bytes: int = 4 * KIB * KIB
    catalog_bytes: int = KIB * KIB
    plan_bytes: int = 64 * KIB
    value_chars: int = 1000
    list_items: int = 200
    filters: int = 32
    json_depth: int = 64
    tenant_chars: int = 128
    fallback_grams: int = 100
    jmespath_chars: int = 4 * KIB
    jmespath_depth: int = 64
    jmespath_result_bytes: int = 4 * KIB * KIB
    jmespath_ms: int = 5000

    def setting(self, name: str) -> str:
        """How a caller raises limit `name`."""
        return f"QDSL_MAX_{name.upper()} or [limits] {name} in config.toml"

    def too_large(self, name: str, what: str, size: int, unit: str) -> UsageError:
        limit = getattr(self, name)
        return UsageError(
            f"{name}_exceeded",
            f"{what} is over the limit of {limit} {unit} ({size} or more)",
            hint=f"send less, or raise the limit with {self.setting(name)}",
            retryable=False,
            details={"limit": name, "max": limit, "unit": unit, "setting": self.setting(name)},
        )

    def plan_over(self, name: str, what: str, size: int, unit: str) -> PlanError:
        limit = getattr(self, name)
        return PlanError(
            f"{name}_exceeded",
            f"{what} is over the limit of {limit} {unit} ({size})",
            hint=f"narrow the plan, or raise the limit with {self.setting(name)}",
            retryable=False,
            details={"limit": name, "max": limit, "unit": unit, "setting": self.setting(name)},
        )


def _positive(raw: Any, where: str, default: int) -> int:
    text = str(raw).strip()
    if isinstance(raw, bool) or not re.fullmatch(r"[0-9]{1,12}", text) or int(text) < 1:
        raise UsageError(
            "bad_setting",
            f"{where} must be a positive integer, got {raw!r}",
            hint=f"set {where} to a number such as {default}",
            retryable=False,
        )
    return int(text)


def read_limits(env: Mapping[str, str] | None = None, root: Path | None = None) -> Limits:
    """The limits for this environment (env, then config, then defaults)."""
    env = os.environ if env is None else env
    config: dict[str, Any] | None = None
    values: dict[str, int] = {}
    for f in fields(Limits):
        default = f.default
        assert isinstance(default, int)
        env_name = f"QDSL_MAX_{f.name.upper()}"
        if env.get(env_name, "").strip():
            values[f.name] = _positive(env[env_name], env_name, default)
            continue
        if config is None:
            root = root if root is not None else state_root(env)
            # An unreadable file is reported by the [io] settings; limits keep their safe defaults.
            config = config_table(root, "limits", unreadable_ok=True)
        if f.name in config:
            values[f.name] = _positive(config[f.name], f"[limits] {f.name}", default)
    return Limits(**values)


@lru_cache(maxsize=8)
def _cached(key: tuple[tuple[str, str], ...], root: str) -> Limits:
    return read_limits(dict(key), Path(root) if root else None)


# Every variable read_limits reads: the key of its cache. Looking up these few
# is far cheaper than scanning the whole environment on every call.
_ENV_NAMES = (*(f"QDSL_MAX_{f.name.upper()}" for f in fields(Limits)), *STATE_ROOT_ENV)


def limits() -> Limits:
    """The limits of this process's environment (cached per environment), or
    those a request read when it began (`held_limits`)."""
    held = _HELD.get()
    if held is not None:
        return held
    key = environ_key(_ENV_NAMES)
    hit = _BY_KEY.get(key)
    if hit is None:
        # built from the key itself: the environment may have changed since
        values = key
        hit = _BY_KEY[key] = _cached(
            tuple((n, v) for n, v in zip(_ENV_NAMES, values, strict=True) if v is not None), ""
        )
        if len(_BY_KEY) > 8:
            _BY_KEY.pop(next(iter(_BY_KEY)))
    return hit


_BY_KEY: dict[tuple[str | None, ...], Limits] = {}
_HELD: ContextVar[Limits | None] = ContextVar("qdsl_held_limits", default=None)


@contextmanager
def held_limits() -> Iterator[None]:
    """One request's limits: read once where it begins, and what `limits()` gives
    everywhere inside it (in this context and the threads it hands work to), so
    the request's steps do not each read the environment again. Settings that
    cannot be read are not held: the step that needs them refuses, as before."""
    try:
        lim = limits()
    except QdslError:
        yield
        return
    token = _HELD.set(lim)
    try:
        yield
    finally:
        _HELD.reset(token)


_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
_BRACKET = re.compile(r"[\[\]{}]")


def check_json_depth(text: str, what: str, limit: Limits | None = None) -> None:
    """Refuse JSON nested deeper than the limit before any parser recurses into it."""
    lim = limit or limits()
    # Nesting is never deeper than the number of opening brackets: a plan with
    # fewer than the limit (every real one) needs no scan.
    if text.count("[") + text.count("{") <= lim.json_depth:
        return
    depth = 0
    for m in _BRACKET.finditer(_STRING.sub("", text)):
        if m.group() in "[{":
            depth += 1
            if depth > lim.json_depth:
                raise lim.too_large("json_depth", f"{what}'s nesting", depth, "levels")
        else:
            depth -= 1


def check_text_size(text: str, name: str, what: str, limit: Limits | None = None) -> None:
    """Refuse text over a byte limit (UTF-8 bytes; characters bound them from below)."""
    lim = limit or limits()
    bound = getattr(lim, name)
    if len(text) * 4 <= bound:  # UTF-8 takes at most 4 bytes per character
        return
    if len(text) > bound or len(text.encode("utf-8", "surrogatepass")) > bound:
        raise lim.too_large(name, what, len(text.encode("utf-8", "surrogatepass")), "bytes")


def check_plan_limits(plan: Plan, limit: Limits | None = None) -> None:
    """Refuse a plan with too many filters, too long a list or too long a value.

    Checked where every plan passes (loading and the executor), whoever wrote it:
    a caller, an LLM planner, or a Python program building the IR directly.
    """
    lim = limit or limits()
    if len(plan.filters) > lim.filters:
        raise lim.plan_over("filters", "the plan's number of filters", len(plan.filters), "filters")
    refs = plan.scope.referenced_objects
    if len(refs) > lim.list_items:
        raise lim.plan_over("list_items", "scope.referenced_objects", len(refs), "items")
    for i, f in enumerate(plan.filters):
        values = f.value if isinstance(f.value, tuple) else (f.value,)
        if len(values) > lim.list_items:
            raise lim.plan_over("list_items", f"the value list of filter {i}", len(values), "items")
        for v in values:
            # the message is written only for a value it refuses
            if isinstance(v, str) and (len(v) > lim.value_chars or has_surrogate(v)):
                _check_text(v, f"a value of filter {i}", lim)
    texts = [plan.scope.project_id, *(r.id for r in refs)]
    for text in texts:
        if text is not None:
            _check_text(text, "a scope value", lim)


def check_bindable(plan: Plan) -> None:
    """Refuse numbers no database column holds (beyond 64-bit integers, NaN,
    infinities): the plan language writes them, the executor cannot bind them."""
    for i, f in enumerate(plan.filters):
        values = f.value if isinstance(f.value, tuple) else (f.value,)
        for v in values:
            if _out_of_range(v):
                raise PlanError(
                    "value_out_of_range",
                    f"a value of filter {i} is out of range ({v!r:.40})",
                    hint="use a finite number within the 64-bit integer range",
                    retryable=False,
                    details={"filter": i},
                )


_INT64 = 2**63 - 1


def _out_of_range(value: object) -> bool:
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return not -_INT64 <= value <= _INT64
    return isinstance(value, float) and not math.isfinite(value)


def _check_text(text: str, what: str, lim: Limits) -> None:
    if len(text) > lim.value_chars:
        raise lim.plan_over("value_chars", what, len(text), "characters")
    if has_surrogate(text):
        raise PlanError(
            "bad_text",
            f"{what} holds a lone surrogate (an escape such as \\ud800 that is no character)",
            hint="send text as UTF-8; escape a character outside the BMP as a surrogate pair",
            retryable=False,
        )


def read_bounded(stream: BinaryIO, name: str, what: str, limit: Limits | None = None) -> bytes:
    """At most the limit's bytes from `stream`: one more is read to tell "over"."""
    lim = limit or limits()
    bound = getattr(lim, name)
    data = stream.read(bound + 1)
    if len(data) > bound:
        raise lim.too_large(name, what, len(data), "bytes")
    return data


def read_file_bounded(path: str | os.PathLike[str], name: str, what: str) -> bytes:
    """The bytes of file `path`, bounded like `read_bounded` (OSError passes on)."""
    with open(path, "rb") as stream:
        return read_bounded(stream, name, what)


def has_surrogate(text: str) -> bool:
    """A lone surrogate (from a `\\ud800` escape or undecodable argv bytes) cannot be
    encoded, stored or printed: every text channel refuses it."""
    return not text.isascii() and _SURROGATE.search(text) is not None


_SURROGATE = re.compile("[\ud800-\udfff]")


# The clock is bounded so that freshness windows (up to a century) and dates
# stay representable: year 1 minus a freshness window overflowed.
MIN_NOW = datetime(1900, 1, 1, tzinfo=UTC)
MAX_NOW = datetime(9000, 1, 1, tzinfo=UTC)


def check_now(now: datetime) -> datetime:
    """`now` itself (aware, any zone) if it lies within 1900..9000, else a usage error."""
    aware = now if now.tzinfo is not None else now.replace(tzinfo=UTC)
    try:
        inside = MIN_NOW <= aware <= MAX_NOW
    except OverflowError:  # a zone offset pushing year 1 or 9999 over the edge
        inside = False
    if not inside:
        raise UsageError(
            "bad_now",
            f"the clock ({now.isoformat()}) is outside {MIN_NOW.year}..{MAX_NOW.year}",
            hint="give --now / QDSL_NOW as a real date, e.g. 2026-11-01T00:00:00Z",
            retryable=False,
        )
    return now
