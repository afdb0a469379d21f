"""The server's log: structlog, one JSON object a line, on stderr only.

On stdio, stdout is the protocol: a stray byte there breaks the host's
parsing, so every line goes to stderr, ours and the libraries' alike (the
SDK's, uvicorn's and asyncio's stdlib records pass through the same renderer).
Each line has `timestamp`, `level`, `logger`, `pid` and `event`, plus the event's
fields (`tool`, `tenant`, `outcome`, `ms`, ...); a defect's traceback is the
`exception` field of its line, never a tool result.

A log holds no secret and no tenant data: no event of ours carries a token,
a question, an answer or an envelope, and a traceback is reduced to the
exception's type and its frames (file, line, function). Neither the frames'
local variables (structlog shows them by default: the bearer token being
checked, the envelope being read) nor the exception's message (which may
quote a value it failed on) are written.
"""

from __future__ import annotations

import logging
import os
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

NAME = "qdsl.mcp"


def _named(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    event.setdefault("logger", NAME)
    return event


def _process(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    # several workers write to one stderr (`prefork`): the pid tells their lines apart
    event.setdefault("pid", os.getpid())
    return event


def _frames_only(exc_info: Any) -> list[dict[str, Any]]:
    """A traceback as structlog's dicts, without locals and without any text the
    exception carried (message, notes, the source line of a syntax error)."""
    stacks: list[dict[str, Any]] = _TRACEBACKS(exc_info)
    return [_scrubbed(stack) for stack in stacks]


def _scrubbed(stack: dict[str, Any]) -> dict[str, Any]:
    kept: dict[str, Any] = {
        "exc_type": stack.get("exc_type"),
        "is_cause": stack.get("is_cause", False),
        "frames": [
            {k: f.get(k) for k in ("filename", "lineno", "name")} for f in stack.get("frames", [])
        ],
    }
    if stack.get("is_group"):
        kept["is_group"] = True
        kept["exceptions"] = [[_scrubbed(s) for s in group] for group in stack["exceptions"]]
    return kept


_TRACEBACKS = structlog.tracebacks.ExceptionDictTransformer(show_locals=False)
_EXCEPTIONS = structlog.processors.ExceptionRenderer(_frames_only)

_SHARED: list[Any] = [
    _process,
    structlog.stdlib.add_log_level,
    structlog.processors.TimeStamper(fmt="iso", utc=True),
]


def configure(level: str = "INFO") -> None:
    """Route qdsl's events and every stdlib logger to stderr, as JSON lines;
    qdsl's at `level` and above, the libraries' at WARNING and above."""
    renderer = structlog.processors.JSONRenderer(ensure_ascii=False)
    structlog.configure(
        processors=[
            _named,
            *_SHARED,
            _EXCEPTIONS,
            renderer,
        ],
        wrapper_class=structlog.make_filtering_bound_logger(logging.getLevelNamesMapping()[level]),
        logger_factory=structlog.WriteLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=True,
    )
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(
        structlog.stdlib.ProcessorFormatter(
            foreign_pre_chain=[structlog.stdlib.add_logger_name, *_SHARED],
            processors=[
                structlog.stdlib.ProcessorFormatter.remove_processors_meta,
                _EXCEPTIONS,
                renderer,
            ],
        )
    )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.captureWarnings(True)  # a library's warning is a line like any other


def logger() -> Any:
    """qdsl's server logger (lazy: it takes the configuration in force when first used)."""
    return structlog.get_logger()
