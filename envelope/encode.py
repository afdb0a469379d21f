"""The exact bytes an envelope is printed as, and how many that is.

`stdout_bytes` counts what is actually written: the UTF-8 bytes of the JSON
plus its newline. Kept apart from the output budget (`envelope.budget`), which
only a result over budget needs, so that printing a small envelope loads
nothing but `json`.
"""

from __future__ import annotations

import json
import math
from typing import Any


def _sanitize(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("Infinity" if value > 0 else "-Infinity")
    if isinstance(value, dict):
        return {str(k): _sanitize(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_sanitize(v) for v in value]
    return value


def _raw_dumps(obj: Any) -> str:
    try:
        text = json.dumps(
            obj, ensure_ascii=False, separators=(",", ":"), default=str, allow_nan=False
        )
    except ValueError:
        text = json.dumps(_sanitize(obj), ensure_ascii=False, separators=(",", ":"), default=str)
    return text


def encode_line(obj: Any) -> bytes:
    """The exact bytes printed for `obj`: compact strict JSON, UTF-8, newline."""
    text = _raw_dumps(obj)
    try:
        # the newline joins the bytes, not the text: a text with a non-ASCII
        # character holds 2 or 4 bytes per character, a large result's copy
        # costs several times the bytes' one
        return text.encode("utf-8") + b"\n"
    except UnicodeEncodeError:  # lone surrogates: escape them rather than fail
        text = json.dumps(json.loads(text), ensure_ascii=True, separators=(",", ":"))
        return text.encode("utf-8") + b"\n"


def dumps(obj: Any) -> str:
    """Compact, strict JSON (no NaN), encodable as UTF-8."""
    return encode_line(obj)[:-1].decode("utf-8")


def stdout_bytes(text: str) -> int:
    return len(text.encode("utf-8")) + 1
