"""The server's log: structlog, one JSON object a line, on stderr only.

On stdio, stdout is the protocol: a stray byte there breaks the host's
parsing, so every line goes to stderr, ours and the libraries' alike (the
SDK's, uvicorn's and asyncio's stdlib records pass through the same renderer).
Each line has `timestamp`, `level`, `logger` and `event`, plus the event's
fields (`tool`, `tenant`, `outcome`, `ms`, ...); a defect's traceback is the
`exception` field of its line, never a tool result.
"""

from __future__ import annotations

import logging
import sys
from collections.abc import Mapping, MutableMapping
from typing import Any

import structlog

NAME = "qdsl.mcp"


def _named(_logger: Any, _method: str, event: MutableMapping[str, Any]) -> Mapping[str, Any]:
    event.setdefault("logger", NAME)
    return event


_SHARED: list[Any] = [
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
            structlog.processors.dict_tracebacks,
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
                structlog.processors.dict_tracebacks,
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
